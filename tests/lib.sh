# tests/lib.sh — shared helpers for kaas's shell tests (sourced, not run).
#
# Exit codes follow automake: 0 pass, 77 skip, anything else fail.
# Under CI (CI=true) or KAAS_NO_SKIP=1 a skip becomes a failure, so CI can
# never go green by skipping.

: "${KAAS_TOP_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${KAAS_TOP_BUILDDIR:=$PWD}"

kaas_skip() {
	if [ "${CI:-}" = true ] || [ "${KAAS_NO_SKIP:-}" = 1 ]; then
		echo "FAIL (would skip, but skipping is not allowed here): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

kaas_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A fresh scratch directory removed at exit (with whatever cleanup the test
# registered through kaas_on_exit).
kaas_scratch() {
	KAAS_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/kaas-test.XXXXXX")
	export KAAS_SCRATCH
	kaas_on_exit "rm -rf '$KAAS_SCRATCH'"
}

KAAS_EXIT_HOOKS=()
kaas_on_exit() {
	KAAS_EXIT_HOOKS=("$1" "${KAAS_EXIT_HOOKS[@]}")
}
kaas_run_exit_hooks() {
	local rc=$?
	for h in "${KAAS_EXIT_HOOKS[@]}"; do
		eval "$h" >/dev/null 2>&1 || true
	done
	exit $rc
}
trap kaas_run_exit_hooks EXIT
trap 'exit 130' INT TERM

# Wait (bounded) for a command to succeed: kaas_wait_for SECONDS CMD...
kaas_wait_for() {
	local secs=$1
	shift
	local end=$((SECONDS + secs))
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
	return 0
}

# Unmount a FUSE mount for sure: fusermount3 -u, then lazily.
kaas_unmount() {
	fusermount3 -u "$1" 2>/dev/null || fusermount3 -u -z "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true
}
