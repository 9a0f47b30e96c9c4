#!/bin/bash
# The rebalance protocol's answers, request by request, from two
# hand-driven members (tests/groups/group_raw.c).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
kaasd_start
timeout 60 "$KAAS_TOP_BUILDDIR/tests/groups/group_raw" "$BROKER" rawgroup || kaas_fail "rebalance protocol"
kaasd_stop
echo "PASS"
