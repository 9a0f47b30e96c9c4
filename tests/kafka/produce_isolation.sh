#!/bin/bash
# kaas-test-timeout: 900
# One slow partition delays only its own producers (issue 19).
# On the in-process fault model (a fault+ data URL) every segment write of
# partition slow/0 takes 2 s (a faultfs `delay` rule).  A writer loads that
# partition with pipelined bursts of ~1 MiB batches (its pending bytes reach
# the log's limit: back-pressure) and idempotent batches retried while the
# original is in flight (a duplicate waiting for the original's fsync),
# while a client produces (acks=-1) round robin to 4 partitions of another
# topic, measuring each request.  The same load is first run against
# calm/0, which has no rule.  The fast partitions' p99 with the slow writer
# on slow/0 must stay within 2x (+200 ms of slack for noise) of the p99 of
# the run against calm/0.  Before the produce lanes every partition's
# appends went through one worker thread, which waited for room and for
# the duplicate's fsync: the fast p99 was seconds.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
[ -x "$RAW" ] || kaas_fail "no rawclient at $RAW"
kaas_scratch
vol="$KAAS_SCRATCH/vol"
mkdir -p "$vol"
SECONDS_RUN=${KAAS_ISOLATION_SECONDS:-10}
BURST=${KAAS_ISOLATION_BURST_MIB:-72} # above the log's 64 MiB of pending bytes

printf '{"rules":[{"op":"write","path":"slow/0/*.log","fault":"delay","delay_ms":2000}]}\n' \
	>"$KAAS_SCRATCH/rules.json"
kaasd_start --data "fault+$vol?seed=1&config=$KAAS_SCRATCH/rules.json" --num-partitions 4 \
	--message-max-bytes 2000000
for t in fast calm slow; do
	echo "$t" | kc -P -t "$t" -p 0 -X message.timeout.ms=30000 || kaas_fail "create topic $t"
done

run() { # SLOW_TOPIC -> prints the fast p99 (ms)
	local out
	out=$("$RAW" "$BROKER" isolation "$1" fast 4 "$SECONDS_RUN" "$BURST" 2>"$KAAS_SCRATCH/raw.err") ||
		{ cat "$KAAS_SCRATCH/raw.err" >&2; echo "$out" >&2; tail -n 20 "$KAASD_LOG" >&2; kaas_fail "isolation run against $1 failed"; }
	echo "against $1: $out" >&2
	echo "$out" | sed -n 's/^fast: .* p99=\([0-9]*\) .*/\1/p'
}

base=$(run calm)
slow=$(run slow)
[ -n "$base" ] && [ -n "$slow" ] || kaas_fail "no p99 measured"
grep -q '"fault":"delay"\|delay' "$KAASD_LOG" >/dev/null || true
limit=$((2 * base + 200))
echo "fast partitions' p99: ${base} ms against calm/0, ${slow} ms against slow/0 (limit ${limit} ms)"
[ "$slow" -le "$limit" ] ||
	kaas_fail "a slow partition delayed produce to the others: p99 ${slow} ms > ${limit} ms"
kaasd_stop
echo "PASS"
