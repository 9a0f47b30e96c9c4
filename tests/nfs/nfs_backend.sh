#!/usr/bin/env bash
# The libnfs backend's own tests (tests/nfs/test_nfs_backend.c) against a
# private nfs-ganesha: close-to-open, racing exclusive creates, ESTALE,
# silly rename, bad input, threads, NFSv4 large writes, a server crash.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
kaas_scratch
mkdir "$KAAS_SCRATCH/export"
nfs_start "$KAAS_SCRATCH/export"
export KAAS_NFS_URL=$NFS_URL KAAS_NFS_DIR="$KAAS_SCRATCH/export" KAAS_NFS_URL4=$NFS_URL4
export KAAS_NFS_RESTART="'$NFS_SERVER' crash '$KAAS_SCRATCH/export' $NFS_PORT"
"$KAAS_TOP_BUILDDIR/tests/nfs/test_nfs_backend"
