#!/usr/bin/env bash
# kaasctl's broker commands against Apache Kafka (issue 39): the tour of
# kaasctl_admin_tour.sh run against kaasd and against the peer Kafka
# (scripts/peer-kafka), and what each broker answered compared: the error
# names of every refusal, the configs after the alterations, the partition
# counts, each partition's committed and log-end offsets and lag (the
# records are keyed, so both brokers get the same partitions), the offsets
# after the reset and a deleted group.  A Kafka that cannot be fetched or
# started is a skip, a failure under CI=true.  The normal suite only.
# kaas-test-timeout: 400
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/peer/peer-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
peer_kafka_start
kaasd_start
admin_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
admin_tour "$KAFKA_BROKER" "$KAAS_SCRATCH/kafka.summary"
if ! diff -u "$KAAS_SCRATCH/kafka.summary" "$KAAS_SCRATCH/kaas.summary"; then
	kaas_fail "kaasctl's tour answered differently on kaas (+) and on Kafka (-)"
fi
cat "$KAAS_SCRATCH/kaas.summary"
kaasd_stop
echo "kaasctl against kaas and Kafka: the same answers"
