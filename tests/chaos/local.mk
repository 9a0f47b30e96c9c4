# tests/chaos: the chaos checker and short chaos runs (scripts/chaos).
# chaos_short.sh is not in TESTS: most seeds so far find duplicated records
# of the idempotent producer (after an EIO on a segment fsync, and also with
# only kill/stop/crash/latency faults) -- a broker bug, see the chaos branch
# report; it would fail.
TESTS += tests/chaos/check_selftest.sh
EXTRA_DIST += tests/chaos/check_selftest.sh tests/chaos/chaos_short.sh
