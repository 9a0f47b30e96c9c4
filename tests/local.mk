# Tests: each area keeps its own fragment.  Support code shared by C tests:
check_LIBRARIES += libkaastest.a
libkaastest_a_SOURCES = tests/support/crashsub.c tests/support/crashsub.h \
	tests/support/testdir.c tests/support/testdir.h tests/support/inchild.c tests/support/inchild.h \
	tests/support/kwire.c tests/support/kwire.h tests/support/kgroup.c tests/support/kgroup.h
TEST_LIBS = libkaastest.a libkaas_check.a $(KAAS_LIBS) $(CMOCKA_LIBS)
TEST_CFLAGS = $(AM_CFLAGS)
# Programs without their own _LDADD (the tests) link this:
LDADD = $(TEST_LIBS)

# make check starts the tests in this order, several at a time
# (scripts/test): the areas with the longest tests first, so that no long
# test starts last and runs alone at the end.
include tests/kernel-nfs/local.mk
include tests/cephfs/local.mk
include tests/nfs/local.mk
include tests/multibroker/local.mk
include tests/kernel-nfs/later.mk
include tests/log/local.mk
include tests/groups/local.mk
include tests/kafka/local.mk
include tests/faultfs/local.mk
include tests/unit/local.mk
include tests/conformance/local.mk
include tests/cluster/local.mk
include tests/topics/local.mk
include tests/deploy/local.mk
include tests/chaos/local.mk
include tests/layers/local.mk
include tests/security/local.mk
include tests/tools/local.mk
include tests/metrics/local.mk
include tests/txn/local.mk
include tests/peer/local.mk
