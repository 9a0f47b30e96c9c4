#!/bin/bash
# A transient ESTALE on one segment write is not a fence (issue 13, defect 5).
# The in-process fault model (a fault+ data URL) fails one write to the
# partition's segment with ESTALE.  That fails the log; housekeeping must
# re-open it (ESTALE is retryable: substrate.h), so produce succeeds again
# within 10 s and every acknowledged record is read back.  Before the fix
# ESTALE was the log's "fenced" status: the broker never re-opened the log
# and answered NOT_LEADER_OR_FOLLOWER forever while Metadata kept naming it.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
vol="$KAAS_SCRATCH/vol"
mkdir -p "$vol"

# Writes to the segment: "first" (creates the topic), then the next one fails.
printf '{"rules":[{"op":"write","path":"estale/0/*.log","after":1,"times":1,"fault":"ESTALE"}]}\n' \
	>"$KAAS_SCRATCH/rules.json"
kaasd_start --data "fault+$vol?seed=1&config=$KAAS_SCRATCH/rules.json"
echo first | kc -P -t estale -p 0 || kaas_fail "create the topic"

# The write of "a" gets ESTALE; the client retries; within 10 s it must land.
start=$SECONDS
echo a | kc -P -t estale -p 0 -X message.timeout.ms=10000 -X retry.backoff.ms=250 ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "produce after a transient ESTALE did not succeed within 10 s"; }
echo "produce succeeded $((SECONDS - start)) s after the ESTALE"
grep -qi "stale" "$KAASD_LOG" || { cat "$KAASD_LOG" >&2; kaas_fail "the ESTALE rule never fired"; }
echo b | kc -P -t estale -p 0 -X message.timeout.ms=10000 ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "produce of the next record"; }

kc -C -t estale -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/got.txt"
printf 'first\na\nb\n' | cmp -s - "$KAAS_SCRATCH/got.txt" ||
	{ cat "$KAAS_SCRATCH/got.txt" >&2; kaas_fail "estale/0 does not hold first a b exactly once"; }
grep -q "partition 0: re-opened" "$KAASD_LOG" || kaas_fail "no re-open logged"
kaasd_stop
echo "PASS"
