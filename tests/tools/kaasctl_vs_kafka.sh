#!/usr/bin/env bash
# kaasctl's broker commands against Apache Kafka (issue 39): the tour of
# kaasctl_admin_tour.sh run against kaasd and against the peer Kafka
# (scripts/peer-kafka), and what each broker answered compared: the error
# names of every refusal, the configs after the alterations, the partition
# counts, each partition's committed and log-end offsets and lag (the
# records are keyed, so both brokers get the same partitions), the offsets
# after the reset and a deleted group; then txn list and describe of a
# committed and an open transaction (librdkafka's, when built).  A Kafka that cannot be fetched or
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
TXN_CLIENT="$KAAS_TOP_BUILDDIR/tests/txn/txn_client"
# txn list and describe of a committed and an open transaction (librdkafka's
# txn_client, when built), appended to the summary OUT
txn_tour() {
	ADM_BOOT=$1
	local out=$2 hang
	[ -x "$TXN_CLIENT" ] || { echo "txn skipped: no txn_client" >>"$out"; return 0; }
	adm 0 topic create ta --partitions 2
	adm 0 topic create tb --partitions 1
	[ "$(timeout 60 "$TXN_CLIENT" "$ADM_BOOT" done1 commit ta tb c1 g1)" = ok ] || kaas_fail "commit on $ADM_BOOT"
	timeout 60 "$TXN_CLIENT" "$ADM_BOOT" open1 hang ta tb h1 >"$KAAS_SCRATCH/hang.out" 2>&1 &
	hang=$!
	kaas_on_exit "kill $hang"
	kaas_wait_for 30 grep -q open "$KAAS_SCRATCH/hang.out" || kaas_fail "no open transaction on $ADM_BOOT"
	adm 0 txn list --json
	echo "txn-list $(adm_py "sorted((t['transactional_id'], t['state']) for t in d['transactions'])")" >>"$out"
	adm 0 txn describe open1 --json
	echo "txn-open $(adm_py "(d['state'], d['producer_epoch'], sorted((p['topic'], p['partition']) for p in d['partitions']), d['start_time_ms'] is not None)")" >>"$out"
	adm 0 txn describe done1 --json
	echo "txn-done $(adm_py "(d['state'], d['partitions'])")" >>"$out"
	adm 2 txn describe nosuchid
	echo "txn-unknown $(adm_err_name)" >>"$out"
	kill $hang
	wait $hang 2>/dev/null || true
}
admin_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
txn_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
admin_tour "$KAFKA_BROKER" "$KAAS_SCRATCH/kafka.summary"
txn_tour "$KAFKA_BROKER" "$KAAS_SCRATCH/kafka.summary"
if ! diff -u "$KAAS_SCRATCH/kafka.summary" "$KAAS_SCRATCH/kaas.summary"; then
	kaas_fail "kaasctl's tour answered differently on kaas (+) and on Kafka (-)"
fi
cat "$KAAS_SCRATCH/kaas.summary"
kaasd_stop
echo "kaasctl against kaas and Kafka: the same answers"
