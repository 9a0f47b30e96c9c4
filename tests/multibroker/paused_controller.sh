#!/bin/bash
# Issue 13, defect 1: a controller that passed its fence check stops
# (KAAS_PAUSE_AT=controller.before-assignment-rename: SIGSTOP) before its
# rename; the other brokers declare it dead, one of them becomes controller,
# a topic is created and written.  Then the paused controller's stale
# assignment lands over the new one.  No slot may ever be handed to two
# brokers under one leader epoch (watched in assignment.json all along and
# in the brokers' "leading with epoch" lines), and every acknowledged record
# is read back.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
asg="$MB_DATA/__cluster/assignment.json"
mkdir -p "$MB_DATA"
# "topic partition epoch leader" per slot (the body is compact JSON).
slots() {
	grep -o '"topic":"[^"]*","partition":[0-9]*,"leader":-\{0,1\}[0-9]*,"leader_epoch":[0-9]*' "$asg" 2>/dev/null |
		sed 's/"topic":"\([^"]*\)","partition":\([0-9]*\),"leader":\([-0-9]*\),"leader_epoch":\([0-9]*\)/\1 \2 \4 \3/'
}
# Broker 0 alone: it claims the controller and stops before its rename.
log0="$KAAS_SCRATCH/kaasd.0.1.log"
KAAS_PAUSE_AT=controller.before-assignment-rename "$KAASD" --data "$MB_DATA" --broker-id 0 \
	--listen 127.0.0.1:0 --heartbeat-ms "$MB_HEARTBEAT_MS" --liveness-timeout-ms "$MB_LIVENESS_MS" \
	--log-level info 2>"$log0" &
MB_PID[0]=$!
kaas_on_exit "kill -9 ${MB_PID[0]}"
kaas_wait_for 20 grep -q "kaas-step: pause at controller.before-assignment-rename" "$log0" ||
	{ cat "$log0" >&2; kaas_fail "broker 0 did not reach the step"; }
# Watch assignment.json from now on.
( while :; do slots; sleep 0.03; done >"$KAAS_SCRATCH/samples.txt" ) &
SAMPLER=$!
kaas_on_exit "kill $SAMPLER"
mb_start 1
mb_start 2
"$MBCLIENT" create "$(mb_bootstrap 1 2)" pc 6 || kaas_fail "create topic"
mb_wait_led 20 pc 6 1 1 2 || kaas_fail "pc: not every partition led by broker 1 or 2"
for p in 0 1 2 3 4 5; do
	echo "before-$p" | timeout 30 kcat -b "$(mb_bootstrap 1 2)" -P -t pc -p $p -X acks=all ||
		kaas_fail "produce to pc/$p"
done
! grep -q "listening on" "$log0" || kaas_fail "broker 0 did not stay stopped"
# Broker 0 resumes: its stale rename lands, and it joins as a broker.
kill -CONT "${MB_PID[0]}"
kaas_wait_for 30 grep -q "listening on" "$log0" || { cat "$log0" >&2; kaas_fail "broker 0 never came back"; }
MB_PORT[0]=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log0" | head -n1)
sleep 3 # a few controller rounds after the stale write
kill "$SAMPLER"
grep -h "assignment.json\|standing down\|raised above" "$KAAS_SCRATCH"/kaasd.*.log | head -5
conflict=$(awk '$4 != -1 { k = $1 "/" $2 " epoch " $3; if ((k in l) && l[k] != $4) { print k ": brokers " l[k] " and " $4; exit } l[k] = $4 }' \
	"$KAAS_SCRATCH/samples.txt")
[ -z "$conflict" ] || kaas_fail "one slot, one epoch, two leaders in assignment.json: $conflict"
# The brokers' own account: who led which partition at which epoch.
led=$(for id in 0 1 2; do
	sed -n "s/.*topic pc partition \([0-9]*\): leading with epoch \([0-9]*\).*/\1 \2 $id/p" "$KAAS_SCRATCH"/kaasd.$id.*.log
done | awk '{ k = $1 " " $2; if ((k in b) && b[k] != $3) { print "pc/" $1 " epoch " $2 ": brokers " b[k] " and " $3; exit } b[k] = $3 }')
[ -z "$led" ] || kaas_fail "two brokers led one partition at one epoch: $led"
mb_wait_led 30 pc 6 1 0 1 2 || kaas_fail "pc: not every partition led after the stale write"
for p in 0 1 2 3 4 5; do
	echo "after-$p" | timeout 30 kcat -b "$(mb_bootstrap)" -P -t pc -p $p -X acks=all ||
		kaas_fail "produce to pc/$p after the stale write"
done
for p in 0 1 2 3 4 5; do
	got=$(timeout 30 kcat -b "$(mb_bootstrap)" -C -t pc -p $p -o beginning -e -f '%s\n' 2>/dev/null | tr '\n' ' ')
	[ "$got" = "before-$p after-$p " ] || kaas_fail "pc/$p holds '$got'"
done
echo PASS
