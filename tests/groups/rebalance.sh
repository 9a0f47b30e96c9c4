#!/bin/bash
# Consumer groups with kcat -G on a 6-partition topic: a second and a third
# member join (rebalance), one leaves cleanly (rebalance), one stops
# heartbeating (SIGSTOP) and is expelled after its session timeout.  With
# commits, every message is consumed by exactly one member, none skipped.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
kaasd_start --num-partitions 6
seq 1 6 | sed 's/.*/k&:init-&/' | kc -P -t rt -K: || kaas_fail "create rt"

start_member() { # start_member NAME
	kcat -b "$BROKER" -G rg -u -X auto.offset.reset=earliest -X session.timeout.ms=6000 \
		-X heartbeat.interval.ms=500 -X auto.commit.interval.ms=200 \
		-X reconnect.backoff.max.ms=200 -f '%s\n' rt >"$S/$1.out" 2>"$S/$1.err" &
	eval "PID_$1=$!"
	kaas_on_exit "kill -9 $! 2>/dev/null"
}
# The group's last generation has N members and is stable.
group_at() {
	grep "group rg: generation [0-9]*[ ,]" "$KAASD_LOG" | grep -v "stable$" | tail -n1 | grep -q "with $1 member(s)" &&
		grep "group rg: " "$KAASD_LOG" | tail -n1 | grep -q "stable\$"
}
wait_group() {
	kaas_wait_for 60 group_at "$1" || { tail -n 30 "$KAASD_LOG" >&2; kaas_fail "$2: the group did not settle with $1 member(s)"; }
}
consumed() { cat "$S"/m*.out | wc -l; }
at_least() { [ "$(consumed)" -ge "$1" ]; }
produced=6
committed_sum() {
	local d="$S/data/__cluster/groups/rg" f
	f=$(ls "$d" 2>/dev/null | grep '^offsets-' | sort | tail -n1)
	[ -n "$f" ] || { echo 0; return; }
	grep -o '"offset":[0-9]*' "$d/$f" | awk -F: '{s+=$2} END {print s+0}'
}
committed_all() { [ "$(committed_sum)" = "$produced" ]; }
produce_phase() { # produce_phase TAG
	seq 1 300 | sed "s/.*/k&:$1-&/" | kc -P -t rt -K: || kaas_fail "produce $1"
	produced=$((produced + 300))
	kaas_wait_for 60 at_least $produced || kaas_fail "$1: consumed $(consumed) of $produced"
	# Wait for the auto-commits to cover everything: the committed offsets
	# (the group's newest document on the volume) add up to the messages.
	kaas_wait_for 30 committed_all || kaas_fail "$1: committed $(committed_sum) of $produced"
}
assigned() { # the member's last rebalance gave it partitions
	grep "rebalanced" "$S/$1.err" | tail -n1 | grep -q "assigned: rt"
}

start_member m1
wait_group 1 "first member"
produce_phase p1

start_member m2
wait_group 2 "second member joined"
kaas_wait_for 30 assigned m2 || kaas_fail "m2 got no partitions"
produce_phase p2

start_member m3
wait_group 3 "third member joined"
for m in m1 m2 m3; do kaas_wait_for 30 assigned $m || kaas_fail "$m has no partitions with 3 members"; done
produce_phase p3
# ListGroups + DescribeGroups through librdkafka: stable, 3 members, all assigned.
out=$(timeout 30 "$KAAS_TOP_BUILDDIR/tests/groups/list_groups" "$BROKER" rg) || kaas_fail "list_groups"
[ "$out" = "rg Stable consumer range 3 3" ] || kaas_fail "DescribeGroups said '$out'"
for m in m1 m2 m3; do grep -q "^p3-" "$S/$m.out" || kaas_fail "$m consumed nothing of p3"; done

# A clean leave: its partitions go to the others, nothing skipped.
kill -TERM "$PID_m3"
wait "$PID_m3" 2>/dev/null || true
wait_group 2 "third member left"
produce_phase p4

# A member that stops heartbeating is expelled after its session timeout.
kill -STOP "$PID_m2"
kaas_wait_for 30 grep -q "session timed out" "$KAASD_LOG" || kaas_fail "m2 was not expelled"
wait_group 1 "second member expelled"
produce_phase p5
kill -9 "$PID_m2" 2>/dev/null
grep -q "^p5-" "$S/m2.out" && kaas_fail "the expelled member consumed p5"

dups=$(cat "$S"/m*.out | sort | uniq -d | wc -l)
uniq_n=$(cat "$S"/m*.out | sort -u | wc -l)
[ "$dups" = 0 ] || kaas_fail "$dups messages consumed more than once"
[ "$uniq_n" = "$produced" ] || kaas_fail "$uniq_n distinct messages consumed, $produced produced"
kill -TERM "$PID_m1"
wait "$PID_m1" 2>/dev/null || true
echo "rebalance: $produced messages, each consumed once by one of up to 3 members"
kaasd_stop
echo "PASS"
