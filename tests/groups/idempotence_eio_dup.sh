#!/bin/bash
# An idempotent batch whose write is slow and whose fsync then fails (EIO),
# retried on a second connection while it is still in flight (a client
# whose request timed out): the retry waits for its original
# (kaas_log_when_durable) and must be answered as the original is,
# REQUEST_TIMED_OUT (possibly persisted) -- not KAFKA_STORAGE_ERROR ("not
# persisted": librdkafka may bump its epoch and renumber, and the copy the
# re-opened log recovers is then duplicated).  Before the produce lanes the
# retry's kaas_log_wait failure was answered KAAS_EINDOUBT.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/groups/idem_raw"
kaas_scratch
vol="$KAAS_SCRATCH/vol"
mkdir -p "$vol"

# The writes of TOPIC/0's segment: "first", seq 0, then seq 1 (delayed 2 s);
# its fsyncs: creation, "first", seq 0, then seq 1 (fails, once).
printf '{"rules":[{"op":"write","path":"eiod/0/*.log","after":2,"times":1,"fault":"delay","delay_ms":2000},{"op":"fsync","path":"eiod/0/*.log","after":3,"times":1,"fault":"EIO"}]}\n' >"$KAAS_SCRATCH/d.json"
kaasd_start --data "fault+$vol?seed=1&config=$KAAS_SCRATCH/d.json"
echo first | kc -P -t eiod -p 0 || kaas_fail "create eiod"
pre=$(timeout 60 "$RAW" "$BROKER" eio-dup eiod) ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "answers to seq 1 and its in-flight retry"; }
grep -q "is a retry of offset" "$KAASD_LOG" || kaas_fail "the retry did not find its original in flight"
timeout 60 "$RAW" "$BROKER" eio-post eiod $pre ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "retry after the re-open"; }
kaasd_stop
echo "PASS"
