#!/bin/bash
# chaos_check on hand-made inputs: a clean run passes; each kind of
# violation (lost, moved, duplicate, double_ack, reorder, gap,
# non_monotonic, stale_incarnation, group_skipped, commit_backwards,
# hwm_backwards, leftover, corrupt_document) is reported with its count;
# bad input exits 2.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
CHECK="$KAAS_TOP_BUILDDIR/chaos/chaos_check"
cd "$KAAS_SCRATCH" || kaas_fail "cd scratch"
kind() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" out.json; }
printf 't 0 0 a-1\nt 0 1 a-2\nt 1 0 a-3\nu 0 0 a-4\n' >acks
printf 't 0 0 a-1\nt 0 1 a-2\nt 0 2 b-1\nt 1 0 a-3\nu 0 0 a-4\n' >log
printf 'g t 0 1 100 200 m1\ng t 0 2 300 400 m2\ng t 0 1 150 500 m1\n' >commits
printf 'm1 t 0 1\nm1 t 0 3\nm2 t 0 2\n' >hwm
"$CHECK" --group-topics t,u --group-consumed log --commits commits --hwm hwm acks log >out.json ||
	kaas_fail "clean run: $(cat out.json)"
[ "$(kind violation_count)" = 0 ] || kaas_fail "clean run has violations"
# lost (a-2 nowhere), moved (a-3 at 1 not 0), duplicate (b-1 twice),
# double_ack (a-5 at 5 and 6, so one of them moved), reorder (a-7 before
# a-6 before a-5), gap (2..2 in p1), non_monotonic (1 after 3 in p1),
# stale_incarnation (u holds x-9 of an older incarnation), group_skipped
# (the group was never given a-3 nor a-2), commit_backwards (m2 committed 1
# after m1's 3 was acknowledged), hwm_backwards (m1 saw 5 then 4), leftover
# and corrupt_document (one line each).
printf 't 0 0 a-1\nt 0 1 a-2\nt 1 0 a-3\nt 0 5 a-5\nt 0 6 a-5\nt 0 4 a-6\nt 0 3 a-7\nu 0 0 n.0-1\n' >acks
printf 't 0 0 a-1\nt 0 1 x-1\nt 0 2 b-1\nt 0 3 a-7\nt 0 4 a-6\nt 0 5 a-5\nt 0 6 b-1\nt 1 0 y-1\nt 1 1 a-3\nt 1 3 z-1\nt 1 1 a-3\nu 0 0 n.0-1\nu 0 1 o.0-9\n' >log
grep -v 'a-3\|a-2' log >grp
printf 'g t 0 3 100 200 m1\ng t 0 1 300 400 m2\n' >commits
printf 'm1 t 0 5\nm2 t 0 1\nm1 t 0 4\n' >hwm
echo '.trash/chaos-d.0123 (after 30 s)' >left
echo 'kaasd.1.1.log: assignment.json is corrupt' >corrupt
"$CHECK" --incarnation u=n. --group-topics t --group-consumed grp --commits commits --hwm hwm \
	--extra leftover left --extra corrupt_document corrupt acks log >out.json
[ $? = 1 ] || kaas_fail "violations must exit 1"
for kv in lost=1 moved=2 duplicate=2 double_ack=1 reorder=2 gap=1 non_monotonic=1 \
	stale_incarnation=1 group_skipped=2 commit_backwards=1 hwm_backwards=1 leftover=1 \
	corrupt_document=1; do
	got=$(kind "${kv%=*}")
	[ "$got" = "${kv#*=}" ] || kaas_fail "${kv%=*}: got '$got', expected ${kv#*=}: $(cat out.json)"
done
echo 't 0 zero a-1' >bad
"$CHECK" bad log >/dev/null 2>err
[ $? = 2 ] && grep -q malformed err || kaas_fail "a malformed line must exit 2 naming the problem"
"$CHECK" acks >/dev/null 2>&1
[ $? = 2 ] || kaas_fail "a missing CONSUMED must exit 2"
"$CHECK" --extra nosuchkind left acks log >/dev/null 2>err
[ $? = 2 ] && grep -q "unknown kind" err || kaas_fail "an unknown --extra kind must exit 2"
echo PASS
