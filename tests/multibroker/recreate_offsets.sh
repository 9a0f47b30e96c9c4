#!/bin/bash
# Issue 13, defect 6: committed offsets belong to a topic incarnation, not to
# its name.  A group consumes and commits the first incarnation of a topic;
# the topic is deleted and re-created, and the same group must read the new
# incarnation from its first record (before the fix it resumed at the old
# incarnation's committed offset and silently skipped the first records).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
S=$KAAS_SCRATCH
mb_start 0
B=127.0.0.1:${MB_PORT[0]}

consume() { # OUTFILE N: run the group's consumer until N lines, then stop it
	: >"$1"
	"$MBCLIENT" consume "$B" rog ro "$1" 2>"$S/consumer.log" &
	local cons=$!
	kaas_on_exit "kill -9 $cons"
	kaas_wait_for 60 bash -c "[ \$(wc -l <'$1') -ge $2 ]" ||
		{ tail -n 30 "$S/consumer.log" >&2; kaas_fail "consumer stalled at $(wc -l <"$1") of $2"; }
	kill -TERM $cons
	wait $cons || true
}

"$MBCLIENT" create "$B" ro 1 2>"$S/admin.log" || { cat "$S/admin.log" >&2; kaas_fail "create 1"; }
mb_wait_led 20 ro 1 0 0 || kaas_fail "incarnation 1 not led"
seq 1 5 | sed 's/^/old-/' | timeout 60 kcat -b "$B" -P -t ro -p 0 -X acks=all ||
	kaas_fail "produce to incarnation 1"
consume "$S/got1.txt" 5
head -n1 "$S/got1.txt" | grep -qx '0 old-1' || kaas_fail "incarnation 1: first line $(head -n1 "$S/got1.txt")"

"$MBCLIENT" delete "$B" ro 2>"$S/admin.log" || { cat "$S/admin.log" >&2; kaas_fail "delete"; }
kaas_wait_for 20 bash -c "! timeout 10 kcat -b $B -L 2>/dev/null | grep -q 'topic \"ro\"'" ||
	kaas_fail "the deleted topic is still listed"
"$MBCLIENT" create "$B" ro 1 2>"$S/admin.log" || { cat "$S/admin.log" >&2; kaas_fail "create 2"; }
mb_wait_led 20 ro 1 0 0 || kaas_fail "incarnation 2 not led"
seq 1 8 | sed 's/^/new-/' | timeout 60 kcat -b "$B" -P -t ro -p 0 -X acks=all ||
	kaas_fail "produce to incarnation 2"
consume "$S/got2.txt" 3
first=$(head -n1 "$S/got2.txt")
[ "$first" = "0 new-1" ] ||
	kaas_fail "incarnation 2: the group resumed at '$first', not at its first record '0 new-1'"
echo "after delete + re-create the group read the new incarnation from '$first'"
echo PASS
