#!/usr/bin/env bash
# kaasctl status --json on a running 2-broker cluster, parsed with python3
# and compared with what Metadata answers (kcat -L -J): the brokers, the
# controller, every topic's partitions and their leaders.  Metadata (up to
# v8, what kaas serves) carries no topic id: the id is compared with the
# topic directory's stamp (<topic>/.topic-id.json) instead.  Then a killed
# broker shows as not alive.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-lib.sh"
set -e
mb_start 0
mb_start 1
"$MBCLIENT" create "$(mb_bootstrap)" four 4 || kaas_fail "create four"
"$MBCLIENT" create "$(mb_bootstrap)" one 1 || kaas_fail "create one"
mb_wait_led 20 four 4 0 0 1 || kaas_fail "four: not every partition led"
mb_wait_led 20 one 1 0 0 1 || kaas_fail "one: not led"
seq 1 30 | timeout 60 kcat -b "$(mb_bootstrap)" -P -t four -X acks=all -X linger.ms=0 || kaas_fail "produce"

# The assignment and the brokers' metadata can move for a moment: compare
# until they agree (bounded).
compare() {
	mb_metadata 0 -J >"$KAAS_SCRATCH/md.json" || return 1
	kctl --data "$MB_DATA" status --json --watch-ms 500 >"$KAAS_SCRATCH/st.json" || return 1
	python3 - "$KAAS_SCRATCH/md.json" "$KAAS_SCRATCH/st.json" "$MB_DATA" <<'PY'
import json, sys
md = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[2]))
data = sys.argv[3]
def fail(msg):
    print("mismatch:", msg, file=sys.stderr)
    sys.exit(1)
mb = {b["id"]: b["name"] for b in md["brokers"]}
sb = {b["id"]: "%s:%d" % (b["host"], b["port"]) for b in st["brokers"] if b["state"] == "alive"}
if mb != sb: fail("brokers %s vs %s" % (mb, sb))
if md.get("controllerid") != st["controller"].get("broker"): fail("controller %s vs %s" % (md.get("controllerid"), st["controller"]))
if sum(1 for b in st["brokers"] if b["controller"]) != 1: fail("not one controller %s" % st["brokers"])
mt = {t["topic"]: t for t in md["topics"] if not t["topic"].startswith("__")}
stt = {t["name"]: t for t in st["topics"]}
if set(mt) != set(stt): fail("topics %s vs %s" % (sorted(mt), sorted(stt)))
for name, t in mt.items():
    s = stt[name]
    mp = {p["partition"]: p["leader"] for p in t["partitions"]}
    sp = {p["partition"]: p["leader"] for p in s["partitions"]}
    if mp != sp: fail("%s leaders %s vs %s" % (name, mp, sp))
    if s["partition_count"] != len(mp): fail("%s partition count" % name)
    for p in s["partitions"]:
        if not isinstance(p["leader_epoch"], int) or p["leader_epoch"] < 1: fail("%s epoch %s" % (name, p))
    stamp = open("%s/%s/.topic-id.json" % (data, name)).read().split("\n", 1)[1]
    if json.loads(stamp)["id"] != s["id"] or len(s["id"]) != 32: fail("%s id %s vs stamp %s" % (name, s["id"], stamp))
hw = sum(p["high_watermark"] for p in stt["four"]["partitions"])
if hw != 30: fail("four: high watermarks sum to %s, not 30" % hw)
if st["assignment"].get("version", 0) < 1: fail("no assignment version")
PY
}
kaas_wait_for 30 compare || { compare || true; kaas_fail "kaasctl status --json does not match Metadata"; }
kctl_expect 0 --data "$MB_DATA" status
kctl_has '^four +[0-9a-f]{32} +3 +[01] +[0-9]+ +0 +[0-9]+$'

# kaasctl read the live partitions many times: the leaders go on taking
# appends, and the high watermarks it reads follow them.
seq 31 40 | timeout 60 kcat -b "$(mb_bootstrap)" -P -t four -X acks=all -X linger.ms=0 || kaas_fail "produce after kaasctl"
kctl_expect 0 --data "$MB_DATA" status --json --watch-ms 0
python3 -c '
import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"] == "four"][0]
assert sum(p["high_watermark"] for p in t["partitions"]) == 40, t
' <<<"$KCTL_OUT" || kaas_fail "high watermarks after 40 records: $KCTL_OUT"

# A killed broker: its heartbeat stops, so it is no longer alive.
mb_kill 1
kctl_expect 0 --data "$MB_DATA" status --json --watch-ms 600
python3 -c '
import json,sys
b={x["id"]: x["state"] for x in json.load(sys.stdin)["brokers"]}
assert b == {0: "alive", 1: "silent"}, b
' <<<"$KCTL_OUT" || kaas_fail "liveness after kill -9: $KCTL_OUT"
echo "kaasctl status --json matches Metadata on 2 brokers: all good"
