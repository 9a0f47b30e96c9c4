#!/bin/bash
# The txn thread's listing of txn-markers/ backs off while no marker
# request is there: an idle broker lists it about once a second, not every
# 100 ms tick forever.  kaasd's volume is the in-process fault model
# (fault+), whose rule "delay 0 ms on readdir of txn-markers" (a path in
# the cluster directory) logs one event per listing; the test counts them
# over 6 idle seconds (the old code listed 60 times).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
mkdir -p "$S/vol/__cluster/txn-markers"
echo '{"rules":[{"op":"readdir","path":"txn-markers","fault":"delay","delay_ms":0}]}' >"$S/rules.json"
kaasd_start --data "fault+$S/vol?seed=1&config=$S/rules.json&log=$S/events.jsonl"
listings() { grep -c '"path":"txn-markers"' "$S/events.jsonl" 2>/dev/null || echo 0; }
kaas_wait_for 20 bash -c "grep -q txn-markers '$S/events.jsonl'" ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "no listing of txn-markers/ in 20 s (rule not matching?)"; }
sleep 3 # past the backoff's ramp
n0=$(listings)
sleep 6
n1=$(listings)
n=$((n1 - n0))
echo "$n listings of txn-markers/ in 6 idle seconds"
[ "$n" -ge 1 ] || kaas_fail "txn-markers/ was not listed at all while idle (requests would never be served)"
[ "$n" -le 12 ] || kaas_fail "txn-markers/ listed $n times in 6 idle seconds (no backoff)"
kaasd_stop
echo PASS
