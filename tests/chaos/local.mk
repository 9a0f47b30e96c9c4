# tests/chaos: short chaos runs (scripts/chaos).  chaos_short.sh is not in
# TESTS yet: every seed so far finds duplicated records of the idempotent
# producer (a broker bug, see the chaos branch report), so it would fail.
EXTRA_DIST += tests/chaos/chaos_short.sh
