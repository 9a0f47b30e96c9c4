#!/bin/bash
# chaos_txn ctp-check (exactly-once of consume-transform-produce,
# chaos/chaos_txn.c) on hand-made files, the negative controls of issue 33's
# anomalies: a good run passes; a bad one reports each kind with its count:
# a read_committed reader that saw a record of an aborted transaction
# (seen_aborted) or one before its commit was called (visible_before_commit),
# an aborted transaction's output (ctp_aborted_visible), an output nobody
# logged (ctp_unlogged), an input transformed twice (ctp_duplicate),
# committed input offsets ahead of the committed output
# (offsets_without_output) and behind it (output_without_offsets), a key
# whose last committed value is missing after cleaning (committed_value_lost)
# or read with an older one (committed_value_stale); a malformed log exits 2.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
TXN="$KAAS_TOP_BUILDDIR/chaos/chaos_txn"
[ -x "$TXN" ] || kaas_skip "chaos_txn is not built (no librdkafka)"
cd "$KAAS_SCRATCH" || kaas_fail "cd scratch"
kind() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" out.json; }
run() { "$TXN" ctp-check txn-log in-read ctp-log seen out-read committed compacted >out.json; }
# The input: tx1.0-0 (1 record, committed at 1000), tx1.0-1 (2, committed at
# 2000), tx1.0-2 (1, aborted).  Partition 0: tx1.0-0-0@0, tx1.0-2-0@1
# (aborted), marker@2, tx1.0-1-0@3 ... as a read_committed reader reads it.
cat >txn-log <<'E'
commit tx1.0-0 1 1000
commit tx1.0-1 2 2000
abort tx1.0-2 1 -1
E
cat >in-read <<'E'
chaos-t 0 0 tx1.0-0-0
chaos-t 0 3 tx1.0-1-0
chaos-t 1 0 tx1.0-1-1
E
# The transformer read each committed record after its commit call.
cat >seen <<'E'
1001 0 0 tx1.0-0-0
2005 0 3 tx1.0-1-0
2006 1 0 tx1.0-1-1
E
# ctp1.0-0 transformed partition 0's offset 0 and was aborted; ctp1.0-1
# transformed it again with offset 3 and committed (input offsets 0 -> 4),
# ctp1.0-2 partition 1's offset 0 (-> 1).
cat >ctp-log <<'E'
abort ctp1.0-0 1 -1
commit ctp1.0-1 2 2100
commit ctp1.0-2 1 2200
E
cat >out-read <<'E'
chaos-u 0 2 ctp1.0-1|0|0|tx1.0-0-0
chaos-u 0 3 ctp1.0-1|0|3|tx1.0-1-0
chaos-u 1 1 ctp1.0-2|1|0|tx1.0-1-1
E
cat >committed <<'E'
0 4
1 1
2 -1
E
# Keys p0.0, p0.3 and p1.0: the last committed values (the aborted
# ctp1.0-0|0|0 is gone, as read_committed skips it).
cat >compacted <<'E'
chaos-v 0 2 p0.0 put ctp1.0-1|0|0
chaos-v 0 3 p0.3 put ctp1.0-1|0|3
chaos-v 1 1 p1.0 put ctp1.0-2|1|0
E
run || kaas_fail "good run: $(cat out.json)"
[ "$(kind violation_count)" = 0 ] || kaas_fail "good run has violations: $(cat out.json)"
for kv in ctp_transactions=3 ctp_committed=2 seen=3 outputs=3 compacted_read=3 keys=3; do
	got=$(kind "${kv%=*}")
	[ "$got" = "${kv#*=}" ] || kaas_fail "good run ${kv%=*}: got '$got', expected ${kv#*=}: $(cat out.json)"
done
# A record of a transaction read before its commit, one of an aborted one
# (a zombie's marker closing the next transaction early; an abort written
# as a commit).
cat >seen <<'E'
999 0 0 tx1.0-0-0
1500 0 1 tx1.0-2-0
2005 0 3 tx1.0-1-0
2006 1 0 tx1.0-1-1
E
run
[ $? = 1 ] && [ "$(kind visible_before_commit)" = 1 ] && [ "$(kind seen_aborted)" = 1 ] &&
	[ "$(kind violation_count)" = 2 ] || kaas_fail "early and aborted reads: $(cat out.json)"
cp seen seen.bad
sed -n 3,4p seen.bad >seen
sed -i '1i 1001 0 0 tx1.0-0-0' seen
# Committed offsets that disagree with the committed output: partition 0's
# offset 3 committed with no output for it (offsets 0 -> 4, output of 0
# only: a group coordinator that applied the offsets of an aborted
# transaction, or lost the output's commit), partition 1's output with its
# offsets not committed (the offsets dropped: the input is read again).
cat >out-read <<'E'
chaos-u 0 2 ctp1.0-1|0|0|tx1.0-0-0
chaos-u 1 1 ctp1.0-2|1|0|tx1.0-1-1
E
printf '0 4\n1 0\n' >committed
run
[ $? = 1 ] && [ "$(kind offsets_without_output)" = 1 ] && [ "$(kind output_without_offsets)" = 1 ] ||
	kaas_fail "offsets against output: $(cat out.json)"
# An aborted transaction's output, one nobody logged, an input transformed
# twice (an aborted transaction's records kept, then done again).
cat >out-read <<'E'
chaos-u 0 1 ctp1.0-0|0|0|tx1.0-0-0
chaos-u 0 2 ctp1.0-1|0|0|tx1.0-0-0
chaos-u 0 3 ctp1.0-1|0|3|tx1.0-1-0
chaos-u 1 1 ctp1.0-2|1|0|tx1.0-1-1
chaos-u 1 2 ctp9.0-0|1|5|x
E
printf '0 4\n1 6\n' >committed
run
[ $? = 1 ] && [ "$(kind ctp_aborted_visible)" = 1 ] && [ "$(kind ctp_unlogged)" = 1 ] &&
	[ "$(kind ctp_duplicate)" = 1 ] && [ "$(kind offsets_without_output)" = 0 ] ||
	kaas_fail "aborted, unlogged and duplicate output: $(cat out.json)"
# After cleaning: key p0.3's last committed value gone (a cleaner that took
# an aborted value for committed and removed the committed one below it),
# p1.0 read with an older value than its last committed one.
cat >out-read <<'E'
chaos-u 0 2 ctp1.0-1|0|0|tx1.0-0-0
chaos-u 0 3 ctp1.0-1|0|3|tx1.0-1-0
chaos-u 1 1 ctp1.0-2|1|0|tx1.0-1-1
chaos-u 1 2 ctp1.0-2|1|8|tx1.0-1-1
E
printf '0 4\n1 9\n' >committed
cat >compacted <<'E'
chaos-v 0 2 p0.0 put ctp1.0-1|0|0
chaos-v 1 1 p1.0 put ctp1.0-2|1|0
E
run
[ $? = 1 ] && [ "$(kind committed_value_lost)" = 1 ] && [ "$(kind committed_value_stale)" = 1 ] &&
	[ "$(kind violation_count)" = 2 ] || kaas_fail "compacted values: $(cat out.json)"
echo 'commit' >ctp-log
"$TXN" ctp-check txn-log in-read ctp-log seen out-read committed compacted >/dev/null 2>err
[ $? = 2 ] && grep -q malformed err || kaas_fail "a malformed log must exit 2 naming it"
echo PASS
