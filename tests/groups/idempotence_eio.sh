#!/bin/bash
# An idempotent batch whose fsync fails (EIO from the in-process fault model,
# a fault+ data URL) stays exactly once in the log: the broker answers it
# REQUEST_TIMED_OUT (possibly persisted, so the client retries the very
# batch), answers the next batch to the failed log KAFKA_STORAGE_ERROR (not
# OUT_OF_ORDER_SEQUENCE_NUMBER, which makes librdkafka renumber its messages
# under a new epoch), and once the log is re-opened — by housekeeping in the
# same process, or by a restart after SIGKILL — the retry is answered with the
# offset of the copy recovery kept.  (Chaos issue 9: duplicates after EIO.)
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/groups/idem_raw"
kaas_scratch
vol="$KAAS_SCRATCH/vol"
mkdir -p "$vol"

# The fsyncs of a topic's first segment: its creation, the "first" record
# that creates the topic, seq 0, then seq 1 -- the fourth fails, once.
rules() {
	printf '{"rules":[{"op":"fsync","path":"%s/0/*.log","after":3,"times":1,"fault":"EIO"}]}\n' "$1"
}

# Read TOPIC/0 and check it holds "first s0 s1 s2", each once.
check_log() {
	kc -C -t "$1" -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/$1.txt"
	printf 'first\ns0\ns1\ns2\n' | cmp -s - "$KAAS_SCRATCH/$1.txt" ||
		{ cat "$KAAS_SCRATCH/$1.txt" >&2; kaas_fail "$1/0 does not hold first s0 s1 s2 exactly once: $2"; }
}

# 1. Re-opened by housekeeping in the same process.
rules eioa >"$KAAS_SCRATCH/a.json"
kaasd_start --data "fault+$vol?seed=1&config=$KAAS_SCRATCH/a.json"
echo first | kc -P -t eioa -p 0 || kaas_fail "create eioa"
pre=$(timeout 60 "$RAW" "$BROKER" eio-pre eioa) ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "answers around the failed fsync"; }
timeout 60 "$RAW" "$BROKER" eio-post eioa $pre ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "retry after the re-open"; }
grep -q "partition 0: re-opened" "$KAASD_LOG" || kaas_fail "no re-open logged"
grep -q "is a retry of offset" "$KAASD_LOG" || kaas_fail "the retry was not answered from the log"
check_log eioa "re-open in the same process"
kaasd_stop

# 2. The broker dies with the log failed; the next one recovers the tail.
rules eiob >"$KAAS_SCRATCH/b.json"
kaasd_start --data "fault+$vol?seed=1&config=$KAAS_SCRATCH/b.json"
echo first | kc -P -t eiob -p 0 || kaas_fail "create eiob"
pre=$(timeout 60 "$RAW" "$BROKER" eio-pre eiob) ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "answers around the failed fsync (restart case)"; }
kaasd_kill
kaasd_start --data "fault+$vol?seed=1"
timeout 60 "$RAW" "$BROKER" eio-post eiob $pre ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "retry after SIGKILL and restart"; }
check_log eiob "recovered by the next broker"
check_log eioa "after the restart"
kaasd_stop
echo "PASS"
