# tests/chaos: the chaos checker and short chaos runs (scripts/chaos).
# chaos_short.sh and chaos_negative.sh are not in TESTS: scripts/test runs
# them after the normal build's suite (minutes long, FUSE, never under
# sanitizers).
TESTS += tests/chaos/check_selftest.sh tests/chaos/check_kv_selftest.sh tests/chaos/check_ctp_selftest.sh
EXTRA_DIST += tests/chaos/check_selftest.sh tests/chaos/check_kv_selftest.sh tests/chaos/check_ctp_selftest.sh tests/chaos/chaos_short.sh tests/chaos/chaos_negative.sh \
	tests/chaos/chaos-lib.sh
