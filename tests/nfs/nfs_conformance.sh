#!/usr/bin/env bash
# The substrate conformance suite, and kaasctl substrate-check, on nfs://
# (NFSv3, then NFSv4; no mount) against a private nfs-ganesha.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
kaas_scratch
mkdir "$KAAS_SCRATCH/export"
nfs_start "$KAAS_SCRATCH/export"
"$KAAS_TOP_BUILDDIR/tests/conformance/conformance" "$NFS_URL" || kaas_fail "conformance suite failed on $NFS_URL"
# kaasctl's substrate-check: the same probes the suite just ran, at a fifth
# of the counts (its table and exit status are what is checked here).
out=$("$KAAS_TOP_BUILDDIR/kaasctl" substrate-check --renames 200 --rounds 40 "$NFS_URL") || { echo "$out"; kaas_fail "substrate-check failed on $NFS_URL"; }
echo "$out"
[ "$(grep -c ' PASS ' <<<"$out")" -eq 8 ] || kaas_fail "expected 8 PASS rows"
[ -z "$(ls -A "$KAAS_SCRATCH/export")" ] || kaas_fail "probes left files behind: $(ls -A "$KAAS_SCRATCH/export")"
# NFSv4 too (writes capped at 3 KiB, exclusive create by LINK: backends/nfs.h).
# NFSv4 (libnfs's v4 paths) in the normal suite; the sanitizer suite checks
# the backend's memory on v3 (the same code above the protocol calls).
if [ -z "${KAAS_SANITIZERS:-}" ]; then
	"$KAAS_TOP_BUILDDIR/tests/conformance/conformance" "$NFS_URL4" ||
		kaas_fail "conformance suite failed on $NFS_URL4"
	[ -z "$(ls -A "$KAAS_SCRATCH/export")" ] ||
		kaas_fail "probes left files behind on v4: $(ls -A "$KAAS_SCRATCH/export")"
fi
echo "conformance on nfs:// (v3${KAAS_SANITIZERS:+; v4 in the normal suite}${KAAS_SANITIZERS:-" and v4"}): all good"
