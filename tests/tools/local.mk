# tests/tools: kaasctl, the operator CLI (status, groups, verify, dump-log,
# trash) against volumes kaasd wrote: on a directory, on 2 brokers, and over
# nfs:// (skips without the NFS test server).
KAASCTL_TESTS = tests/tools/kaasctl_verify.sh tests/tools/kaasctl_groups_dump.sh \
	tests/tools/kaasctl_status.sh tests/tools/kaasctl_nfs.sh \
	tests/tools/kaasctl_verify_txn.sh
TESTS += $(KAASCTL_TESTS)
EXTRA_DIST += $(KAASCTL_TESTS) tests/tools/kaasctl-lib.sh
# kaasctl's broker commands (issue 39): the README tour through the Kafka
# protocol alone.
TESTS += tests/tools/kaasctl_admin_tour.sh tests/tools/kaasctl_admin_sasl.sh \
	tests/tools/kaasctl_admin_txn.sh tests/tools/kaasctl_admin_multi.sh \
	tests/tools/kaasctl_admin_tls.sh
EXTRA_DIST += tests/tools/kaasctl_admin_tour.sh tests/tools/kaasctl-admin-lib.sh \
	tests/tools/kaasctl_admin_sasl.sh tests/tools/kaasctl_admin_txn.sh \
	tests/tools/kaasctl_admin_multi.sh tests/tools/kaasctl_admin_tls.sh
# The same tour against Apache Kafka (scripts/peer-kafka), answers compared:
# the normal suite only (a JVM beside the sanitizer build adds no coverage).
if !SANITIZERS
TESTS += tests/tools/kaasctl_vs_kafka.sh
endif
EXTRA_DIST += tests/tools/kaasctl_vs_kafka.sh
# The read-only partition view under kaasctl (log/log_inspect.h).
check_PROGRAMS += tests/tools/test_log_inspect
tests_tools_test_log_inspect_SOURCES = tests/tools/test_log_inspect.c
tests_tools_test_log_inspect_CFLAGS = $(TEST_CFLAGS)
tests_tools_test_log_inspect_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/tools/test_log_inspect
