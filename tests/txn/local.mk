# tests/txn: transactions (issue 16, the coordinator side): librdkafka's and
# confluent-kafka's transactional producers, fencing, the coordinator and a
# producer killed mid-transaction.
check_PROGRAMS += tests/txn/txn_client
tests_txn_txn_client_SOURCES = tests/txn/txn_client.c
tests_txn_txn_client_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_txn_txn_client_LDADD = $(RDKAFKA_LIBS)
# Issue 33: a stale coordinator's marker refused by the partition (the log).
check_PROGRAMS += tests/txn/test_marker_coord
tests_txn_test_marker_coord_SOURCES = tests/txn/test_marker_coord.c
tests_txn_test_marker_coord_CFLAGS = $(TEST_CFLAGS)
tests_txn_test_marker_coord_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/txn/test_marker_coord
TXN_TESTS = tests/txn/rdkafka_txn.sh tests/txn/coordinator_kill.sh tests/txn/producer_kill.sh \
	tests/txn/chaos_txn_abort.sh tests/txn/markers_sweep.sh tests/txn/markers_idle.sh \
	tests/txn/markers_direct.sh \
	tests/txn/leader_kill.sh tests/txn/compact_txn.sh \
	tests/txn/offsets_outcome_race.sh tests/txn/deleted_topic.sh \
	tests/txn/stale_coordinator_marker.sh tests/txn/hanging_abort.sh tests/txn/produce_verify.sh
TESTS += $(TXN_TESTS)
# Python client over code the sanitizer suite covers with librdkafka: normal suite only.
if !SANITIZERS
TESTS += tests/txn/confluent_txn.sh
endif
EXTRA_DIST += $(TXN_TESTS) tests/txn/txn-lib.sh tests/txn/confluent_txn.sh tests/txn/confluent_txn.py \
	tests/txn/hanging_abort.py tests/txn/produce_verify.py
