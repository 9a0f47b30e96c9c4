#!/usr/bin/env bash
# kaasctl substrate-check: a table and exit 0 on a good directory; a non-zero
# exit naming the broken guarantee where the guarantees cannot hold.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaasctl="$KAAS_TOP_BUILDDIR/kaasctl"
kaas_scratch

# 1. A local directory qualifies.
mkdir "$KAAS_SCRATCH/good"
out=$("$kaasctl" substrate-check "$KAAS_SCRATCH/good") || { echo "$out"; kaas_fail "substrate-check failed on a local directory"; }
echo "$out"
[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
grep -q '^1. rename within a directory is atomic' <<<"$out" || kaas_fail "no row for guarantee 1"
[ -z "$(ls -A "$KAAS_SCRATCH/good")" ] || kaas_fail "substrate-check left files behind: $(ls -A "$KAAS_SCRATCH/good")"

# 2. file:// URLs name the same backend.
"$kaasctl" substrate-check --renames 50 --rounds 20 "file://$KAAS_SCRATCH/good" >/dev/null || kaas_fail "file:// URL failed"

# 3. A missing directory: non-zero, and the message names the URL.
set +e
out=$("$kaasctl" substrate-check "$KAAS_SCRATCH/nope" 2>&1); rc=$?
set -e
echo "$out"
[ $rc -ne 0 ] || kaas_fail "a missing directory passed"
grep -q "$KAAS_SCRATCH/nope" <<<"$out" || kaas_fail "the error does not name the URL"

# 4. A read-only directory: every guarantee row fails and names why.
mkdir "$KAAS_SCRATCH/src" "$KAAS_SCRATCH/ro"
if [ "$(id -u)" = 0 ] && mount --bind "$KAAS_SCRATCH/src" "$KAAS_SCRATCH/ro" 2>/dev/null; then
	kaas_on_exit "umount -l '$KAAS_SCRATCH/ro'"
	mount -o remount,bind,ro "$KAAS_SCRATCH/ro" || kaas_fail "cannot remount read-only"
elif [ "$(id -u)" != 0 ]; then
	chmod 555 "$KAAS_SCRATCH/ro"
else
	kaas_skip "cannot make a read-only directory (bind mount refused)"
fi
set +e
out=$("$kaasctl" substrate-check "$KAAS_SCRATCH/ro" 2>&1); rc=$?
set -e
echo "$out"
[ $rc -eq 1 ] || kaas_fail "read-only directory: exit $rc, expected 1"
grep -q '^1. rename within a directory is atomic *FAIL' <<<"$out" || kaas_fail "guarantee 1 not reported as FAIL"
grep -q 'Read-only file system\|Permission denied' <<<"$out" || kaas_fail "the reason is not named"
grep -q 'FAILED:.*rename-atomic' <<<"$out" || kaas_fail "summary does not name the failed guarantee"

# 5. Bad usage is a clear error.
set +e
"$kaasctl" substrate-check --only no-such-check "$KAAS_SCRATCH/good" 2>/dev/null; rc=$?
set -e
[ $rc -eq 2 ] || kaas_fail "unknown check name: exit $rc, expected 2"
echo "substrate-check CLI: all good"
