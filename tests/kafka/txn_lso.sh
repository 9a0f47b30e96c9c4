#!/bin/bash
# read_committed on the partition side (issue 16): an open transaction holds
# the last stable offset; Fetch read_committed answers records below it and
# last_stable_offset (also for read_uncommitted), ListOffsets latest answers
# it for isolation level 1, a client's control batch is refused; and the
# same after a restart (the open transaction recovered from the log).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
[ -x "$RAW" ] || kaas_fail "no rawclient at $RAW"
kaas_scratch
kaasd_start
timeout 30 "$RAW" "$BROKER" txn-lso tlso || kaas_fail "txn-lso"
kaasd_stop
kaasd_start
timeout 30 "$RAW" "$BROKER" txn-lso-check tlso || kaas_fail "txn-lso after a restart"
kaasd_stop
echo PASS
