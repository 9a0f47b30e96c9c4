# Cluster state on the volume: producer-id blocks, group offsets, membership,
# controller claims and assignment.
CLUSTER_TESTS = tests/cluster/test_producer_ids tests/cluster/test_group_store \
	tests/cluster/test_assignment
check_PROGRAMS += $(CLUSTER_TESTS)
TESTS += $(CLUSTER_TESTS)
tests_cluster_test_producer_ids_SOURCES = tests/cluster/test_producer_ids.c
tests_cluster_test_group_store_SOURCES = tests/cluster/test_group_store.c
tests_cluster_test_assignment_SOURCES = tests/cluster/test_assignment.c
