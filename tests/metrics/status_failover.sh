#!/bin/bash
# The status page through a failover (issue 39, "recent failovers"): two
# brokers on one volume (heartbeat 100 ms, liveness 1 s), a topic of 2
# partitions made while broker 0 was alone; broker 1's /status.json lists
# both brokers alive and broker 0 as leader of both partitions, "led
# elsewhere" with no numbers.  Broker 0 is killed (-9): broker 1's page then
# shows broker 0 dead, itself controller and leader of both partitions
# at higher epochs, fo/0's 10 records there, and an event "broker 0 is
# dead" among the recent events, in the JSON and the HTML.
# curl and jq only (about 5 s; both suites).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/metrics/metrics-lib.sh"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"
mkdir -p "$KAAS_SCRATCH/data"

start() { # ID
	"$KAASD" --data "$KAAS_SCRATCH/data" --broker-id "$1" --listen 127.0.0.1:0 --num-partitions 2 \
		--heartbeat-ms 100 --liveness-timeout-ms 1000 --http-listen 127.0.0.1:0 \
		2>"$KAAS_SCRATCH/b$1.log" &
	eval "PID$1=$!"
	kaas_on_exit "kill -9 $!"
	kaas_wait_for 30 grep -q "listening on" "$KAAS_SCRATCH/b$1.log" ||
		{ cat "$KAAS_SCRATCH/b$1.log" >&2; kaas_fail "broker $1 did not start"; }
}
start 0
# the topic made while broker 0 is alone: it leads both partitions (no
# leader moves back or over later while it lives)
KPORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$KAAS_SCRATCH/b0.log" | head -n1)
seq 1 10 | timeout 30 kcat -b "127.0.0.1:$KPORT" -P -t fo -p 0 || kaas_fail "produce"
start 1
http_port "$KAAS_SCRATCH/b1.log"
json() { curl -sf -m 5 "http://127.0.0.1:$HTTP_PORT/status.json"; }

both_alive() { json | jq -e '[.brokers[] | select(.alive)] | length == 2' >/dev/null; }
kaas_wait_for 20 both_alive || { json >&2; kaas_fail "broker 1 never saw both brokers alive"; }
led() { json | jq -e '[.topics[] | select(.name == "fo") | .shown[] | select(.leader >= 0)] | length == 2' >/dev/null; }
kaas_wait_for 20 led || { json >&2; kaas_fail "no leader named for both partitions of fo"; }
json | jq -e '[.topics[] | select(.name == "fo") | .shown[]
	| (.state == "led here" and .high_watermark >= 0 and .leader == 1)
	  or (.state == "led elsewhere" and .high_watermark == -1 and .leader == 0)] | all' >/dev/null ||
	{ json >&2; kaas_fail "partition states do not follow their leaders"; }
json | jq -e '[.topics[] | select(.name == "fo") | .shown[] | select(.leader == 0)] | length == 2' >/dev/null ||
	{ json >&2; kaas_fail "broker 0 does not lead both partitions of fo before the kill"; }
BEFORE=$(json | jq -c '[.topics[] | select(.name == "fo") | .shown[] | {leader, leader_epoch}]')
echo "fo before the kill (leader, epoch): $BEFORE"

kill -9 "$PID0"
after() {
	json | jq -e --argjson b "$BEFORE" '
		([.brokers[] | select(.id == 0 and (.alive | not))] | length == 1)
		and .controller == 1
		and ([.topics[] | select(.name == "fo") | .shown[]
		      | select(.leader == 1 and .state == "led here")] | length == 2)
		and ([.topics[] | select(.name == "fo") | .shown[] | .leader_epoch] as $n
		     | [range(0; 2) | if $b[.].leader == 0 then $n[.] > $b[.].leader_epoch
				      else $n[.] >= $b[.].leader_epoch end] | all)
		and ([.events[] | select(.text | test("broker 0 is dead"))] | length == 1)' >/dev/null
}
kaas_wait_for 20 after || { json >&2; kaas_fail "broker 1's page does not show the failover"; }
[ "$(json | jq '[.topics[] | select(.name == "fo") | .shown[0].high_watermark][0]')" = 10 ] ||
	{ json >&2; kaas_fail "fo/0's high watermark after the failover is not 10"; }
curl -sf -m 5 "http://127.0.0.1:$HTTP_PORT/" | grep -q "broker 0 is dead" ||
	kaas_fail "the HTML page does not list the death"
