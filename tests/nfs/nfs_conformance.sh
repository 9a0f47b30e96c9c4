#!/usr/bin/env bash
# The substrate conformance suite, and kaasctl substrate-check, on nfs://
# (NFSv3, then NFSv4; no mount) against a private nfs-ganesha.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
kaas_scratch
mkdir "$KAAS_SCRATCH/export"
nfs_start "$KAAS_SCRATCH/export"
"$KAAS_TOP_BUILDDIR/tests/conformance/conformance" "$NFS_URL" || kaas_fail "conformance suite failed on $NFS_URL"
out=$("$KAAS_TOP_BUILDDIR/kaasctl" substrate-check "$NFS_URL") || { echo "$out"; kaas_fail "substrate-check failed on $NFS_URL"; }
echo "$out"
[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
[ -z "$(ls -A "$KAAS_SCRATCH/export")" ] || kaas_fail "probes left files behind: $(ls -A "$KAAS_SCRATCH/export")"
# NFSv4 too (writes capped at 3 KiB, exclusive create by LINK: backends/nfs.h).
"$KAAS_TOP_BUILDDIR/tests/conformance/conformance" "$NFS_URL4" || kaas_fail "conformance suite failed on $NFS_URL4"
[ -z "$(ls -A "$KAAS_SCRATCH/export")" ] || kaas_fail "probes left files behind on v4: $(ls -A "$KAAS_SCRATCH/export")"
echo "conformance on nfs:// (v3 and v4): all good"
