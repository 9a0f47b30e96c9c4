# tests/kernel-nfs, the second part of the list (see local.mk): started
# after the multibroker tests.  Normal suite only, as local.mk says why.
if !SANITIZERS
TESTS += $(KERNEL_NFS_LATER)
endif
