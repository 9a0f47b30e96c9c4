#!/usr/bin/env bash
# kaas-test-timeout: 2400
# The partition-log tests that take a substrate URL, run over nfs:// (NFSv3,
# no mount) against a private nfs-ganesha: append/read/roll/retention, zombie
# fencing between two NFS clients, the crash sweep, and a cleaning pass
# crashed at its steps, and the cleaner with transactions (issue 21).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/nfs/nfs-lib.sh"
mkdir "$KAAS_SCRATCH/export"
nfs_start "$KAAS_SCRATCH/export"
export KAAS_TEST_URL="$NFS_URL"
# The crash sweep over nfs:// checks a sixth of the failure points the local
# run checks (tests/log/test_log_crash: every point in the normal suite,
# KAAS_CRASH_STRIDE in the sanitizer suite): this run is about the backend
# under crashes, and each point costs a few NFS round trips.
export KAAS_CRASH_STRIDE=$(( ${KAAS_CRASH_STRIDE:-1} * 6 ))
tests="test_log_basic test_log_fence test_log_crash test_log_clean_crash test_log_clean_txn"
# The sanitizer suite runs the crash sweeps locally (tests/log) and the
# backend under ASan in nfs_backend.sh and kaasd_nfs.sh: here it runs the
# plain log tests only (the sweeps over nfs:// under ASan took 3.5 min).
[ -n "${KAAS_SANITIZERS:-}" ] && tests="test_log_basic test_log_fence"
for t in $tests; do
	echo "== $t on $KAAS_TEST_URL"
	timeout 900 "$KAAS_TOP_BUILDDIR/tests/log/$t" || kaas_fail "$t failed over nfs://"
done
echo "partition-log tests over nfs://: all good"
