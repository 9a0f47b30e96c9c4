#!/usr/bin/env bash
# The shell tests never leave a mount or a daemon behind: a test that fails
# half-way, and a daemon that was SIGKILLed (its mounts dead), are both
# cleaned up by the exit hooks of fuse_lib.sh.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
kaas_scratch

# 1. A test that fails with its mount up.
cat >"$KAAS_SCRATCH/failing.sh" <<'SH'
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
kaas_scratch
ffs_start f 2
echo "$FFS_PID $M" >"$1"
echo x >"$M/host0/x"
kaas_fail "failing on purpose with the mount up"
SH
bash "$KAAS_SCRATCH/failing.sh" "$KAAS_SCRATCH/info" && kaas_fail "the failing test passed"
read -r pid mnt <"$KAAS_SCRATCH/info"
kill -0 "$pid" 2>/dev/null && kaas_fail "daemon $pid still running after a failed test"
grep -q " $mnt/" /proc/mounts && kaas_fail "mount left behind: $(grep " $mnt/" /proc/mounts)"
echo "ok: a failing test left no daemon and no mount"

# 2. A daemon killed with SIGKILL: its mounts are dead, the hooks still remove them.
cat >"$KAAS_SCRATCH/killed.sh" <<'SH'
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
kaas_scratch
ffs_start k 2
echo "$FFS_PID $M" >"$1"
kill -KILL "$FFS_PID"
wait "$FFS_PID" 2>/dev/null
ls "$M/host0" >/dev/null 2>&1 && exit 3 # a dead mount does not answer
exit 0
SH
bash "$KAAS_SCRATCH/killed.sh" "$KAAS_SCRATCH/info2" || kaas_fail "killed-daemon script failed ($?)"
read -r pid mnt <"$KAAS_SCRATCH/info2"
grep -q " $mnt/" /proc/mounts && kaas_fail "dead mount left behind: $(grep " $mnt/" /proc/mounts)"
echo "ok: a SIGKILLed daemon's dead mounts were removed"
