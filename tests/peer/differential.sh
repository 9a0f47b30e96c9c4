#!/bin/bash
# Differential conformance (issue 34): the scenarios of tests/peer/differ.py
# against Apache Kafka and against kaasd, each API at the lowest and the
# highest version both serve, every differing answer either listed with its
# reason in docs/KAFKA-DIFFERENCES.md or a failure.  Kafka is started once
# for the whole file.  The normal suite only (tests/peer/local.mk): the
# sanitizer build's kaasd answers the same bytes, and a JVM beside it would
# only slow that suite down.
# kaas-test-timeout: 300
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/peer/peer-lib.sh"
kaas_scratch
peer_kafka_start
kaasd_start
echo "Kafka at $KAFKA_BROKER, kaasd at $BROKER"
timeout 240 python3 -B "$KAAS_TOP_SRCDIR/tests/peer/differ.py" "$KAFKA_BROKER" "$BROKER" \
	"$KAAS_TOP_SRCDIR/docs/KAFKA-DIFFERENCES.md" ||
	kaas_fail "kaasd answers differently from Kafka where docs/KAFKA-DIFFERENCES.md lists no reason (DIFF lines above)"
kaasd_stop
echo PASS
