#!/bin/bash
# Acknowledged messages survive a clean restart (SIGTERM) and a SIGKILL.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
kaasd_start

seq 1 20000 | sed 's/^/k:/' >"$KAAS_SCRATCH/a.txt"
kc -P -t keep -K: -X acks=all -l "$KAAS_SCRATCH/a.txt" || kaas_fail "produce before SIGTERM"
kaasd_stop
grep -q "stopped cleanly" "$KAASD_LOG" || kaas_fail "no clean stop logged"

kaasd_start
n=$(kc -C -t keep -e -o beginning 2>/dev/null | wc -l)
[ "$n" = 20000 ] || kaas_fail "after SIGTERM restart: $n of 20000"

# kcat exits 0 only after every message was acknowledged (acks=all).
seq 20001 30000 | sed 's/^/k:/' >"$KAAS_SCRATCH/b.txt"
kc -P -t keep -K: -X acks=all -l "$KAAS_SCRATCH/b.txt" || kaas_fail "produce before SIGKILL"
kaasd_kill

kaasd_start
kc -C -t keep -e -o beginning -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/out.txt"
seq 1 30000 >"$KAAS_SCRATCH/want.txt"
cmp -s "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/out.txt" || kaas_fail "after SIGKILL: $(wc -l <"$KAAS_SCRATCH/out.txt") of 30000 read back in order"

# And the partition still takes writes after recovery.
echo "k:after" | kc -P -t keep -K: || kaas_fail "produce after recovery"
out=$(kc -C -t keep -o -1 -c 1 -f '%s %o\n' 2>/dev/null)
[ "$out" = "after 30000" ] || kaas_fail "after recovery read '$out'"
kaasd_stop
echo PASS
