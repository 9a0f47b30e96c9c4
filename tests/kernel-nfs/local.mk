# tests/kernel-nfs: the broker and the substrate checks on a real Linux NFS
# client and server (scripts/nfs-lab boots a Linux guest, User-mode Linux or
# qemu by what boots on the host, with knfsd and N nosharecache mounts of
# one export; each test runs inside it).
# The two longest start first; the other four start after the multibroker
# tests (tests/kernel-nfs/later.mk), so that at most two labs run at once
# without waiting (kn-lib.sh holds a lab slot; two slots).
KERNEL_NFS_FIRST = tests/kernel-nfs/failover.sh tests/kernel-nfs/knfsd_restart.sh
KERNEL_NFS_LATER = tests/kernel-nfs/kaasd_roundtrip.sh tests/kernel-nfs/substrate_check.sh \
	tests/kernel-nfs/conformance.sh tests/kernel-nfs/lab_selftest.sh
KERNEL_NFS_TESTS = $(KERNEL_NFS_FIRST) $(KERNEL_NFS_LATER)
# Longer (2-3.5 min), run on demand, not by CI (its 25-minute budget):
#   make -C build check TESTS=tests/kernel-nfs/silly_delete.sh
KERNEL_NFS_LONG = tests/kernel-nfs/silly_delete.sh
# Not in the sanitizer build: ASan cannot run inside User-mode Linux (its
# shadow memory needs addresses up to 0x10007fff7fff; a UML process's address
# space ends at 0x7fc0000000, and ASan aborts "Shadow memory range interleaves
# with an existing memory mapping"), and under qemu's software emulation the
# sanitizer's several-fold CPU cost on top of TCG's does not fit CI's time,
# so these run in the normal build only.
if !SANITIZERS
TESTS += $(KERNEL_NFS_FIRST)
endif
EXTRA_DIST += $(KERNEL_NFS_TESTS) $(KERNEL_NFS_LONG) tests/kernel-nfs/kn-lib.sh tests/kernel-nfs/later.mk
# The faultfs fidelity scenario (scripts/nfs-fidelity runs it on faultfs and
# on the lab's kernel mounts and compares).
check_PROGRAMS += tests/kernel-nfs/fidelity
tests_kernel_nfs_fidelity_SOURCES = tests/kernel-nfs/fidelity.c
tests_kernel_nfs_fidelity_LDADD =
