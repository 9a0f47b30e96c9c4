# tests/groups: consumer groups (kcat -G), committed offsets across restarts,
# the idempotent producer.
check_PROGRAMS += tests/groups/idem_raw tests/groups/idem_producer tests/groups/list_groups \
	tests/groups/offsets_raw tests/groups/group_raw tests/groups/static_raw \
	tests/groups/group_client
tests_groups_static_raw_SOURCES = tests/groups/static_raw.c
tests_groups_static_raw_LDADD = $(TEST_LIBS)
tests_groups_group_client_SOURCES = tests/groups/group_client.c
tests_groups_group_client_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_groups_group_client_LDADD = $(RDKAFKA_LIBS)
tests_groups_group_raw_SOURCES = tests/groups/group_raw.c
tests_groups_group_raw_LDADD = $(TEST_LIBS)
tests_groups_offsets_raw_SOURCES = tests/groups/offsets_raw.c
tests_groups_offsets_raw_LDADD = $(TEST_LIBS)
tests_groups_idem_raw_SOURCES = tests/groups/idem_raw.c
tests_groups_idem_raw_LDADD = $(TEST_LIBS)
tests_groups_idem_producer_SOURCES = tests/groups/idem_producer.c
tests_groups_idem_producer_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_groups_idem_producer_LDADD = $(RDKAFKA_LIBS)
tests_groups_list_groups_SOURCES = tests/groups/list_groups.c
tests_groups_list_groups_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_groups_list_groups_LDADD = $(RDKAFKA_LIBS)

GROUPS_SH = tests/groups/fence.sh tests/groups/protocol.sh tests/groups/idempotence.sh \
	tests/groups/idempotence_eio.sh tests/groups/idempotence_eio_dup.sh tests/groups/produce_eagain.sh \
	tests/groups/offsets_restart.sh \
	tests/groups/rebalance.sh tests/groups/static.sh tests/groups/cooperative.sh
TESTS += $(GROUPS_SH)
EXTRA_DIST += $(GROUPS_SH)
# DeleteGroups and OffsetDelete through kafka-python and raw requests.
TESTS += tests/groups/delete_groups.sh
EXTRA_DIST += tests/groups/delete_groups.sh tests/groups/delete_groups.py
EXTRA_DIST += tests/support/kraw.py
# Committed offsets expire after offsets.retention (issue 15); in both
# suites: the expiry is code no other test runs.
TESTS += tests/groups/offsets_retention.sh
EXTRA_DIST += tests/groups/offsets_retention.sh tests/groups/offsets_retention.py
