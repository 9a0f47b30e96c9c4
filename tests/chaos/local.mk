# tests/chaos: the chaos checker and short chaos runs (scripts/chaos).
# chaos_short.sh and chaos_negative.sh are not in TESTS: scripts/test runs
# them after the normal build's suite (minutes long, FUSE, never under
# sanitizers).  chaos_short.sh fails today: the idempotent producer's records
# are duplicated in most seeds (a broker bug being fixed elsewhere).
TESTS += tests/chaos/check_selftest.sh
EXTRA_DIST += tests/chaos/check_selftest.sh tests/chaos/chaos_short.sh tests/chaos/chaos_negative.sh
