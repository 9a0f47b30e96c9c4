#!/usr/bin/env bash
# kaasctl over nfs:// (libnfs, no mount): kaasd keeps its data on one export
# and its cluster directory on a second; kaasctl status, verify, dump-log and
# groups read them through the same URLs, and agree with what the export
# holds; a flipped byte found over NFS; an unreachable server is exit 2,
# quickly, naming the URL.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-lib.sh"
OFFSETS_RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"
mkdir "$KAAS_SCRATCH/data-export" "$KAAS_SCRATCH/cluster-export"
nfs_start "$KAAS_SCRATCH/data-export" "$KAAS_SCRATCH/cluster-export"
[ -n "$NFS_URL2" ] || kaas_fail "the NFS server did not give a URL for the second export"
set -e
V=(--data "$NFS_URL" --cluster-dir "$NFS_URL2")

kaasd_start "${V[@]}"
seq 1 40 | awk '{ printf "k%d:v%d\n", $1, $1 }' | kc -P -t overnfs -K: -X acks=all
kaasd_stop
kaasd_start "${V[@]}"
seq 41 50 | awk '{ printf "k%d:v%d\n", $1, $1 }' | kc -P -t overnfs -K: -X acks=all
[ ! -x "$OFFSETS_RAW" ] || "$OFFSETS_RAW" "$BROKER" commit nfsgroup overnfs 0 45 >/dev/null

# While the broker runs.
kctl_expect 0 "${V[@]}" status --json
python3 -c '
import json,sys
d=json.load(sys.stdin)
t=[t for t in d["topics"] if t["name"] == "overnfs"][0]
p=t["partitions"][0]
assert p["leader"] == 0 and p["high_watermark"] == 50 and p["error"] is None, p
assert [b["state"] for b in d["brokers"]] == ["alive"], d["brokers"]
' <<<"$KCTL_OUT" || kaas_fail "status over nfs://: $KCTL_OUT"
if [ -x "$OFFSETS_RAW" ]; then
	kctl_expect 0 "${V[@]}" groups
	kctl_has '^nfsgroup +[0-9]+ +0 +overnfs +0 +45 +50 +5$'
fi
kctl_expect 0 "${V[@]}" dump-log overnfs 0 --from 44 --json
python3 -c '
import json,sys
d=json.load(sys.stdin)
r=[r for b in d["batches"] for r in b["records"]]
assert [(x["offset"], x["key"], x["value"]) for x in r] == [(o, "k%d" % (o + 1), "v%d" % (o + 1)) for o in range(44, 50)], r
' <<<"$KCTL_OUT" || kaas_fail "dump-log over nfs://"
kctl_expect 0 "${V[@]}" verify
kctl_has '^clean: 0 error'
kaasd_stop

# A flipped byte in the sealed segment, seen through the NFS server.
sealed=$(cd "$KAAS_SCRATCH/data-export" && ls overnfs/0/*.log | head -n1)
flip_record_byte "$KAAS_SCRATCH/data-export/$sealed"
kctl_expect 1 "${V[@]}" verify --topic overnfs
kctl_has "^error +bad-crc +nfs://127\\.0\\.0\\.1$KAAS_SCRATCH/data-export/$sealed\\?nfsport=$NFS_PORT&"

# A server that is not there.
dead="nfs://127.0.0.1$KAAS_SCRATCH/data-export?nfsport=1&mountport=1"
t0=$SECONDS
kctl_expect 2 --data "$dead" status
grep -q "cannot open data volume $dead" <<<"$KCTL_ERR" || kaas_fail "unreachable server: $KCTL_ERR"
[ $((SECONDS - t0)) -lt 30 ] || kaas_fail "took $((SECONDS - t0)) s to fail"
echo "kaasctl over nfs://: all good"
