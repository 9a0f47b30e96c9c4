#!/bin/bash
# A knfsd restart under load, on real kernel NFS mounts (scripts/nfs-lab):
# two brokers, each on its own mount of the export, an idempotent producer
# (acks=all, five in flight) and an exactly-once consumer group member
# (mbclient consume).  The NFS server is stopped (rpc.nfsd 0) for 3 s and
# started again, twice: the clients (hard mounts) block, reconnect and go on.
# Nothing acknowledged is lost: the producer and the consumer carry on, the
# consumer's output is the log's offsets 0..N-1 each once and holds every
# acknowledged message exactly once, in order.  The stall (server back to
# the next acknowledgement) is printed.
# kaas-test-timeout: 900
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kernel-nfs/kn-lib.sh"
kn_in_lab --hosts 2 --timeout 300

kaas_scratch
kn_brokers_on_mounts
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
command -v nfs-lab-fault >/dev/null || kaas_fail "nfs-lab-fault is not in PATH inside the lab"
S=$KAAS_SCRATCH
for id in 0 1; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" kr 1 || kaas_fail "create topic"
mb_wait_led 60 kr 1 0 0 1 || kaas_fail "kr/0 has no leader"

ACKS=$S/acks.txt OUT=$S/consumed.txt
: >"$ACKS"
: >"$OUT"
"$MBCLIENT" produce --idempotent "$(mb_bootstrap)" kr 1000000 "$ACKS" 2000 2>"$S/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"
"$MBCLIENT" consume "$(mb_bootstrap)" krg kr "$OUT" 2>"$S/consumer.log" &
CONS=$!
kaas_on_exit "kill -9 $CONS"

consumer_alive() { kill -0 $CONS 2>/dev/null || { tail -n 40 "$S/consumer.log" >&2; kaas_fail "the consumer exited: $1"; }; }
wait_consumed() { # SECS N WHAT
	kaas_wait_for "$1" bash -c "[ \$(wc -l <'$OUT') -ge $2 ]" ||
		{ consumer_alive "$3"; tail -n 40 "$S/consumer.log" >&2
		  kaas_fail "$3: the consumer stalled at $(wc -l <"$OUT") messages"; }
}

rounds=${KN_ROUNDS:-1}
for round in $(seq 1 "$rounds"); do
	mb_wait_acks 120 "$ACKS" $(( $(mb_acked "$ACKS") + 1000 )) ||
		kaas_fail "round $round: producer stalled at $(mb_acked "$ACKS") acknowledgements"
	wait_consumed 120 500 "round $round, before the restart"
	before=$(mb_acked "$ACKS") consumed=$(wc -l <"$OUT")
	t_down=$(mb_now_ms)
	nfs-lab-fault restart-server 3 || kaas_fail "restarting knfsd"
	t_up=$(mb_now_ms)
	kaas_wait_for 120 awk -v t="$t_up" '$3 > t { f = 1 } END { exit !f }' "$ACKS" ||
		kaas_fail "round $round: no acknowledgement within 120 s of the server's restart"
	t1=$(awk -v t="$t_up" '$3 > t { print $3; exit }' "$ACKS")
	# the longest time without an acknowledgement across the outage
	gap=$(awk -v a="$t_down" -v b="$t1" '$3 >= a - 1000 && $3 <= b { if (p && $3 - p > g) g = $3 - p; p = $3 } END { print g + 0 }' "$ACKS")
	echo "round $round: knfsd down 3 s after $before acks; first acknowledgement $((t1 - t_up)) ms after it was back; longest time without one $gap ms"
	[ "$gap" -ge 2000 ] || kaas_fail "round $round: acknowledgements went on while knfsd was down (longest gap $gap ms): the fault did not bite"
	mb_wait_acks 120 "$ACKS" $(( $(mb_acked "$ACKS") + 500 )) || kaas_fail "round $round: producer stalled after the restart"
	wait_consumed 120 $((consumed + 500)) "round $round, after the restart"
	consumer_alive "round $round"
	for id in "${!MB_PID[@]}"; do kill -0 "${MB_PID[$id]}" 2>/dev/null || kaas_fail "broker $id died"; done
done

kill -TERM $PROD
wait $PROD || { tail -n 20 "$S/producer.log" >&2; kaas_fail "producer: not every message acknowledged"; }
end=$(awk '$2 > m { m = $2 } END { print m + 1 }' "$ACKS")
wait_consumed 120 "$end" "at the end"
kill -TERM $CONS
wait $CONS || { tail -n 20 "$S/consumer.log" >&2; kaas_fail "the consumer failed"; }
awk -v n="$end" '$1 != NR - 1 { print "line " NR ": offset " $1 > "/dev/stderr"; exit 1 } END { if (NR != n) { print NR " lines, log end " n > "/dev/stderr"; exit 1 } }' "$OUT" ||
	kaas_fail "the consumer's output is not the log's offsets 0..$((end - 1)) each once"
cut -d' ' -f2 "$OUT" >"$S/values.txt"
check_acked "$ACKS" "$S/values.txt" exactly-once || kaas_fail "acknowledged messages lost, duplicated or reordered"
echo PASS
