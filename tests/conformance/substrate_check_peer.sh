#!/usr/bin/env bash
# kaasctl substrate-check URL --peer URL2: the two-host probes use URL2 as
# the second host (another client's view of the same volume), not a second
# instance of URL.
#  1. two plain paths naming one directory: passes, the table names the peer,
#     nothing is left behind;
#  2. a peer that is not the same volume: fails, and says so;
#  3. faultfs, host0 with peer host1, where a rule breaks opens on host1
#     only: the check of host0 alone passes, with --peer host1 the
#     cross-host probes fail and name host B's error.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaasctl="$KAAS_TOP_BUILDDIR/kaasctl"
kaas_scratch
quick=(--renames 100 --rounds 20)

# 1.
mkdir "$KAAS_SCRATCH/vol" "$KAAS_SCRATCH/other"
ln -s "$KAAS_SCRATCH/vol" "$KAAS_SCRATCH/alias"
out=$("$kaasctl" substrate-check "${quick[@]}" "$KAAS_SCRATCH/vol" --peer "$KAAS_SCRATCH/alias" 2>&1) ||
	{ echo "$out"; kaas_fail "substrate-check --peer failed on two paths of one directory"; }
echo "$out"
[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
grep -q "^peer (host B): $KAAS_SCRATCH/alias" <<<"$out" || kaas_fail "the table does not name the peer"
[ -z "$(ls -A "$KAAS_SCRATCH/vol")" ] || kaas_fail "left files behind: $(ls -A "$KAAS_SCRATCH/vol")"

# 2.
out=$("$kaasctl" substrate-check "${quick[@]}" "$KAAS_SCRATCH/vol" --peer "$KAAS_SCRATCH/other" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] || kaas_fail "a peer that is another directory: exit $rc, expected 1"
grep -q "does not see" <<<"$out" || kaas_fail "the failure does not say the peer does not see the volume"
[ -z "$(ls -A "$KAAS_SCRATCH/vol")" ] || kaas_fail "left files behind: $(ls -A "$KAAS_SCRATCH/vol")"
[ -z "$(ls -A "$KAAS_SCRATCH/other")" ] || kaas_fail "wrote into the peer: $(ls -A "$KAAS_SCRATCH/other")"

# 3.
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
ffs_start peer 2 --seed 3
ffs_ctl set '{"op":"open","path":"*/c2o","host":1,"fault":"EIO","times":-1}' >/dev/null ||
	kaas_fail "cannot set the faultfs rule"
out=$("$kaasctl" substrate-check "${quick[@]}" --only close-to-open "$M/host0" 2>&1) ||
	{ echo "$out"; kaas_fail "host0 alone failed close-to-open (the rule is for host1 only)"; }
out=$("$kaasctl" substrate-check "${quick[@]}" --only close-to-open,fsync-visible "$M/host0" --peer "$M/host1" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] || kaas_fail "host0 --peer host1 with host1's opens failing: exit $rc, expected 1"
grep -q '^3. close-to-open consistency *FAIL.*host B' <<<"$out" || kaas_fail "close-to-open did not fail on host B"
grep -q 'an fsynced write is visible to a new open *PASS' <<<"$out" || kaas_fail "fsync-visible should pass (its file has another name)"
ffs_ctl clear >/dev/null
out=$("$kaasctl" substrate-check "${quick[@]}" "$M/host0" --peer "$M/host1" 2>&1) ||
	{ echo "$out"; kaas_fail "faultfs host0 --peer host1 failed without faults"; }
echo "$out"
echo "substrate-check --peer: all good"
