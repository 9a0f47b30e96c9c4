#!/bin/bash
# chaos_check on hand-made inputs: a clean run passes; each kind of
# violation (lost, moved, duplicate, double_ack, reorder, gap,
# non_monotonic) is reported with its count; bad input exits 2.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
CHECK="$KAAS_TOP_BUILDDIR/chaos/chaos_check"
cd "$KAAS_SCRATCH" || kaas_fail "cd scratch"
kind() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" out.json; }
printf '0 0 a-1\n0 1 a-2\n1 0 a-3\n' >acks
printf '0 0 a-1\n0 1 a-2\n0 2 b-1\n1 0 a-3\n' >log
"$CHECK" acks log 2 >out.json || kaas_fail "clean run: $(cat out.json)"
[ "$(kind violation_count)" = 0 ] || kaas_fail "clean run has violations"
# lost (a-2 nowhere), moved (a-3 at 1 not 0), duplicate (b-1 twice),
# double_ack (a-5 at 5 and 6, so one of them moved), reorder (a-7 before
# a-6 before a-5), gap (2..2 in p1), non_monotonic (1 after 3 in p1).
printf '0 0 a-1\n0 1 a-2\n1 0 a-3\n0 5 a-5\n0 6 a-5\n0 4 a-6\n0 3 a-7\n' >acks
printf '0 0 a-1\n0 1 x-1\n0 2 b-1\n0 3 a-7\n0 4 a-6\n0 5 a-5\n0 6 b-1\n1 0 y-1\n1 1 a-3\n1 3 z-1\n1 1 a-3\n' >log
"$CHECK" acks log 2 >out.json
[ $? = 1 ] || kaas_fail "violations must exit 1"
for kv in lost=1 moved=2 duplicate=2 double_ack=1 reorder=2 gap=1 non_monotonic=1; do
	got=$(kind "${kv%=*}")
	[ "$got" = "${kv#*=}" ] || kaas_fail "${kv%=*}: got '$got', expected ${kv#*=}: $(cat out.json)"
done
echo '0 zero a-1' >bad
"$CHECK" bad log 2 >/dev/null 2>err
[ $? = 2 ] && grep -q malformed err || kaas_fail "a malformed line must exit 2 naming the problem"
"$CHECK" acks log 0 >/dev/null 2>&1
[ $? = 2 ] || kaas_fail "NPART 0 must exit 2"
echo PASS
