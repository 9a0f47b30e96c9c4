#!/bin/bash
# confluent-kafka's (python3-confluent-kafka) transactional producer: see
# confluent_txn.py.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
/usr/bin/python3 -c 'import confluent_kafka' 2>/dev/null || kaas_skip "python3-confluent-kafka is not installed"
kaas_scratch
kaasd_start --num-partitions 2
timeout 120 /usr/bin/python3 "$KAAS_TOP_SRCDIR/tests/txn/confluent_txn.py" "$BROKER" ||
	{ tail -n 30 "$KAASD_LOG" >&2; kaas_fail "confluent_txn.py failed"; }
kaasd_stop
echo PASS
