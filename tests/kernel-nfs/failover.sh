#!/bin/bash
# Three brokers, each on its own kernel NFS mount of one export
# (scripts/nfs-lab: three NFS clients with their own caches), an idempotent
# producer (acks=all, five in flight): kill -9 the partition's leader under
# load, a survivor on another mount serves the partition (KN_ROUNDS times,
# default 1, the killed broker coming back between rounds); every
# acknowledged message is read back exactly once, in order.  The failover
# time (kill to the first acknowledgement by another broker) is printed.
# kaas-test-timeout: 900
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kernel-nfs/kn-lib.sh"
kn_in_lab --hosts 3 --timeout 300

kaas_scratch
kn_brokers_on_mounts
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
S=$KAAS_SCRATCH
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" kf 1 || kaas_fail "create topic"
mb_wait_led 60 kf 1 0 0 1 2 || kaas_fail "kf/0 has no leader"

ACKS=$S/acks.txt
: >"$ACKS"
"$MBCLIENT" produce --idempotent "$(mb_bootstrap)" kf 1000000 "$ACKS" 2000 2>"$S/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"

rounds=${KN_ROUNDS:-1}
for round in $(seq 1 "$rounds"); do
	mb_wait_acks 120 "$ACKS" $(( $(mb_acked "$ACKS") + 1000 )) ||
		kaas_fail "round $round: producer stalled at $(mb_acked "$ACKS") acknowledgements"
	before=$(mb_acked "$ACKS")
	mb_kill_leader kf "$ACKS"
	survivors=("${!MB_PID[@]}")
	now=$(mb_leader kf 0 "${survivors[0]}")
	echo "round $round: killed leader $MB_KILLED (data on host$MB_KILLED) after $before acks; new leader $now; failover $MB_FAILOVER_MS ms"
	[ "$now" != "$MB_KILLED" ] || kaas_fail "round $round: metadata still names the dead broker"
	[ "$round" = "$rounds" ] || mb_start "$MB_KILLED"
done
mb_wait_acks 120 "$ACKS" $(( $(mb_acked "$ACKS") + 500 )) || kaas_fail "producer stalled after the failover"
kill -TERM $PROD
wait $PROD || { tail -n 20 "$S/producer.log" >&2; kaas_fail "producer: not every message acknowledged"; }

timeout 120 kcat -b "$(mb_bootstrap)" -C -t kf -p 0 -o beginning -e -f '%s\n' \
	>"$S/consumed.txt" 2>/dev/null || kaas_fail "consume"
check_acked "$ACKS" "$S/consumed.txt" exactly-once || kaas_fail "acknowledged messages lost, duplicated or reordered"
echo PASS
