#!/bin/bash
# SIGSTOP/SIGCONT zombie: the leader of a partition (and the controller)
# are paused until a survivor took over; produce requests sent to the
# paused leader meanwhile are answered only after it resumes.  None of its
# late writes becomes visible (self-fencing, then log fencing), a fetch
# it held is not answered with its old high watermark, and the paused
# controller cannot overwrite assignment.json.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
[ -x "$RAW" ] || kaas_fail "no rawclient at $RAW"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" z 1 || kaas_fail "create topic"
mb_wait_led 20 z 1 0 0 1 2 || kaas_fail "z/0 has no leader"
leader=$(mb_leader z 0)
ctrl=$(mb_controller)
zombies=("$leader")
[ "$ctrl" != "$leader" ] && zombies+=("$ctrl")
survivor=
for id in 0 1 2; do [[ " ${zombies[*]} " == *" $id "* ]] || { survivor=$id; break; }; done
echo "leader $leader, controller $ctrl, survivor $survivor"

seq 1 200 | sed 's/^/before-/' | timeout 60 kcat -b "$(mb_bootstrap)" -P -t z -p 0 -X acks=all ||
	kaas_fail "produce before the pause"
asg="$MB_DATA/__cluster/assignment.json"
# (line 1 is the document header, line 2 the body)
epoch_of() { sed -n '2s/.*"controller_epoch":\([0-9]*\).*/\1/p' "$asg"; }
version_of() { sed -n '2s/^{[^[]*"version":\([0-9]*\).*/\1/p' "$asg"; }

# A Fetch parked at the leader's end (long poll) whose wait runs out while
# the leader is paused: on resume it must not be answered with the old
# high watermark (the new leader's is higher by then; librdkafka keeps the
# watermark of any answer, so its consumer would see it go back).
timeout 60 "$RAW" "127.0.0.1:${MB_PORT[$leader]}" fetch-answer z 200 1500 \
	>"$KAAS_SCRATCH/parked.log" 2>&1 &
PARKED=$!
for i in $(seq 1 100); do grep -q sent "$KAAS_SCRATCH/parked.log" && break; sleep 0.1; done
sleep 0.3 # read and parked by the leader
[ "$(wc -l <"$KAAS_SCRATCH/parked.log")" = 1 ] ||
	kaas_fail "the fetch was answered before the pause: $(cat "$KAAS_SCRATCH/parked.log")"
for id in "${zombies[@]}"; do mb_kill "$id" STOP; done
paused_at=$SECONDS
kaas_on_exit "kill -CONT ${MB_PID[$leader]} ${MB_PID[$ctrl]}"
# Requests to the paused leader wait in its socket until it resumes.
timeout 60 "$RAW" "127.0.0.1:${MB_PORT[$leader]}" good-batch z >"$KAAS_SCRATCH/raw.log" 2>&1 &
RAWPID=$!
# Bounded by time, not by tries: each try is a Metadata round trip, which
# takes longer on a loaded machine (the take-over itself needs the liveness
# timeout, a controller claim when the controller is paused too, and a round).
ok=0
while [ $((SECONDS - paused_at)) -lt 60 ]; do
	[ "$(mb_leader z 0 "$survivor")" = "$survivor" ] && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] || kaas_fail "survivor $survivor did not take z/0 over within 60 s of the pause"
echo "survivor $survivor leads z/0 $((SECONDS - paused_at)) s after the pause"
e_new=$(epoch_of)
v_new=$(version_of)
seq 1 200 | sed 's/^/after-/' | timeout 60 kcat -b "127.0.0.1:${MB_PORT[$survivor]}" -P -t z -p 0 -X acks=all ||
	kaas_fail "produce to the new leader"

# (a pause of 3 s at least: the parked fetch's 1.5 s wait runs out in it)
while [ $((SECONDS - paused_at)) -lt 3 ]; do sleep 0.2; done
for id in "${zombies[@]}"; do mb_kill "$id" CONT; done
wait $RAWPID
echo "paused leader answered: $(tr '\n' ' ' <"$KAAS_SCRATCH/raw.log")"
wait $PARKED || kaas_fail "the parked fetch got no answer: $(cat "$KAAS_SCRATCH/parked.log")"
echo "parked fetch, answered after the pause: $(tail -n1 "$KAAS_SCRATCH/parked.log")"
read -r _ perr _ phw _ < <(tail -n1 "$KAAS_SCRATCH/parked.log")
[ "$perr" != 0 ] || [ "$phw" -ge 400 ] ||
	kaas_fail "the paused leader answered a fetch with its old high watermark $phw (the new leader's is 400)"
# Let the zombies run a few rounds, watching assignment.json.
for i in $(seq 1 30); do
	e=$(epoch_of)
	v=$(version_of)
	[ "$e" -ge "$e_new" ] || kaas_fail "assignment.json went back to controller epoch $e (was $e_new)"
	[ "$v" -ge "$v_new" ] || kaas_fail "assignment.json went back to version $v (was $v_new)"
	sleep 0.1
done
timeout 60 kcat -b "$(mb_bootstrap)" -C -t z -p 0 -o beginning -e -f '%s\n' \
	>"$KAAS_SCRATCH/consumed.txt" 2>/dev/null || kaas_fail "consume"
{ seq 1 200 | sed 's/^/before-/'; seq 1 200 | sed 's/^/after-/'; } >"$KAAS_SCRATCH/want.txt"
cmp -s "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/consumed.txt" ||
	{ diff "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/consumed.txt" | head >&2; kaas_fail "the log is not exactly the acknowledged messages"; }
grep -h "standing down\|fenced" "$KAAS_SCRATCH"/kaasd.*.log | head -5
echo PASS
