# Cluster state on the volume: producer-id blocks, group offsets.
CLUSTER_TESTS = tests/cluster/test_producer_ids tests/cluster/test_group_store
check_PROGRAMS += $(CLUSTER_TESTS)
TESTS += $(CLUSTER_TESTS)
tests_cluster_test_producer_ids_SOURCES = tests/cluster/test_producer_ids.c
tests_cluster_test_producer_ids_CFLAGS = $(TEST_CFLAGS)
tests_cluster_test_producer_ids_LDADD = $(TEST_LIBS)
tests_cluster_test_group_store_SOURCES = tests/cluster/test_group_store.c
tests_cluster_test_group_store_CFLAGS = $(TEST_CFLAGS)
tests_cluster_test_group_store_LDADD = $(TEST_LIBS)
