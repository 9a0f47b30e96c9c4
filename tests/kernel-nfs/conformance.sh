#!/bin/bash
# The substrate conformance suite (tests/conformance) on a real kernel NFS
# mount (scripts/nfs-lab: knfsd, a nosharecache NFSv3 mount).
# kaas-test-timeout: 900
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kernel-nfs/kn-lib.sh"
kn_in_lab --hosts 1 --timeout 300

echo "== conformance suite on $HOST0/conf"
mkdir -p "$HOST0/conf"
t0=$SECONDS
"$KAAS_TOP_BUILDDIR/tests/conformance/conformance" "$HOST0/conf" || kaas_fail "conformance suite on the kernel mount"
echo "($((SECONDS - t0)) s)"
echo PASS
