#!/bin/bash
# Differential conformance (issue 34): the scenarios of tests/peer/differ.py
# against Apache Kafka and against kaasd, each API at the lowest and the
# highest version both serve, every differing answer either listed with its
# reason in docs/KAFKA-DIFFERENCES.md or a failure.  Both brokers serve a
# PLAINTEXT listener and a SASL_PLAINTEXT one (SCRAM-SHA-256), with an
# authorizer allowing what no ACL names.  Kafka is started once for the
# whole file.  The normal suite only (tests/peer/local.mk): the sanitizer
# build's kaasd answers the same bytes, and a JVM beside it would only slow
# that suite down.
# kaas-test-timeout: 300
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/peer/peer-lib.sh"
kaas_scratch
peer_kafka_start --sasl

KAASD_LOG="$KAAS_SCRATCH/kaasd.log"
printf '%s\n' "listeners = PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0" \
	"listener.security.protocol.map = PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT" \
	"sasl.enabled.mechanisms = SCRAM-SHA-256" \
	"allow.everyone.if.no.acl.found = true" >"$KAAS_SCRATCH/kaas.conf"
"$KAASD" --data "$KAAS_SCRATCH/data" --config "$KAAS_SCRATCH/kaas.conf" \
	--group-initial-rebalance-delay-ms 0 2>"$KAASD_LOG" &
KAASD_PID=$!
kaas_on_exit "kill -9 $KAASD_PID"
kaas_wait_for 20 grep -q "listener SASL " "$KAASD_LOG" ||
	{ cat "$KAASD_LOG" >&2; kaas_fail "kaasd did not start listening"; }
lport() {
	sed -n "s/.* listener $1 ([A-Z_]*) on [^ ]*:\([0-9]*\),.*/\1/p" "$KAASD_LOG" | head -n1
}
BROKER="127.0.0.1:$(lport PLAINTEXT)"
KAAS_SASL="127.0.0.1:$(lport SASL)"

echo "Kafka at $KAFKA_BROKER (SASL $KAFKA_SASL), kaasd at $BROKER (SASL $KAAS_SASL)"
timeout 240 python3 -B "$KAAS_TOP_SRCDIR/tests/peer/differ.py" "$KAFKA_BROKER" "$BROKER" \
	"$KAAS_TOP_SRCDIR/docs/KAFKA-DIFFERENCES.md" --sasl "$KAFKA_SASL,$KAAS_SASL" ||
	kaas_fail "kaasd answers differently from Kafka where docs/KAFKA-DIFFERENCES.md lists no reason (DIFF lines above)"
kaasd_stop
echo PASS
