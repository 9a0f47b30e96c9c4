# tests/nfs: the libnfs backend against a real NFS server (nfs-ganesha,
# started per test by scripts/nfs-server through tests/nfs/nfs-lib.sh).
# test_nfs_backend needs the server's URL in its environment: it is run by
# nfs_backend.sh, not directly.
check_PROGRAMS += tests/nfs/test_nfs_backend
tests_nfs_test_nfs_backend_SOURCES = tests/nfs/test_nfs_backend.c
TESTS += tests/nfs/nfs_server.sh tests/nfs/nfs_backend.sh tests/nfs/nfs_conformance.sh \
	tests/nfs/kaasd_nfs.sh tests/nfs/log_over_nfs.sh
EXTRA_DIST += tests/nfs/nfs-lib.sh tests/nfs/lsan.supp tests/nfs/nfs_server.sh tests/nfs/nfs_backend.sh \
	tests/nfs/nfs_conformance.sh tests/nfs/kaasd_nfs.sh tests/nfs/log_over_nfs.sh
