#!/bin/bash
# KIP-227 fetch sessions (Fetch v7+ incremental) on the raw wire
# (tests/kafka/fetch_sessions.py): full then incremental fetches, unchanged
# partitions left out, new records answered, forgotten and re-added
# partitions, errors 70 and 71, a session closed by epoch -1; pipelined
# fetches answered in order; --fetch-session-slots 0 (no sessions) and 1
# (eviction: fewest partitions first).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
kaas_scratch
kaasd_start
timeout 180 python3 "$KAAS_TOP_SRCDIR/tests/kafka/fetch_sessions.py" "$BROKER" ||
	kaas_fail "fetch sessions"
kaasd_stop
rm -rf "$KAAS_SCRATCH/data"
kaasd_start --fetch-session-slots 0
timeout 180 python3 "$KAAS_TOP_SRCDIR/tests/kafka/fetch_sessions.py" "$BROKER" noslots ||
	kaas_fail "fetch sessions with no slots"
kaasd_stop
rm -rf "$KAAS_SCRATCH/data"
kaasd_start --fetch-session-slots 1
timeout 180 python3 "$KAAS_TOP_SRCDIR/tests/kafka/fetch_sessions.py" "$BROKER" oneslot ||
	kaas_fail "fetch session eviction"
kaasd_stop
echo PASS
