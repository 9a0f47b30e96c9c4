#!/bin/bash
# Issue 13, defect 7 (first half): nothing transient is permanent.  Both
# brokers restart while a topic's document cannot be read (here: damaged),
# so both list the topic offline.  The controller keeps the topic's slot
# (its leader epoch does not go down), and once the document reads again the
# next reconcile brings the topic back: producing works again with nothing
# lost, without a restart.  (Before the fix the topic stayed offline until
# the next restart, and the controller dropped its slot, so the epoch
# restarted at 1, below the partition's fence.)
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed"
S=$KAAS_SCRATCH
DOC=$MB_DATA/__cluster/topics/os.json
ASG=$MB_DATA/__cluster/assignment.json
epoch() { # the leader epoch of os/0 in assignment.json, or "none"
	python3 - "$ASG" <<'PY' 2>/dev/null || echo none
import json, sys
body = json.loads(open(sys.argv[1]).read().split("\n", 1)[1])
e = [s["leader_epoch"] for s in body["slots"] if s["topic"] == "os" and s["partition"] == 0]
print(e[0] if e else "none")
PY
}
produce() { # FROM TO
	seq "$1" "$2" | sed 's/^/m-/' | timeout 60 kcat -b "$(mb_bootstrap)" -P -t os -p 0 \
		-X acks=all -X message.timeout.ms=45000
}

mb_start 0
mb_start 1
"$MBCLIENT" create "$(mb_bootstrap)" os 1 2>"$S/admin.log" || { cat "$S/admin.log" >&2; kaas_fail "create"; }
mb_wait_led 20 os 1 0 0 1 || kaas_fail "os/0 not led"
produce 1 5 || kaas_fail "first produce"
# Move the leader once, so the epoch is above 1.
leader=$(mb_leader os 0)
mb_kill "$leader"
other=$((1 - leader))
mb_wait_led 30 os 1 "$other" "$other" || kaas_fail "os/0 not taken over"
produce 6 10 || kaas_fail "produce after the takeover"
mb_start "$leader"
e0=$(epoch)
[ "$e0" != none ] && [ "$e0" -ge 2 ] || kaas_fail "epoch of os/0 is $e0, expected >= 2"
echo "os/0 at leader epoch $e0"

# Both brokers restart while the document is damaged.
cp "$DOC" "$S/os.json.good"
mb_kill 0
mb_kill 1
echo garbage >"$DOC"
mb_start 0
mb_start 1
kaas_wait_for 20 grep -q "topic os: document unreadable" "$S"/kaasd.0.*.log ||
	kaas_fail "broker 0 did not find the document damaged"
sleep 3 # a few controller rounds with the topic offline everywhere
e1=$(epoch)
[ "$e1" != none ] && [ "$e1" -ge "$e0" ] ||
	kaas_fail "with the topic offline the controller dropped or lowered its slot: epoch $e0 -> $e1"

# The document reads again: the topic comes back without a restart.  Wait
# for both brokers' Metadata to lead it again before producing: while it is
# still offline Metadata answers KAFKA_STORAGE_ERROR for the topic, and
# librdkafka fails the messages it holds for a topic with that error at once
# instead of retrying (seen under ASan, where the next reconcile is later).
cp "$S/os.json.good" "$DOC.tmp-test" && mv "$DOC.tmp-test" "$DOC"
t0=$(mb_now_ms)
for b in 0 1; do
	mb_wait_led 60 os 1 "$b" 0 1 || { grep -h "topic os\| os/0\|os: " "$S"/kaasd.*.log | tail -n 25 >&2
		kaas_fail "the topic did not come back online within 60 s of its document reading again (broker $b)"; }
done
produce 11 15 || kaas_fail "produce after the topic came back"
echo "online again; produce acknowledged $(( $(mb_now_ms) - t0 )) ms after the document was repaired"
e2=$(epoch)
[ "$e2" != none ] && [ "$e2" -ge "$e0" ] || kaas_fail "leader epoch went down: $e0 -> $e2"
timeout 60 kcat -b "$(mb_bootstrap)" -C -t os -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$S/got.txt"
seq 1 15 | sed 's/^/m-/' >"$S/want.txt"
cmp -s "$S/want.txt" "$S/got.txt" || { diff "$S/want.txt" "$S/got.txt" | head >&2; kaas_fail "records lost or out of order"; }
echo "epochs $e0 -> $e1 -> $e2; all 15 records read back"
echo PASS
