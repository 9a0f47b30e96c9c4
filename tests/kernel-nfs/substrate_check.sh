#!/bin/bash
# On a real kernel NFS mount (scripts/nfs-lab: knfsd, mounts nosharecache,
# NFSv3): kaasctl substrate-check with host B on another mount of the export
# (--peer), once with the default mount options and once with
# lookupcache=none,actimeo=0 (the conformance suite on a mount:
# conformance.sh, a lab of its own, so each fits its --timeout under qemu's
# emulated CPU).
# kaas-test-timeout: 900
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kernel-nfs/kn-lib.sh"
kn_in_lab --hosts 4 --host-opts 2 lookupcache=none,actimeo=0 --host-opts 3 lookupcache=none,actimeo=0 \
	--timeout 300

kaasctl="$KAAS_TOP_BUILDDIR/kaasctl"
for pair in "0 1" "2 3"; do
	set -- $pair
	a=HOST$1 b=HOST$2 ao=HOST$1_OPTS
	mkdir -p "${!a}/sc" || kaas_fail "mkdir on ${!a}"
	echo "== substrate-check ${!a}/sc --peer ${!b}/sc (mount options ${!ao})"
	t0=$SECONDS
	out=$("$kaasctl" substrate-check "${!a}/sc" --peer "${!b}/sc" 2>&1); rc=$?
	echo "$out"
	echo "($((SECONDS - t0)) s)"
	[ $rc = 0 ] || kaas_fail "substrate-check with --peer failed on mounts with ${!ao}"
	[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
	grep -q "^peer (host B): ${!b}/sc" <<<"$out" || kaas_fail "host B is not the peer mount"
done
echo PASS
