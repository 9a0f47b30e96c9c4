#!/bin/bash
# Issue 13, defect 7 (second half): assignment.json overwritten with garbage
# on a running 3-broker cluster.  The controller must report it and keep the
# last good state — never plan from an empty one: producing to every
# partition still works, and no slot's leader epoch ever goes down.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" ca 6 || kaas_fail "create topic"
mb_wait_led 20 ca 6 0 0 1 2 || kaas_fail "ca: not every partition led"
asg="$MB_DATA/__cluster/assignment.json"
# One line per slot: "topic partition epoch" (the body is compact JSON).
slots() {
	grep -o '"topic":"[^"]*","partition":[0-9]*,"leader":-\{0,1\}[0-9]*,"leader_epoch":[0-9]*' "$asg" 2>/dev/null |
		sed 's/"topic":"\([^"]*\)","partition":\([0-9]*\),"leader":[-0-9]*,"leader_epoch":\([0-9]*\)/\1 \2 \3/'
}
# Some epochs above 1 first: a restarted broker's slots get new epochs.
victim=$(mb_leader ca 0)
mb_kill "$victim"
mb_start "$victim"
kaas_wait_for 30 bash -c "grep -q '\"leader_epoch\":[2-9]' '$asg'" || kaas_fail "no epoch above 1 after a restart"
mb_wait_led 30 ca 6 0 0 1 2 || kaas_fail "ca: not every partition led after the restart"
for p in 0 1 2 3 4 5; do
	echo "before-$p" | timeout 30 kcat -b "$(mb_bootstrap)" -P -t ca -p $p -X acks=all ||
		kaas_fail "produce to ca/$p before the damage"
done
slots >"$KAAS_SCRATCH/before.txt"
[ -s "$KAAS_SCRATCH/before.txt" ] || kaas_fail "could not read the slots of $asg"
echo "before: $(wc -l <"$KAAS_SCRATCH/before.txt") slots, highest epoch $(awk '$3 > m { m = $3 } END { print m }' "$KAAS_SCRATCH/before.txt")"

# The damage (an operator's editor, a bad restore): garbage in place.
head -c 300 /dev/urandom | base64 >"$asg"
# Watch the document for a few seconds: every epoch that shows up must be
# at least the one before.
floor="$KAAS_SCRATCH/before.txt"
for i in $(seq 1 40); do
	slots >"$KAAS_SCRATCH/now.txt"
	down=$(awk 'NR == FNR { e[$1 " " $2] = $3; next } ($1 " " $2) in e && $3 < e[$1 " " $2] { print $1 "/" $2 ": " e[$1 " " $2] " -> " $3 }' \
		"$floor" "$KAAS_SCRATCH/now.txt")
	[ -z "$down" ] || { grep -h "cluster:" "$KAAS_SCRATCH"/kaasd.*.log | tail -5 >&2; kaas_fail "leader epoch went down: $down"; }
	sleep 0.1
done
grep -h "assignment.json" "$KAAS_SCRATCH"/kaasd.*.log | head -3
grep -qh "assignment.json.*corrupt\|assignment.json.*unreadable" "$KAAS_SCRATCH"/kaasd.*.log ||
	kaas_fail "the damage was not reported"
for p in 0 1 2 3 4 5; do
	echo "after-$p" | timeout 30 kcat -b "$(mb_bootstrap)" -P -t ca -p $p -X acks=all ||
		kaas_fail "produce to ca/$p after the damage"
done
for p in 0 1 2 3 4 5; do
	got=$(timeout 30 kcat -b "$(mb_bootstrap)" -C -t ca -p $p -o beginning -e -f '%s\n' 2>/dev/null | tr '\n' ' ')
	[ "$got" = "before-$p after-$p " ] || kaas_fail "ca/$p holds '$got'"
done
echo PASS
