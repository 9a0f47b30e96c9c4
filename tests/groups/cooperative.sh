#!/bin/bash
# The cooperative-sticky assignor through librdkafka: a topic added (regex
# subscription), a topic removed (subscription change), a topic deleted;
# every record consumed exactly once, no stall (tests/groups/group_client.c coop).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
# A long liveness timeout: on a loaded machine a lapsed lease would move
# the coordinator slot, and members (held in memory) rejoin with their
# uncommitted records consumed again.
kaasd_start --liveness-timeout-ms 30000
timeout 300 "$KAAS_TOP_BUILDDIR/tests/groups/group_client" coop "$BROKER" ||
	{ grep "group coop-g" "$KAASD_LOG" | tail -n 30 >&2; kaas_fail "cooperative-sticky rebalances"; }
kaasd_stop
echo "PASS"
