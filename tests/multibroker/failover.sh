#!/bin/bash
# Three brokers on one shared directory; kill -9 the leader of a partition
# under a running producer (twice, restarting the killed broker in between):
# a survivor serves the partition again, every acknowledged message is read
# back at the offset it was acknowledged with, offsets in order, nothing
# acknowledged lost (check_acked_offsets); the failover time (kill to the
# first acknowledgement after it) is printed.  The producer is not
# idempotent: librdkafka may re-send a batch answered with a retriable
# error (a fenced append, a self-fenced leader under load) after batches
# queued behind it, so its sequence order is the producer's and is only
# reported ("sent late"), as duplicates are.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
if [ "${MB_ON_FAULTFS:-}" = 1 ]; then
	# Each broker on its own faultfs host view of one lower store.
	. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
	ffs_require_fuse
	ffs_start mb 3 --seed 8
	MB_HOSTS_DIR=$M
fi
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" fo 1 || kaas_fail "create topic"
mb_wait_led 20 fo 1 0 0 1 2 || kaas_fail "fo/0 has no leader"

ACKS="$KAAS_SCRATCH/acks.txt"
: >"$ACKS"
"$MBCLIENT" produce "$(mb_bootstrap)" fo 1000000 "$ACKS" 1000 2>"$KAAS_SCRATCH/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"

for round in 1 2; do
	mb_wait_acks 60 "$ACKS" $(( $(mb_acked "$ACKS") + 3000 )) ||
		kaas_fail "round $round: producer stalled at $(mb_acked "$ACKS") acknowledgements"
	before=$(mb_acked "$ACKS")
	mb_kill_leader fo "$ACKS"
	leader=$MB_KILLED
	survivors=()
	for id in "${!MB_PID[@]}"; do survivors+=("$id"); done
	now=$(mb_leader fo 0 "${survivors[0]}")
	echo "round $round: killed leader $leader after $before acks; new leader $now; failover $MB_FAILOVER_MS ms"
	[ "$now" != "$leader" ] || kaas_fail "round $round: metadata still names the dead broker"
	mb_start "$leader"
done
mb_wait_acks 60 "$ACKS" $(( $(mb_acked "$ACKS") + 3000 )) || kaas_fail "producer stalled after the restarts"
kill -TERM $PROD
wait $PROD || { cat "$KAAS_SCRATCH/producer.log" >&2; kaas_fail "producer: not every message acknowledged"; }

timeout 60 kcat -b "$(mb_bootstrap)" -C -t fo -p 0 -o beginning -e -f '%o %s\n' \
	>"$KAAS_SCRATCH/consumed.txt" 2>/dev/null || kaas_fail "consume"
check_acked_offsets "$ACKS" "$KAAS_SCRATCH/consumed.txt" ||
	kaas_fail "acknowledged messages lost, moved or served out of offset order"
echo PASS
