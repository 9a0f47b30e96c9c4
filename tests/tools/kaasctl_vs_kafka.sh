#!/usr/bin/env bash
# kaasctl's broker commands against Apache Kafka (issue 39): the tour of
# kaasctl_admin_tour.sh run against kaasd and against the peer Kafka
# (scripts/peer-kafka), and what each broker answered compared: the error
# names of every refusal, the configs after the alterations, the partition
# counts, each partition's committed and log-end offsets and lag (the
# records are keyed, so both brokers get the same partitions), the offsets
# after the reset and a deleted group; then txn list and describe of a
# committed and an open transaction (librdkafka's, when built); a SCRAM
# user added, used on the SASL listener, refused a wrong password, deleted;
# ACL bindings added, listed by resource and principal, removed.  A Kafka that cannot be fetched or
# started is a skip, a failure under CI=true.  The normal suite only.
# kaas-test-timeout: 400
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/peer/peer-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
peer_kafka_start --sasl
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
# a SCRAM user made through the plaintext listener, used on the SASL one
sasl_tour() {
	local plain=$1 sasl=$2 out=$3 rc i
	ADM_BOOT=$plain
	echo secret4 | adm 0 user add dave --mechanism SCRAM-SHA-256 --iterations 4096
	adm 0 user list --json
	echo "users $(adm_py "[(u['user'], u['mechanism'], u['iterations']) for u in d['users'] if u['user'] == 'dave']")" >>"$out"
	printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=SCRAM-SHA-256" \
		'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="dave" password="secret4";' \
		>"$KAAS_SCRATCH/dave.properties"
	printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=SCRAM-SHA-256" \
		"sasl.username=dave" "sasl.password=wrong" >"$KAAS_SCRATCH/wrong.properties"
	ADM_BOOT=$sasl
	for i in $(seq 1 50); do # the credential reaches the SASL listener's broker
		rc=0
		timeout 30 "$KAASCTL" --bootstrap "$sasl" --command-config "$KAAS_SCRATCH/dave.properties" \
			cluster describe >/dev/null 2>&1 || rc=$?
		[ $rc = 0 ] && break
		sleep 0.2
	done
	adm 0 --command-config "$KAAS_SCRATCH/dave.properties" cluster describe --json
	echo "sasl-brokers $(adm_py "len(d['brokers'])")" >>"$out"
	adm 2 --command-config "$KAAS_SCRATCH/wrong.properties" cluster describe
	echo "sasl-wrong $(adm_err_name)" >>"$out"
	ADM_BOOT=$plain
	adm 0 user delete dave
	adm 2 user delete dave --mechanism SCRAM-SHA-256
	echo "user-delete-again $(adm_err_name)" >>"$out"
}
admin_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
txn_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
admin_acl_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
admin_tour "$KAFKA_BROKER" "$KAAS_SCRATCH/kafka.summary"
txn_tour "$KAFKA_BROKER" "$KAAS_SCRATCH/kafka.summary"
admin_acl_tour "$KAFKA_BROKER" "$KAAS_SCRATCH/kafka.summary"
sasl_tour "$KAFKA_BROKER" "$KAFKA_SASL" "$KAAS_SCRATCH/kafka.summary"
# a second kaasd with a SASL listener beside its plaintext one
KAASD_LOG2="$KAAS_SCRATCH/kaasd-sasl.log"
printf '%s\n' "listeners = PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0" \
	"listener.security.protocol.map = PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT" \
	"sasl.enabled.mechanisms = SCRAM-SHA-256" "allow.everyone.if.no.acl.found = true" \
	>"$KAAS_SCRATCH/sasl.conf"
"$KAASD" --data "$KAAS_SCRATCH/data2" --config "$KAAS_SCRATCH/sasl.conf" 2>"$KAASD_LOG2" &
KAASD2=$!
kaas_on_exit "kill -9 $KAASD2"
kaas_wait_for 20 grep -q "listening on" "$KAASD_LOG2" || { cat "$KAASD_LOG2" >&2; kaas_fail "kaasd (SASL) did not start"; }
lport() { sed -n "s/.* listener $1 ([A-Z_]*) on [^ ]*:\([0-9]*\),.*/\1/p" "$KAASD_LOG2" | head -n1; }
sasl_tour "127.0.0.1:$(lport PLAINTEXT)" "127.0.0.1:$(lport SASL)" "$KAAS_SCRATCH/kaas.summary"
kill -TERM $KAASD2
wait $KAASD2 || kaas_fail "kaasd (SASL) did not stop cleanly"
if ! diff -u "$KAAS_SCRATCH/kafka.summary" "$KAAS_SCRATCH/kaas.summary"; then
	kaas_fail "kaasctl's tour answered differently on kaas (+) and on Kafka (-)"
fi
cat "$KAAS_SCRATCH/kaas.summary"
kaasd_stop
echo "kaasctl against kaas and Kafka: the same answers"
