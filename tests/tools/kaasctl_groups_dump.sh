#!/usr/bin/env bash
# kaasctl groups and dump-log: known records (keys, values, a null value,
# headers, a compressed batch, an idempotent producer's batch) and a group
# commit, checked in the table and --json output of both commands.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-lib.sh"
OFFSETS_RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"
[ -x "$OFFSETS_RAW" ] || kaas_fail "no $OFFSETS_RAW (make check builds it)"
set -e
kaasd_start
D="$KAAS_SCRATCH/data"
# 10 keyed records, uncompressed, one batch per record (linger 0).
for i in $(seq 0 9); do echo "key-$i:val \"$i\""; done |
	kc -P -t gd -K: -H trace=abc -X acks=all -X linger.ms=0 -X batch.num.messages=1
# 5 compressible records in one zstd batch from an idempotent producer.
for i in 1 2 3 4 5; do printf 'z%d-%0200d\n' $i $i; done | kc -P -t gd -X compression.codec=zstd -X enable.idempotence=true -X linger.ms=200
# A record with a null value (kcat -Z: empty value sent as null).
echo "tomb:" | kc -P -t gd -K: -Z -X acks=all
"$OFFSETS_RAW" "$BROKER" commit grp-one gd 0 4 >/dev/null || kaas_fail "commit"

# groups: committed 4, high watermark 16, lag 12; state from the coordinator.
kctl_expect 0 --data "$D" groups
kctl_has '^grp-one +[0-9]+ +0 +gd +0 +4 +16 +12$'
kctl_has '^group grp-one: state Empty, 0 member\(s\)$'
kctl_expect 0 --data "$D" groups --json
python3 -c '
import json,sys
d=json.load(sys.stdin)
g=[x for x in d["groups"] if x["group"] == "grp-one"]
assert len(g) == 1, d
o=g[0]["offsets"]
assert len(o) == 1 and o[0]["topic"] == "gd" and o[0]["partition"] == 0, o
assert o[0]["committed"] == 4 and o[0]["high_watermark"] == 16 and o[0]["lag"] == 12, o
assert g[0]["coordinator"]["broker"] == 0, g
' <<<"$KCTL_OUT" || kaas_fail "groups --json"
kctl_expect 2 --data "$D" groups --group nosuch
kctl_expect 0 --data "$D" groups --volume-only --json
python3 -c '
import json,sys
g=json.load(sys.stdin)["groups"][0]
assert g["group"] == "grp-one" and g["state"] is None and g["offsets"][0]["lag"] == 12, g
' <<<"$KCTL_OUT" || kaas_fail "groups --volume-only"

# A live consumer: state and members come from the coordinator.
timeout 60 kcat -b "$BROKER" -G live gd -X client.id=kctl-test -X auto.commit.interval.ms=100 \
	-X auto.offset.reset=earliest -q >/dev/null 2>&1 &
consumer=$!
kaas_on_exit "kill $consumer"
live() {
	kctl --data "$D" groups --group live --json >"$KAAS_SCRATCH/live.json" 2>/dev/null &&
	python3 -c '
import json,sys
g=json.load(open(sys.argv[1]))["groups"][0]
assert g["state"] == "Stable" and len(g["members"]) == 1, g
assert g["members"][0]["client_id"] == "kctl-test", g
assert g["offsets"][0]["committed"] == 16 and g["offsets"][0]["lag"] == 0, g
' "$KAAS_SCRATCH/live.json"
}
kaas_wait_for 30 live || { cat "$KAAS_SCRATCH/live.json" >&2; kaas_fail "groups: live consumer not shown as Stable with 1 member"; }
kctl_expect 0 --data "$D" groups --group live
kctl_has '^group live: state Stable, 1 member\(s\): .* \(kctl-test, '
kill $consumer
wait $consumer 2>/dev/null || true

# dump-log, text: offsets, keys, escaped values, headers, the producer.
kctl_expect 0 --data "$D" dump-log gd 0
kctl_has '^gd/0: log start 0, high watermark 16$'
kctl_has '^  offset 3 +timestamp [0-9]+ +key "key-3" +value "val \\"3\\"" +header "trace"="abc"$'
kctl_has '^  offset 15 +timestamp [0-9]+ +key "tomb" +value null'
kctl_has 'compression zstd'
kctl_has 'producer-id [0-9]+ +producer-epoch 0 +base-sequence 0 '
# --from and --json: records from offset 11 on, well-formed, as sent.
kctl_expect 0 --data "$D" dump-log gd 0 --from 11 --json
python3 -c '
import json,sys
d=json.load(sys.stdin)
recs=[r for b in d["batches"] for r in b["records"]]
assert [r["offset"] for r in recs] == list(range(11, 16)), recs
assert [r["value"] for r in recs[:4]] == ["z%d-%0200d" % (i, i) for i in (2, 3, 4, 5)], recs
assert recs[4]["key"] == "tomb" and recs[4]["value"] is None, recs[4]
b=[b for b in d["batches"] if b["compression"] == "zstd"]
assert len(b) == 1 and b[0]["producer_id"] >= 0 and b[0]["base_sequence"] == 0 and b[0]["crc_ok"], b
' <<<"$KCTL_OUT" || kaas_fail "dump-log --from --json"
kctl_expect 0 --data "$D" dump-log gd 0 --max-records 2
[ "$(grep -c '^  offset ' <<<"$KCTL_OUT")" = 2 ] || kaas_fail "--max-records 2 printed other than 2 records"
kctl_expect 2 --data "$D" dump-log nosuch 0
grep -q "no topic 'nosuch'" <<<"$KCTL_ERR" || kaas_fail "missing topic: $KCTL_ERR"
kaasd_stop
echo "kaasctl groups and dump-log: all good"
