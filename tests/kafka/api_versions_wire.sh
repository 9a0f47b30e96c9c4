#!/bin/bash
# Every API and version kaasd advertises, both ways through an independent
# codec (tests/kafka/api_versions_wire.py over kafka_schema.py and
# kafka_messages.py, written from Apache Kafka's message definitions):
# requests it encodes are decoded by kaasd, kaasd's answers are decoded
# strictly there (every byte, tagged fields, response header v0/v1), and
# each answer says what it should (a topic created with each CreateTopics
# version, a record produced with each Produce version and fetched with
# each Fetch version, a group joined with each JoinGroup version...).  Also
# that every API is served from Kafka 3.9's lowest version through its
# flexible versions (issue 15).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
kaas_scratch
kaasd_start --group-initial-rebalance-delay-ms 0
timeout 180 python3 "$KAAS_TOP_SRCDIR/tests/kafka/api_versions_wire.py" "$BROKER" ||
	kaas_fail "wire exchanges failed"
kaasd_stop
echo PASS
