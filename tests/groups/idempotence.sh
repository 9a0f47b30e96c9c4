#!/bin/bash
# The idempotent producer: the sequence rules answer as Kafka's do; with the
# broker dropping every 15th produce response, a librdkafka producer with
# enable.idempotence=true leaves every message in the log exactly once and
# in order; producer ids stay unique across 20 broker restarts (clean and
# SIGKILL).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/groups/idem_raw"
PROD="$KAAS_TOP_BUILDDIR/tests/groups/idem_producer"
kaas_scratch

# 1. The rules, one request at a time, and across restarts.
kaasd_start
echo first | kc -P -t seqt -p 0 || kaas_fail "create seqt"
timeout 60 "$RAW" "$BROKER" seq seqt || kaas_fail "sequence rules"
# The window survives a clean restart and a SIGKILL (snapshot + tail).
pre=$(timeout 30 "$RAW" "$BROKER" pre seqt) || kaas_fail "pre-restart batch"
kaasd_stop
kaasd_start
timeout 30 "$RAW" "$BROKER" post seqt $pre || kaas_fail "retry after a clean restart"
pre=$(timeout 30 "$RAW" "$BROKER" pre seqt) || kaas_fail "pre-SIGKILL batch"
kaasd_kill
kaasd_start
timeout 30 "$RAW" "$BROKER" post seqt $pre || kaas_fail "retry after SIGKILL"
kaasd_stop

# 2. Dropped responses: the client retries, nothing is written twice.
export KAAS_TEST_DROP_PRODUCE_RESPONSE=15
kaasd_start
unset KAAS_TEST_DROP_PRODUCE_RESPONSE
echo first | kc -P -t idem -p 0 || kaas_fail "create idem"
N=4000
timeout 120 "$PROD" "$BROKER" idem $N || { tail -n 20 "$KAASD_LOG" >&2; kaas_fail "idempotent producer"; }
drops=$(grep -c "dropping the response to a produce request" "$KAASD_LOG")
[ "$drops" -ge 3 ] || kaas_fail "the knob dropped only $drops responses"
retries=$(grep -c "is a retry of offset" "$KAASD_LOG")
[ "$retries" -ge 1 ] || kaas_fail "no retried batch was answered from the log"
{ echo first; seq 0 $((N - 1)); } >"$KAAS_SCRATCH/want.txt"
kc -C -t idem -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/got.txt"
cmp -s "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/got.txt" ||
	kaas_fail "log differs from what was sent: $(wc -l <"$KAAS_SCRATCH/got.txt") lines, $(sort "$KAAS_SCRATCH/got.txt" | uniq -d | wc -l) duplicated"
echo "idempotent producer: $N messages exactly once in order, $drops responses dropped, $retries retried batches answered from the log"
kaasd_stop

# 3. Producer ids across 20 restarts, every other one a SIGKILL.
for i in $(seq 1 20); do
	kaasd_start
	timeout 30 "$RAW" "$BROKER" pid >>"$KAAS_SCRATCH/pids.txt" || kaas_fail "InitProducerId (start $i)"
	timeout 30 "$RAW" "$BROKER" pid >>"$KAAS_SCRATCH/pids.txt" || kaas_fail "InitProducerId (start $i)"
	if [ $((i % 2)) = 0 ]; then kaasd_kill; else kaasd_stop; fi
done
n=$(sort -u "$KAAS_SCRATCH/pids.txt" | wc -l)
[ "$n" = 40 ] || kaas_fail "40 producer ids handed out, $n distinct"
echo "PASS"
