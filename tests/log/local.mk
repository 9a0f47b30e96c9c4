# tests/log: the partition log engine (issue 3).
check_LIBRARIES += libkaaslogtest.a
libkaaslogtest_a_SOURCES = tests/log/logtest.c tests/log/logtest.h
libkaaslogtest_a_CFLAGS = $(TEST_CFLAGS)
LOG_TEST_LIBS = libkaaslogtest.a $(TEST_LIBS)

check_PROGRAMS += tests/log/test_log_basic
tests_log_test_log_basic_SOURCES = tests/log/test_log_basic.c
tests_log_test_log_basic_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_basic_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_basic

check_PROGRAMS += tests/log/test_log_fence
tests_log_test_log_fence_SOURCES = tests/log/test_log_fence.c
tests_log_test_log_fence_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_fence_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_fence

check_PROGRAMS += tests/log/test_log_crash
tests_log_test_log_crash_SOURCES = tests/log/test_log_crash.c
tests_log_test_log_crash_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_crash_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_crash

check_PROGRAMS += tests/log/test_log_stress
tests_log_test_log_stress_SOURCES = tests/log/test_log_stress.c
tests_log_test_log_stress_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_stress_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_stress

check_PROGRAMS += tests/log/test_log_eio_retry
tests_log_test_log_eio_retry_SOURCES = tests/log/test_log_eio_retry.c
tests_log_test_log_eio_retry_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_eio_retry_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_eio_retry

check_PROGRAMS += tests/log/test_log_fence_race
tests_log_test_log_fence_race_SOURCES = tests/log/test_log_fence_race.c
tests_log_test_log_fence_race_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_fence_race_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_fence_race

check_PROGRAMS += tests/log/test_log_scale
tests_log_test_log_scale_SOURCES = tests/log/test_log_scale.c
tests_log_test_log_scale_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_scale_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_scale

check_PROGRAMS += tests/log/test_log_txn
tests_log_test_log_txn_SOURCES = tests/log/test_log_txn.c
tests_log_test_log_txn_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_txn_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_txn

# The log cleaner (issue 21).
check_PROGRAMS += tests/log/test_log_clean
tests_log_test_log_clean_SOURCES = tests/log/test_log_clean.c
tests_log_test_log_clean_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_clean_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_clean

# A cleaning pass crashed at every fsync and rename, on POSIX (or
# KAAS_TEST_URL) and on the fault model with readers holding the old set.
check_PROGRAMS += tests/log/test_log_clean_crash
tests_log_test_log_clean_crash_SOURCES = tests/log/test_log_clean_crash.c
tests_log_test_log_clean_crash_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_clean_crash_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_clean_crash
# What the admin APIs ask of a log (issue 15): epoch end offsets, size, producers.
check_PROGRAMS += tests/log/test_log_describe
tests_log_test_log_describe_SOURCES = tests/log/test_log_describe.c
tests_log_test_log_describe_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_describe_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_describe

check_PROGRAMS += tests/log/test_log_retention_fence
tests_log_test_log_retention_fence_SOURCES = tests/log/test_log_retention_fence.c
tests_log_test_log_retention_fence_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_retention_fence_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_retention_fence

check_PROGRAMS += tests/log/test_log_nowait
tests_log_test_log_nowait_SOURCES = tests/log/test_log_nowait.c
tests_log_test_log_nowait_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_nowait_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_nowait

# The log cleaner and transactions (issue 21): aborted records, markers and
# their delete horizon, the LSO bound, and a pass crashed at every step.
check_PROGRAMS += tests/log/test_log_clean_txn
tests_log_test_log_clean_txn_SOURCES = tests/log/test_log_clean_txn.c
tests_log_test_log_clean_txn_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_clean_txn_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_clean_txn

check_PROGRAMS += tests/log/test_log_segment_size
tests_log_test_log_segment_size_SOURCES = tests/log/test_log_segment_size.c
tests_log_test_log_segment_size_CFLAGS = $(TEST_CFLAGS)
tests_log_test_log_segment_size_LDADD = $(LOG_TEST_LIBS)
TESTS += tests/log/test_log_segment_size
