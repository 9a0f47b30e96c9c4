#!/usr/bin/env bash
# scripts/nfs-server: start with two exports answers on both (v3 and v4),
# status tells, stop leaves nothing running, bad input is a clear error.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
kaas_scratch
mkdir "$KAAS_SCRATCH/data" "$KAAS_SCRATCH/cluster"
echo one >"$KAAS_SCRATCH/data/a"
echo two >"$KAAS_SCRATCH/cluster/b"
nfs_start "$KAAS_SCRATCH/data" "$KAAS_SCRATCH/cluster"
port=$NFS_PORT
"$NFS_SERVER" status "$KAAS_SCRATCH/data" "$port" || kaas_fail "status says not running"
pid=$(cat "/tmp/kaas-nfs-$port/ganesha.pid")
kill -0 "$pid" || kaas_fail "no ganesha process"
cl=$("$NFS_SERVER" url "$KAAS_SCRATCH/cluster" "$port")
timeout 10 nfs-ls "$NFS_URL" | grep -q ' a$' || kaas_fail "first export not listed over v3"
timeout 10 nfs-ls "$cl" | grep -q ' b$' || kaas_fail "second export not listed over v3"
timeout 10 nfs-ls "nfs://127.0.0.1/export2?version=4&nfsport=$port" | grep -q ' b$' || kaas_fail "second export not listed over v4"

# A second server on other ports, beside the first.
mkdir "$KAAS_SCRATCH/other"
p2=$((port + 2))
nfs_port_free $p2 || p2=$((port + 50))
kaas_on_exit "'$NFS_SERVER' stop '$KAAS_SCRATCH/other' $p2"
"$NFS_SERVER" start "$KAAS_SCRATCH/other" $p2 >/dev/null || kaas_fail "second server did not start"
"$NFS_SERVER" status "$KAAS_SCRATCH/other" $p2 >/dev/null || kaas_fail "second server not answering"
"$NFS_SERVER" stop "$KAAS_SCRATCH/other" $p2 || kaas_fail "second server stop failed"
"$NFS_SERVER" status "$KAAS_SCRATCH/data" "$port" >/dev/null || kaas_fail "stopping the second server broke the first"

# Stop leaves nothing running.
"$NFS_SERVER" stop "$KAAS_SCRATCH/data" "$port" || kaas_fail "stop failed"
kill -0 "$pid" 2>/dev/null && kaas_fail "ganesha $pid still running after stop"
[ -e "/tmp/kaas-nfs-$port" ] && kaas_fail "state directory left behind"
nfs_port_free "$port" || kaas_fail "ports still listening after stop"
"$NFS_SERVER" status "$KAAS_SCRATCH/data" "$port" >/dev/null && kaas_fail "status says running after stop"
"$NFS_SERVER" stop "$KAAS_SCRATCH/data" "$port" || kaas_fail "a second stop is not a no-op"

# Bad input.
set +e
out=$("$NFS_SERVER" start "$KAAS_SCRATCH/missing" "$port" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "missing: not a directory" <<<"$out" || kaas_fail "missing dir: rc=$rc: $out"
out=$("$NFS_SERVER" start "$KAAS_SCRATCH/data" 80 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "out of range" <<<"$out" || kaas_fail "bad port: rc=$rc: $out"
out=$("$NFS_SERVER" start 2>&1); rc=$?
[ $rc -eq 2 ] || kaas_fail "no arguments: rc=$rc"
set -e
echo "nfs-server: all good"
