#!/bin/bash
# Three brokers on one shared directory, an idempotent producer (acks=all,
# five requests in flight) and an exactly-once consumer group member
# (mbclient consume: output written only once its offset commit is known
# applied).  Round 1 kills -9 the broker that leads the partition AND
# coordinates the group; round 2 (the first broker restarted) kills the
# partition's leader again.  Each time a survivor serves the partition (the
# failover time, kill to the first acknowledgement by another broker, is
# printed) and the consumer continues from the committed offset the killed
# coordinator wrote.  In the end the consumer's output is the whole log,
# offsets 0..N-1 each once, and holds every acknowledged message exactly
# once, in order.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
[ -x "$MB_OFFSETS_RAW" ] || kaas_fail "no offsets_raw at $MB_OFFSETS_RAW"
S=$KAAS_SCRATCH
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" k9 1 || kaas_fail "create topic"
mb_wait_led 20 k9 1 0 0 1 2 || kaas_fail "k9/0 has no leader"
leader=$(mb_leader k9 0)
# A group coordinated by the partition's leader, so one kill moves both.
group=
for i in $(seq 1 60); do
	[ "$(mb_coordinator "kg$i")" = "$leader" ] && { group=kg$i; break; }
done
[ -n "$group" ] || kaas_fail "no group among kg1..kg60 is coordinated by broker $leader"
echo "k9/0 led by broker $leader, which also coordinates group $group"

ACKS=$S/acks.txt OUT=$S/consumed.txt
: >"$ACKS"
: >"$OUT"
"$MBCLIENT" produce --idempotent "$(mb_bootstrap)" k9 1000000 "$ACKS" 1000 2>"$S/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"
MBCLIENT_DEBUG=cgrp "$MBCLIENT" consume "$(mb_bootstrap)" "$group" k9 "$OUT" 2>"$S/consumer.log" &
CONS=$!
kaas_on_exit "kill -9 $CONS"

consumer_alive() { kill -0 $CONS 2>/dev/null || { tail -n 60 "$S/consumer.log" >&2; kaas_fail "the consumer exited: $1"; }; }
wait_consumed() { # SECS N WHAT
	kaas_wait_for "$1" bash -c "[ \$(wc -l <'$OUT') -ge $2 ]" ||
		{ consumer_alive "$3"; grep -v HEARTBEAT "$S/consumer.log" | tail -n 60 >&2
		  grep -h "group $group\|k9" "$S"/kaasd.*.log | tail -n 30 >&2
		  [ -n "${MB_KEEP_FAILED:-}" ] && cp -r "$S" "$MB_KEEP_FAILED"
		  kaas_fail "$3: the consumer stalled at $(wc -l <"$OUT") messages"; }
}

for round in 1 2; do
	mb_wait_acks 60 "$ACKS" $(( $(mb_acked "$ACKS") + 2000 )) ||
		kaas_fail "round $round: producer stalled at $(mb_acked "$ACKS") acknowledgements"
	wait_consumed 60 1000 "round $round, before the kill"
	coord=$(mb_coordinator "$group")
	before=$(wc -l <"$OUT")
	mb_kill_leader k9 "$ACKS"
	survivors=("${!MB_PID[@]}")
	now=$(mb_leader k9 0 "${survivors[0]}")
	echo "round $round: killed broker $MB_KILLED (leader of k9/0; coordinator of $group: $coord); new leader $now; failover $MB_FAILOVER_MS ms"
	[ "$now" != "$MB_KILLED" ] || kaas_fail "round $round: metadata still names the dead broker"
	[ $round = 2 ] || [ "$coord" = "$MB_KILLED" ] || kaas_fail "round 1 did not kill the coordinator"
	# The consumer goes on (through the new coordinator when it moved).
	wait_consumed 60 $((before + 1000)) "round $round, after the kill"
	consumer_alive "round $round"
	echo "round $round: the consumer went on; $group now coordinated by broker $(mb_coordinator "$group")"
	mb_start "$MB_KILLED"
done

kill -TERM $PROD
wait $PROD || { tail -n 20 "$S/producer.log" >&2; kaas_fail "producer: not every message acknowledged"; }
end=$(awk '$2 > m { m = $2 } END { print m + 1 }' "$ACKS")
wait_consumed 60 "$end" "at the end"
kill -TERM $CONS
wait $CONS || { tail -n 20 "$S/consumer.log" >&2; kaas_fail "the consumer failed"; }
# The output is offsets 0..end-1, each once (the consumer checks the
# sequence as it goes; this checks the file).
awk -v n="$end" '$1 != NR - 1 { print "line " NR ": offset " $1 > "/dev/stderr"; exit 1 } END { if (NR != n) { print NR " lines, log end " n > "/dev/stderr"; exit 1 } }' "$OUT" ||
	kaas_fail "the consumer's output is not the log's offsets 0..$((end - 1)) each once"
cut -d' ' -f2 "$OUT" >"$S/values.txt"
check_acked "$ACKS" "$S/values.txt" exactly-once ||
	kaas_fail "acknowledged messages lost, duplicated or reordered"
grep -c "^mbclient: commit of .* failed" "$S/consumer.log" | sed 's/^/consumer commits that failed and were resolved: /'
echo PASS
