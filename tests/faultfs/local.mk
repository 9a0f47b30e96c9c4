# tests/faultfs: every behaviour through the in-process front (test_model)
# and through a FUSE mount (the .sh tests; they skip only without FUSE).
check_PROGRAMS += tests/faultfs/test_model
TESTS += tests/faultfs/test_model
tests_faultfs_test_model_SOURCES = tests/faultfs/test_model.c tests/faultfs/model_fx.c \
	tests/faultfs/model_fx.h
tests_faultfs_test_model_CFLAGS = $(TEST_CFLAGS)
tests_faultfs_test_model_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/faultfs/test_model_nfs
TESTS += tests/faultfs/test_model_nfs
tests_faultfs_test_model_nfs_SOURCES = tests/faultfs/test_model_nfs.c tests/faultfs/model_fx.c \
	tests/faultfs/model_fx.h
tests_faultfs_test_model_nfs_CFLAGS = $(TEST_CFLAGS)
tests_faultfs_test_model_nfs_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/faultfs/test_lost_reply
TESTS += tests/faultfs/test_lost_reply
tests_faultfs_test_lost_reply_SOURCES = tests/faultfs/test_lost_reply.c tests/faultfs/model_fx.c \
	tests/faultfs/model_fx.h
tests_faultfs_test_lost_reply_CFLAGS = $(TEST_CFLAGS)
tests_faultfs_test_lost_reply_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/faultfs/test_fuse_nodes
TESTS += tests/faultfs/test_fuse_nodes
tests_faultfs_test_fuse_nodes_SOURCES = tests/faultfs/test_fuse_nodes.c faultfs/fuse_nodes.c
tests_faultfs_test_fuse_nodes_CFLAGS = $(TEST_CFLAGS)
tests_faultfs_test_fuse_nodes_LDADD = $(TEST_LIBS)
FAULTFS_SH_TESTS = tests/faultfs/fuse_behaviours.sh tests/faultfs/fuse_determinism.sh \
	tests/faultfs/conformance_fuse.sh tests/faultfs/conformance_fault.sh tests/faultfs/fuse_cleanup.sh
TESTS += $(FAULTFS_SH_TESTS)
EXTRA_DIST += $(FAULTFS_SH_TESTS) tests/faultfs/fuse_lib.sh
