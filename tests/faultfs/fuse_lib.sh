# fuse_lib.sh — start and always stop a faultfs daemon in a shell test
# (sourced after tests/lib.sh).  Every mount is unmounted and the daemon
# killed at exit, whatever happened.

FAULTFS="$KAAS_TOP_BUILDDIR/faultfs/faultfs"

ffs_require_fuse() {
	[ -c /dev/fuse ] || kaas_skip "no /dev/fuse: FUSE is not available here"
	command -v fusermount3 >/dev/null 2>&1 || kaas_skip "fusermount3 is not installed (package fuse3)"
}

# Stop a daemon (TERM, bounded wait, KILL) and make sure its mounts are gone.
ffs_stop() { # PID MOUNTDIR HOSTS
	local pid=$1 mnt=$2 n=$3 i
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	for i in $(seq 0 $((n - 1))); do
		if grep -q " $mnt/host$i " /proc/mounts; then
			kaas_unmount "$mnt/host$i"
		fi
	done
}

# ffs_start NAME HOSTS [faultfs options...]: lower $FFS_LOWER, mount dir $M.
ffs_start() {
	local name=$1 hosts=$2
	shift 2
	FFS_LOWER=$KAAS_SCRATCH/$name-lower
	M=$KAAS_SCRATCH/$name
	FFS_LOG=$KAAS_SCRATCH/$name.err
	mkdir -p "$FFS_LOWER" "$M"
	"$FAULTFS" --lower "$FFS_LOWER" --mount "$M" --hosts "$hosts" "$@" 2>"$FFS_LOG" &
	FFS_PID=$!
	kaas_on_exit "ffs_stop $FFS_PID '$M' $hosts"
	if ! kaas_wait_for 15 test -S "$M/.faultfs.sock"; then
		cat "$FFS_LOG" >&2
		kaas_fail "faultfs did not come up"
	fi
}

ffs_ctl() {
	"$FAULTFS" ctl "$M" "$@"
}

# expect DESCRIPTION ACTUAL EXPECTED
expect() {
	if [ "$2" != "$3" ]; then
		kaas_fail "$1: got '$2', expected '$3'"
	fi
	echo "ok: $1"
}

# expect_err DESCRIPTION PATTERN COMMAND...: the command fails and its
# stderr matches PATTERN.
expect_err() {
	local what=$1 pat=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		kaas_fail "$what: succeeded, expected failure matching '$pat'"
	fi
	grep -q -- "$pat" <<<"$out" || kaas_fail "$what: failed with '$out', expected '$pat'"
	echo "ok: $what ($pat)"
}
