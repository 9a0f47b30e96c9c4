#!/bin/bash
# Two kaasd with one --broker-id on one cluster directory.
#  1. While broker 1 runs, a second process started as broker 1 refuses to
#     start, naming the problem; the first one keeps serving.
#  2. A second broker 1 started while the first is paused (SIGSTOP: it
#     looks dead) starts; when the first resumes it finds its document
#     holding another incarnation and fences itself for good (produce
#     answered NOT_LEADER_OR_FOLLOWER, error 6); the new one serves.
#  3. After a clean stop (SIGTERM) the id can be started again at once.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
[ -x "$RAW" ] || kaas_fail "no rawclient at $RAW"
S=$KAAS_SCRATCH
for id in 0 1; do mb_start $id; done
# A topic whose partition 0 broker 1 leads (rawclient produces to
# partition 0).
T=
for t in d0 d1 d2 d3 d4 d5; do
	"$MBCLIENT" create "$(mb_bootstrap)" $t 1 || kaas_fail "create topic $t"
	mb_wait_led 20 $t 1 0 0 1 || kaas_fail "$t/0 has no leader"
	[ "$(mb_leader $t 0 0)" = 1 ] && { T=$t; break; }
done
[ -n "$T" ] || kaas_fail "broker 1 leads none of d0..d5"
echo "broker 1 leads $T/0"
produce_to() { # produce_to ID TAG: one message to $T/0 through broker ID only
	echo "$2" | timeout 30 kcat -b "127.0.0.1:${MB_PORT[$1]}" -P -t $T -p 0 -X acks=all \
		-X topic.metadata.refresh.interval.ms=100 -X message.timeout.ms=15000 2>/dev/null
}
produce_to 1 before || kaas_fail "produce through broker 1"

# 1. A duplicate of a live broker refuses to start.
t0=$(mb_now_ms)
timeout 30 "$KAASD" --data "$MB_DATA" --broker-id 1 --listen 127.0.0.1:0 \
	--heartbeat-ms "$MB_HEARTBEAT_MS" --liveness-timeout-ms "$MB_LIVENESS_MS" 2>"$S/dup.log"
rc=$?
echo "a second broker 1 exited with $rc after $(( $(mb_now_ms) - t0 )) ms: $(grep -o 'broker id 1 is in use.*' "$S/dup.log" | head -c 160)"
[ $rc != 0 ] && [ $rc != 124 ] || { cat "$S/dup.log" >&2; kaas_fail "a second broker 1 did not refuse to start (exit $rc)"; }
grep -q "broker id 1 is in use by a live broker" "$S/dup.log" ||
	{ cat "$S/dup.log" >&2; kaas_fail "the refusal does not name the problem"; }
grep -q "listening on" "$S/dup.log" && kaas_fail "the refused broker listened"
grep -q "stopped: another live broker has this --broker-id" "$S/dup.log" ||
	{ cat "$S/dup.log" >&2; kaas_fail "the last line does not say why it stopped"; }
grep -q "Address already in use" "$S/dup.log" && kaas_fail "an id clash is reported as an address in use"
grep -q "starting: pid [0-9]*, data $MB_DATA, cluster $MB_DATA/__cluster" "$S/dup.log" ||
	{ head -n 2 "$S/dup.log" >&2; kaas_fail "the start line names no pid or not the real cluster directory"; }
produce_to 1 after-refusal || kaas_fail "broker 1 stopped serving after the refused duplicate"

# 2. A duplicate started while the first is paused takes the id over.
old=${MB_PID[1]} oldport=${MB_PORT[1]}
kill -STOP "$old"
kaas_on_exit "kill -CONT $old"
sleep $(( (MB_LIVENESS_MS + 999) / 1000 ))
MB_PORT[1]=0
mb_start 1
kill -CONT "$old"
# Broker 0 saw broker 1 die (the paused one) and come back (the new one).
kaas_wait_for 10 grep -q "cluster: broker 1 is dead: no heartbeat for the liveness timeout" "$S/kaasd.0.1.log" ||
	{ tail -n 20 "$S/kaasd.0.1.log" >&2; kaas_fail "broker 0 never logged that broker 1 died"; }
kaas_wait_for 10 grep -q "cluster: broker 1 is alive" "$S/kaasd.0.1.log" ||
	kaas_fail "broker 0 never logged broker 1 back"
kaas_wait_for 20 grep -q "broker id 1 was taken over by another process" "$S/kaasd.1.1.log" ||
	{ tail -n 20 "$S/kaasd.1.1.log" >&2; kaas_fail "the resumed broker 1 did not notice the takeover"; }
out=$(timeout 30 "$RAW" "127.0.0.1:$oldport" good-batch $T 2>&1)
echo "the superseded broker 1 answered: $out"
echo "$out" | grep -q "error 6" || kaas_fail "the superseded broker 1 still accepts produce"
kaas_wait_for 30 produce_to 1 new-owner || kaas_fail "the new broker 1 does not serve $T/0"
kill -0 "$old" || kaas_fail "the superseded broker exited instead of staying fenced"
kill -9 "$old"
wait "$old" 2>/dev/null

# 3. A clean stop frees the id at once.
kill -TERM "${MB_PID[1]}"
wait "${MB_PID[1]}" || kaas_fail "broker 1 did not stop cleanly"
unset "MB_PID[1]"
t0=$(mb_now_ms)
mb_start 1
echo "broker 1 restarted after a clean stop in $(( $(mb_now_ms) - t0 )) ms"
grep -q "is in use" "$S/kaasd.1.3.log" && kaas_fail "the restart after a clean stop was refused"
mb_wait_led 20 $T 1 0 0 1 || kaas_fail "$T: not led after the restart"
timeout 30 kcat -b "$(mb_bootstrap)" -C -t $T -p 0 -o beginning -e -f '%s\n' >"$S/got.txt" 2>/dev/null ||
	kaas_fail "consume"
printf 'before\nafter-refusal\nnew-owner\n' | cmp -s - "$S/got.txt" ||
	{ cat "$S/got.txt" >&2; kaas_fail "$T/0 does not hold exactly the acknowledged messages"; }
echo PASS
