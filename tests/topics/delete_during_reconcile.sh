#!/bin/bash
# DeleteTopics while this broker's agent round is about to reconcile (the
# named step topics.reconcile.before-admin-lock, 1 s at every round): the
# delete holds the topics' admin lock and waits for an assignment without
# the topic, which the next round writes only after this round's reconcile
# got that lock.  Before the fix the two waited for each other until the
# delete's bound (the liveness timeout, 20 s here), the round took over half
# the liveness timeout and the broker's lease lapsed (CI saw a group lose
# its coordinator that way in tests/groups/cooperative.sh); now the delete
# waits without the lock and is answered within a few rounds.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"
export KAAS_PAUSE_AT=topics.reconcile.before-admin-lock:1000 KAAS_PAUSE_REPEAT=1
kaasd_start --liveness-timeout-ms 20000
unset KAAS_PAUSE_AT KAAS_PAUSE_REPEAT
for round in 1 2 3; do
	t=dr$round
	"$KAASCTL" --bootstrap "$BROKER" topic create $t --partitions 2 >/dev/null || kaas_fail "create $t"
	seq 1 20 | timeout 60 kcat -b "$BROKER" -P -t $t -X acks=all || kaas_fail "produce to $t"
	t0=$(date +%s%N)
	timeout 60 "$KAASCTL" --bootstrap "$BROKER" topic delete $t || kaas_fail "delete $t"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "round $round: DeleteTopics $t answered in $ms ms"
	[ "$ms" -lt 8000 ] || kaas_fail "DeleteTopics took $ms ms: the delete and the agent's round waited for each other"
done
grep -q "a round took" "$KAASD_LOG" && { grep "a round took" "$KAASD_LOG" >&2; kaas_fail "an agent round ran over half the liveness timeout"; }
kaasd_stop
echo PASS
