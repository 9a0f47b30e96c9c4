#!/bin/bash
# Bad input closes only the offending connection; a corrupt batch leaves no
# trace; afterwards a normal kcat round trip still works.  Also: pipelined
# requests answered in order, and Fetch long-poll timing bounds.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
kaasd_start
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"

# A connection kept open throughout proves the others' closes are local.
exec 3<>"/dev/tcp/127.0.0.1/$KAASD_PORT"

for m in garbage truncated negative huge unknown-api; do
	timeout 30 "$RAW" "$BROKER" "$m" || kaas_fail "mode $m"
done
for i in $(seq 1 20); do timeout 30 "$RAW" "$BROKER" garbage || kaas_fail "garbage round $i"; done
timeout 30 "$RAW" "$BROKER" corrupt-crc corrupt || kaas_fail "corrupt CRC not rejected"
timeout 30 "$RAW" "$BROKER" corrupt-payload corrupt || kaas_fail "corrupt payload not rejected"
timeout 30 "$RAW" "$BROKER" pipeline || kaas_fail "pipeline"

# The corrupt batches left no trace: nothing to read, empty segments.
n=$(kc -C -t corrupt -e -o beginning 2>/dev/null | wc -l)
[ "$n" = 0 ] || kaas_fail "corrupt topic has $n message(s)"
for f in "$KAAS_SCRATCH"/data/corrupt/0/*.log; do
	[ -e "$f" ] || continue
	[ ! -s "$f" ] || kaas_fail "segment $f is not empty after rejected batches"
done

# A good hand-made batch is accepted; long poll at its end waits max_wait.
timeout 30 "$RAW" "$BROKER" good-batch good || kaas_fail "good batch rejected"
timeout 30 "$RAW" "$BROKER" longpoll good 1 || kaas_fail "long poll bounds"
timeout 30 "$RAW" "$BROKER" out-of-range good || kaas_fail "fetch past the end"
# Data arriving on another topic does not end the wait early.
(for i in $(seq 1 20); do echo "x$i" | kc -P -t other; sleep 0.03; done) &
other_pid=$!
timeout 30 "$RAW" "$BROKER" longpoll good 1 || kaas_fail "long poll ended by another topic's data"
wait "$other_pid"
out=$(kc -C -t good -e -o beginning 2>/dev/null)
[ "$out" = value ] || kaas_fail "good batch read back as '$out'"

# A long poll is answered as soon as data arrives.
start=$(date +%s%3N)
(sleep 0.3; echo late | kc -P -t good) &
late_pid=$!
out=$(kc -C -t good -o 1 -c 1 -X fetch.wait.max.ms=5000 2>/dev/null)
end=$(date +%s%3N)
wait "$late_pid"
[ "$out" = late ] || kaas_fail "long poll read '$out'"
[ $((end - start)) -lt 4500 ] || kaas_fail "long poll not woken by new data ($((end - start)) ms)"

# Normal service for everyone else.
echo "k:still-here" | kc -P -t after -K: || kaas_fail "produce after bad input"
out=$(kc -C -t after -e -o beginning -f '%k=%s' 2>/dev/null)
[ "$out" = "k=still-here" ] || kaas_fail "round trip after bad input read '$out'"
kill -0 "$KAASD_PID" || kaas_fail "kaasd died"
exec 3>&-
kaasd_stop
echo PASS
