# tests/cephfs: the cephfs:// backend (libcephfs) and the broker on CephFS,
# against a one-host lab cluster (scripts/ceph-lab).  The lab is started
# once, by cephfs.sh, which runs every check that needs it in turn (starting
# a cluster per test would not fit CI's time); test_cephfs_backend needs the
# lab's URLs in its environment: it is run by cephfs.sh, not directly.
# Built only with the backend (configure --without-cephfs: none of this).
if WITH_CEPHFS
check_PROGRAMS += tests/cephfs/test_cephfs_url tests/cephfs/test_cephfs_backend
tests_cephfs_test_cephfs_url_SOURCES = tests/cephfs/test_cephfs_url.c
tests_cephfs_test_cephfs_backend_SOURCES = tests/cephfs/test_cephfs_backend.c
TESTS += tests/cephfs/cephfs.sh tests/cephfs/test_cephfs_url
endif
# Longer (a lab of its own, two failovers of up to a session timeout), run
# on demand, not by CI:  make -C build check TESTS=tests/cephfs/failover.sh
EXTRA_DIST += tests/cephfs/cephfs.sh tests/cephfs/failover.sh
