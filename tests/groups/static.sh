#!/bin/bash
# Static group membership (KIP-345): request by request
# (tests/groups/static_raw.c: direct join, rejoin with no rebalance and the
# old assignment, fencing, DescribeGroups v4, LeaveGroup v3 by instance id),
# then through librdkafka (tests/groups/group_client.c static: a restarted
# static consumer gets its partitions back, the other sees no rebalance; a
# static consumer gone for good is expelled at its session timeout).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
# A long liveness timeout: a lapsed lease on a loaded machine would drop
# the members (held in memory) and the test would see a rebalance.
kaasd_start --num-partitions 6 --liveness-timeout-ms 30000
echo x | kc -P -t static-raw || kaas_fail "create static-raw"
timeout 60 "$KAAS_TOP_BUILDDIR/tests/groups/static_raw" "$BROKER" rawstatic || kaas_fail "static membership protocol"
seq 1 60 | kc -P -t static-t || kaas_fail "create static-t"
timeout 120 "$KAAS_TOP_BUILDDIR/tests/groups/group_client" static "$BROKER" static-t ||
	{ grep "group static-g" "$KAASD_LOG" | tail -n 20 >&2; kaas_fail "static member through librdkafka"; }
kaasd_stop
# group.initial.rebalance.delay.ms from the config file (Kafka's key).
echo "group.initial.rebalance.delay.ms = 1500" >"$KAAS_SCRATCH/kaasd.conf"
KAASD_GROUP_DELAY_MS= kaasd_start --config "$KAAS_SCRATCH/kaasd.conf"
timeout 60 "$KAAS_TOP_BUILDDIR/tests/groups/static_raw" "$BROKER" rawdelay delay 1500 || kaas_fail "initial rebalance delay"
kaasd_stop
echo "PASS"
