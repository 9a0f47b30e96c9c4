#!/usr/bin/env bash
# kaasd with no mount at all: --data on one NFS export and --cluster-dir on a
# second (KAAS_CLUSTER_DIR on its own volume), reached through libnfs.  A kcat
# round trip, a clean restart that keeps every message, the files where they
# belong on the server, and a clear, bounded error for a server that is not
# there.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
mkdir "$KAAS_SCRATCH/data-export" "$KAAS_SCRATCH/cluster-export"
nfs_start "$KAAS_SCRATCH/data-export" "$KAAS_SCRATCH/cluster-export"
[ -n "$NFS_URL2" ] || kaas_fail "the NFS server did not give a URL for the second export"

# 1. Round trip: 2,000 keyed messages, some with null values.
kaasd_start --data "$NFS_URL" --cluster-dir "$NFS_URL2"
seq 1 2000 | awk '{ printf "k%d:value-%d\n", $1, $1 }' >"$KAAS_SCRATCH/in"
kc -P -t overnfs -K: -l "$KAAS_SCRATCH/in" -X acks=all || kaas_fail "produce over nfs:// failed"
kc -C -t overnfs -o beginning -e -q -K: -f '%k:%s\n' >"$KAAS_SCRATCH/out" || kaas_fail "consume failed"
cmp -s "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out" || { diff "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out" | head; kaas_fail "round trip over nfs:// lost or changed messages"; }

# 2. The bytes are on the server's exports, each in its own volume.
ls "$KAAS_SCRATCH/data-export/overnfs/0/"*.log >/dev/null 2>&1 || kaas_fail "no segment in the data export"
[ -f "$KAAS_SCRATCH/cluster-export/topics/overnfs.json" ] || kaas_fail "no topic document in the cluster export"
[ ! -e "$KAAS_SCRATCH/data-export/__cluster" ] || kaas_fail "cluster state leaked into the data export"

# 3. A clean restart over NFS keeps every message.
kaasd_stop
kaasd_start --data "$NFS_URL" --cluster-dir "$NFS_URL2"
kc -C -t overnfs -o beginning -e -q -K: -f '%k:%s\n' >"$KAAS_SCRATCH/out2" || kaas_fail "consume after restart failed"
cmp -s "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out2" || kaas_fail "messages changed across a restart over nfs://"
kaasd_stop

# 4. Without --cluster-dir the cluster state defaults to <data>/__cluster,
#    on the same NFS export (the URL's query stays a query).
rm -rf "$KAAS_SCRATCH/data-export/"*
kaasd_start --data "$NFS_URL"
kc -P -t onevolume -K: -l "$KAAS_SCRATCH/in" -X acks=all || kaas_fail "produce with the default cluster dir failed"
kc -C -t onevolume -o beginning -e -q -K: -f '%k:%s\n' >"$KAAS_SCRATCH/out3" || kaas_fail "consume failed"
cmp -s "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out3" || kaas_fail "round trip with the default cluster dir changed messages"
[ -d "$KAAS_SCRATCH/data-export/__cluster/topics" ] || kaas_fail "no __cluster in the data export"
kaasd_stop

# 5. A server that is not there: a clear error naming the URL, quickly.
dead="nfs://127.0.0.1$KAAS_SCRATCH/data-export?nfsport=1&mountport=1"
t0=$SECONDS
set +e
timeout 60 "$KAASD" --data "$dead" --listen 127.0.0.1:0 2>"$KAAS_SCRATCH/dead.log"
rc=$?
set -e
cat "$KAAS_SCRATCH/dead.log"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || kaas_fail "kaasd on an unreachable server: exit $rc (124 = hung)"
grep -q "nfsport=1" "$KAAS_SCRATCH/dead.log" || kaas_fail "the error does not name the URL"
[ $((SECONDS - t0)) -lt 30 ] || kaas_fail "took $((SECONDS - t0)) s to fail"
echo "kaasd over nfs:// (data and cluster on two exports): all good"
