#!/bin/bash
# A leader that cannot renew its heartbeat for a moment (EIO on its broker
# document for 0.8 s, over half the liveness timeout) fences itself and
# answers produce NOT_LEADER_OR_FOLLOWER until a round succeeds again.
# librdkafka's non-idempotent producer (one request in flight) retries such
# a batch after a backoff, and the batches queued behind it may go first:
# its acknowledgements then come back out of sequence order (what
# failover_faultfs.sh saw as "reordered" under load: the producer's order,
# not the broker's).  Checked, with each producer under the same stalls:
#   non-idempotent: every acknowledged message is at its acknowledged
#     offset, offsets are served in order, nothing acknowledged is lost
#     (check_acked_offsets); how many it sent late is printed;
#   idempotent: the same, and the log is the producer's order exactly once
#     (check_acked exactly-once).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
ffs_start mb 3 --seed 12
MB_HOSTS_DIR=$M
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
: "${SFO_STALLS:=3}"
for id in 0 1 2; do mb_start $id; done

# run TOPIC [--idempotent]: produce under SFO_STALLS heartbeat stalls of
# the leader, then consume "OFFSET VALUE" lines into $KAAS_SCRATCH/TOPIC.txt.
run() {
	local topic=$1 idem=${2:-} acks=$KAAS_SCRATCH/$1.acks leader i
	"$MBCLIENT" create "$(mb_bootstrap)" "$topic" 1 || kaas_fail "create $topic"
	mb_wait_led 20 "$topic" 1 0 0 1 2 || kaas_fail "$topic/0 has no leader"
	: >"$acks"
	MBCLIENT_DEBUG=msg "$MBCLIENT" produce $idem "$(mb_bootstrap)" "$topic" 1000000 "$acks" 1000 \
		2>"$KAAS_SCRATCH/$topic.producer.log" &
	local prod=$!
	kaas_on_exit "kill -9 $prod"
	mb_wait_acks 60 "$acks" 1000 || kaas_fail "$topic: producer stalled at $(mb_acked "$acks")"
	for i in $(seq 1 "$SFO_STALLS"); do
		leader=$(mb_leader "$topic" 0)
		[ -n "$leader" ] && [ "$leader" -ge 0 ] || kaas_fail "$topic/0: no leader"
		ffs_ctl set "{\"op\":\"*\",\"path\":\"__cluster/brokers/*\",\"host\":$leader,\"prob\":1,\"times\":-1,\"fault\":\"EIO\"}" >/dev/null ||
			kaas_fail "faultfs rule"
		sleep 0.8
		ffs_ctl clear >/dev/null || kaas_fail "faultfs clear"
		mb_wait_acks 60 "$acks" $(( $(mb_acked "$acks") + 1000 )) ||
			kaas_fail "$topic: stall $i: producer stalled at $(mb_acked "$acks")"
	done
	kill -TERM $prod
	wait $prod || { tail "$KAAS_SCRATCH/$topic.producer.log" >&2; kaas_fail "$topic: not every message acknowledged"; }
	timeout 60 kcat -b "$(mb_bootstrap)" -C -t "$topic" -p 0 -o beginning -e -f '%o %s\n' \
		>"$KAAS_SCRATCH/$topic.txt" 2>/dev/null || kaas_fail "$topic: consume"
	# librdkafka's debug line for each batch answered with an error: the
	# stalls must have made some (else this test tested nothing).
	local errs
	errs=$(grep -c "encountered error" "$KAAS_SCRATCH/$topic.producer.log")
	echo "$topic: $errs batches answered with an error:"
	grep -o "encountered error: [^(]*" "$KAAS_SCRATCH/$topic.producer.log" | sort | uniq -c
	[ "$errs" -gt 0 ] || kaas_fail "$topic: the heartbeat stalls made no produce fail"
}

run plain
check_acked_offsets "$KAAS_SCRATCH/plain.acks" "$KAAS_SCRATCH/plain.txt" ||
	kaas_fail "plain: an acknowledged message is not at its acknowledged offset"
run idem --idempotent
check_acked_offsets "$KAAS_SCRATCH/idem.acks" "$KAAS_SCRATCH/idem.txt" ||
	kaas_fail "idem: an acknowledged message is not at its acknowledged offset"
cut -d' ' -f2 "$KAAS_SCRATCH/idem.txt" >"$KAAS_SCRATCH/idem.values"
check_acked "$KAAS_SCRATCH/idem.acks" "$KAAS_SCRATCH/idem.values" exactly-once ||
	kaas_fail "idem: the idempotent producer's messages are not in order exactly once"
echo PASS
