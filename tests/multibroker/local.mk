# tests/multibroker: several kaasd processes on one shared directory.
check_PROGRAMS += tests/multibroker/mbclient
tests_multibroker_mbclient_SOURCES = tests/multibroker/mbclient.c
tests_multibroker_mbclient_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_multibroker_mbclient_LDADD = $(RDKAFKA_LIBS)
MULTIBROKER_TESTS = tests/multibroker/failover.sh tests/multibroker/controller.sh \
	tests/multibroker/zombie.sh tests/multibroker/recreate.sh \
	tests/multibroker/failover_faultfs.sh tests/multibroker/coordinator.sh \
	tests/multibroker/recreate_faults.sh \
	tests/multibroker/selffence.sh tests/multibroker/dup_id.sh tests/multibroker/full_volume.sh
TESTS += $(MULTIBROKER_TESTS)
# kill9_group.sh is not in TESTS yet: in two of three clean-clone CI runs
# its consumer group reached a stable generation 1 and heartbeated, but the
# consumer received nothing for 60 s before any kill (not reproduced in ~20
# runs by hand, alone or beside the log tests).  It prints the consumer's
# librdkafka group log and the brokers' lines when that happens; run it by
# hand: make check TESTS=tests/multibroker/kill9_group.sh
EXTRA_DIST += $(MULTIBROKER_TESTS) tests/multibroker/mb-lib.sh tests/multibroker/check_acked.sh \
	tests/multibroker/bench_failover.sh tests/multibroker/kill9_group.sh
