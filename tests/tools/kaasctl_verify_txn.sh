#!/usr/bin/env bash
# kaasctl verify after an aborted transaction (issue 33): the partition's
# aborted-transaction index, aborted-txns.json, is kaas's own name (no
# "unknown" warning, the volume is clean); a torn one is a warning naming
# it (derived data, rebuilt by the next leader's open), not an error.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-lib.sh"

kaasd_start --num-partitions 2
for step in "commit c1" "abort a1"; do
	set -- $step
	out=$(txn_client "$BROKER" tx1 "$1" ta tb "$2" g1) ||
		{ tail -n 30 "$KAASD_LOG" >&2; kaas_fail "$1 transaction $2 failed: $out"; }
	[ "$out" = ok ] || kaas_fail "$1 transaction $2: $out"
done
kaasd_stop # the clean stop writes the producer snapshot and the index
D="$KAAS_SCRATCH/data"
idx=$(cd "$D" && ls ta/*/aborted-txns.json tb/*/aborted-txns.json 2>/dev/null | head -n1)
[ -n "$idx" ] || { find "$D" -name '*.json' >&2; kaas_fail "no aborted-txns.json after an abort"; }

kctl_expect 0 --data "$D" verify
if grep -q 'unknown' <<<"$KCTL_OUT"; then
	printf '%s\n' "$KCTL_OUT" >&2
	kaas_fail "verify calls kaas's own aborted-txns.json unknown"
fi
kctl_has '^clean: 0 error\(s\), 0 warning'

# A torn index: a warning naming it, exit 0 (the next open rebuilds it).
printf '{"kaas":"kaas-aborted-txns","version":1,"length":999,"crc32c":"00000000"}\n{' >"$D/$idx"
kctl_expect 0 --data "$D" verify
kctl_has "^warning +unreadable-index +$D/$idx\$"
echo "verify after an aborted transaction: clean; a torn index is a warning"
