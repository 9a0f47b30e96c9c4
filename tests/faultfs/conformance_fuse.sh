#!/usr/bin/env bash
# The conformance suite on a faultfs host view (nfs-floor): it passes, and
# with each disqualified switch turned on through `faultfs ctl` it FAILS,
# naming the broken guarantee; kaasctl substrate-check reports it too.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
kaas_scratch
conf="$KAAS_TOP_BUILDDIR/tests/conformance/conformance"
kaasctl="$KAAS_TOP_BUILDDIR/kaasctl"
ffs_start c 2 --seed 9

"$conf" "$M/host0" || kaas_fail "conformance failed on the faultfs host view"

for pair in rename-atomic:rename_copy exclusive-create:excl_race fsync-visible:fsync_lies; do
	check=${pair%%:*} switch=${pair#*:}
	ffs_ctl switch "$switch" on >/dev/null || kaas_fail "cannot turn $switch on"
	out=$("$conf" --expect-fail "$check" "$M/host0" 2>&1) ||
		{ echo "$out"; kaas_fail "$switch: the suite did not catch it ($check passed)"; }
	echo "$out" | tail -1
	if [ "$switch" = rename_copy ]; then
		set +e
		sc=$("$kaasctl" substrate-check --renames 300 --rounds 20 "$M/host1" 2>&1); rc=$?
		set -e
		echo "$sc"
		[ $rc -ne 0 ] || kaas_fail "substrate-check passed a copy+delete rename"
		grep -q "FAILED.*rename-atomic" <<<"$sc" || kaas_fail "substrate-check did not name rename-atomic"
	fi
	ffs_ctl switch "$switch" off >/dev/null
done
echo "conformance on a faultfs view: passes clean, catches every disqualified switch"
