#!/usr/bin/env bash
# CephFS, one lab for the whole family (scripts/ceph-lab: a monitor, a
# manager, an OSD and an MDS on 127.0.0.1, started once here, stopped and
# removed at exit even on failure), and on it, in turn:
#  1. kaasctl substrate-check cephfs://A --peer cephfs://B: the contract's
#     probes (the conformance suite's) with two libcephfs clients as the
#     two hosts;
#  2. test_cephfs_backend: error codes, large gathered writes, unlink of a
#     file another client holds, refused clients, and eviction (an evicted
#     client's fsync fails, its synced bytes are intact for the others);
#  3. kaasctl substrate-check on two ceph-fuse mounts (--peer: the other);
#  4. kaasd on cephfs:// (data and cluster directory on two paths), a kcat
#     round trip of 2,000 keyed messages, a clean restart that keeps them,
#     the segments seen through a ceph-fuse mount.
# Each step prints its wall time.  Ceph, root or /dev/fuse missing is a
# skip (a failure under CI=true, see kaas_skip).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
LAB="$KAAS_TOP_SRCDIR/scripts/ceph-lab"
kaasctl="$KAAS_TOP_BUILDDIR/kaasctl"
L="$KAAS_SCRATCH/lab"
t_all=$SECONDS
step() { echo "== $* (at +$((SECONDS - t_all)) s)"; }

# The lab's OSD on a sparse file by default: nothing outside the scratch
# directory (a loop device) to leak if the test is killed.
export KAAS_CEPH_LAB_STORE=${KAAS_CEPH_LAB_STORE:-file}
# Registered before the start: a start that fails half-way stops itself,
# this stops whatever a later step left (mounts, ceph-fuse, daemons).
kaas_on_exit "'$LAB' stop '$L'"
step "starting the lab"
t0=$SECONDS
out=$("$LAB" start "$L" 2>&1); rc=$?
echo "$out"
[ $rc -eq 77 ] && kaas_skip "the Ceph lab cannot run here: $(tail -1 <<<"$out")"
[ $rc -eq 0 ] || kaas_fail "the Ceph lab did not start (exit $rc): $(tail -1 <<<"$out")"
echo "lab serving in $((SECONDS - t0)) s"

# Client names are per run: an evicted client is blocklisted for an hour.
url() { "$LAB" url "$L" "$1" "${2:-}" || kaas_fail "no URL for client.$1"; }
M="$KAAS_SCRATCH/mnt"
"$LAB" mount "$L" "$M/a" kaas-fuse-a || kaas_fail "cannot mount A"
"$LAB" mount "$L" "$M/b" kaas-fuse-b || kaas_fail "cannot mount B"
mkdir -p "$M/a/check" "$M/a/backend" "$M/a/fuse" "$M/a/data" "$M/a/cluster" ||
	kaas_fail "cannot make the test directories through mount A"

# The probes at a twentieth of their counts: on CephFS an exclusive create
# or rename in a directory another client is reading waits for the MDS's
# journal (up to its 5 s tick), so the default 1,000 renames take many
# minutes (100 took 32-107 s here, by the machine's load).
quick=(--renames 50 --rounds 10)
# Through ceph-fuse each stall is longer (the kernel's FUSE client holds the
# readers' caps): 100 renames took 300 s, 20 took 78-85 s.
fuse_quick=(--renames 15 --rounds 5)
step "1. substrate-check across two libcephfs clients"
t0=$SECONDS
out=$("$kaasctl" substrate-check "${quick[@]}" "$(url kaas-a check)" --peer "$(url kaas-b check)" 2>&1) ||
	{ echo "$out"; kaas_fail "substrate-check --peer failed on two cephfs:// clients"; }
echo "$out"
[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
grep -q "^peer (host B): cephfs://kaas-b@" <<<"$out" || kaas_fail "the table does not name the peer"
[ -z "$(ls -A "$M/b/check")" ] || kaas_fail "probes left files behind: $(ls -A "$M/b/check")"
echo "substrate-check --peer on cephfs:// in $((SECONDS - t0)) s"

step "2. the backend's own tests (eviction last)"
t0=$SECONDS
export KAAS_CEPHFS_URL_A=$(url kaas-a backend) KAAS_CEPHFS_URL_B=$(url kaas-b backend)
export KAAS_CEPHFS_URL_E=$(url kaas-evict-$$ backend)
export KAAS_CEPHFS_EVICT_E="'$LAB' evict '$L' kaas-evict-$$"
# a key of the right form that this cluster never issued
printf '[client.kaas-a]\n\tkey = %s\n' "$(ceph-authtool --gen-print-key)" >"$KAAS_SCRATCH/bad.keyring"
export KAAS_CEPHFS_BADKEY="${KAAS_CEPHFS_URL_A%%keyring=*}keyring=$KAAS_SCRATCH/bad.keyring&timeout=3"
"$KAAS_TOP_BUILDDIR/tests/cephfs/test_cephfs_backend" || kaas_fail "test_cephfs_backend failed"
echo "backend tests in $((SECONDS - t0)) s"

step "3. substrate-check on two ceph-fuse mounts"
t0=$SECONDS
out=$("$kaasctl" substrate-check "${fuse_quick[@]}" "$M/a/fuse" --peer "$M/b/fuse" 2>&1) ||
	{ echo "$out"; kaas_fail "substrate-check --peer failed on two ceph-fuse mounts"; }
echo "$out"
[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
[ -z "$(ls -A "$M/a/fuse")" ] || kaas_fail "probes left files behind: $(ls -A "$M/a/fuse")"
echo "substrate-check --peer on ceph-fuse in $((SECONDS - t0)) s"

step "4. kaasd on cephfs://"
t0=$SECONDS
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
data=$(url kaas-broker data) cluster=$(url kaas-broker cluster)
kaasd_start --data "$data" --cluster-dir "$cluster"
seq 1 2000 | awk '{ printf "k%d:value-%d\n", $1, $1 }' >"$KAAS_SCRATCH/in"
kc() { timeout 60 kcat -b "$BROKER" "$@"; }
kc -P -t overceph -K: -l "$KAAS_SCRATCH/in" -X acks=all || kaas_fail "produce over cephfs:// failed"
kc -C -t overceph -o beginning -e -q -K: -f '%k:%s\n' >"$KAAS_SCRATCH/out" || kaas_fail "consume failed"
cmp -s "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out" ||
	{ diff "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out" | head; kaas_fail "round trip over cephfs:// lost or changed messages"; }
kaasd_stop
kaasd_start --data "$data" --cluster-dir "$cluster"
kc -C -t overceph -o beginning -e -q -K: -f '%k:%s\n' >"$KAAS_SCRATCH/out2" || kaas_fail "consume after restart failed"
cmp -s "$KAAS_SCRATCH/in" "$KAAS_SCRATCH/out2" || kaas_fail "messages changed across a restart over cephfs://"
kaasd_stop
ls "$M/b/data/overceph/0/"*.log >/dev/null 2>&1 || kaas_fail "no segment seen through the ceph-fuse mount"
[ -f "$M/b/cluster/topics/overceph.json" ] || kaas_fail "no topic document in the cluster directory"
[ ! -e "$M/b/data/__cluster" ] || kaas_fail "cluster state leaked into the data directory"
echo "kaasd round trip on cephfs:// in $((SECONDS - t0)) s"

step "stopping the lab"
t0=$SECONDS
"$LAB" stop "$L" || kaas_fail "the lab did not stop"
echo "lab stopped in $((SECONDS - t0)) s; whole test $((SECONDS - t_all)) s"
echo "CephFS: all good"
