#!/usr/bin/env bash
# The conformance suite on the in-process fault model (fault+ URLs): it
# passes on the nfs-floor profile and FAILS, naming the broken guarantee,
# with each disqualified switch on.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
conf="$KAAS_TOP_BUILDDIR/tests/conformance/conformance"
kaasctl="$KAAS_TOP_BUILDDIR/kaasctl"
mkdir "$KAAS_SCRATCH/vol"
url="fault+$KAAS_SCRATCH/vol?seed=5"

"$conf" "$url" || kaas_fail "conformance failed on the nfs-floor fault model ($url)"

for pair in rename-atomic:rename_copy exclusive-create:excl_race fsync-visible:fsync_lies; do
	check=${pair%%:*} switch=${pair#*:}
	out=$("$conf" --expect-fail "$check" "$url&$switch=1" 2>&1) ||
		{ echo "$out"; kaas_fail "$switch: the suite did not catch it ($check passed)"; }
	echo "$out" | tail -1
	grep -q "FAIL (caught)" <<<"$out" || kaas_fail "$switch: no failure reported"
done

# kaasctl substrate-check reports the broken guarantee too
set +e
out=$("$kaasctl" substrate-check --renames 200 --rounds 50 "$url&fsync_lies=1" 2>&1); rc=$?
set -e
echo "$out"
[ $rc -ne 0 ] || kaas_fail "substrate-check passed a lying fsync"
grep -q "FAILED.*fsync-visible" <<<"$out" || kaas_fail "substrate-check did not name fsync-visible"
[ -z "$(ls -A "$KAAS_SCRATCH/vol")" ] || kaas_fail "probes left files: $(ls -A "$KAAS_SCRATCH/vol")"
echo "conformance on fault+: passes clean, catches every disqualified switch"
