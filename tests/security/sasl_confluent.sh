#!/bin/bash
# confluent-kafka (python3-confluent-kafka) over SASL_SSL with
# SCRAM-SHA-512, over SASL_PLAINTEXT with PLAIN and over SSL with a client
# certificate: CreateTopics and metadata, produce, consume in a group; a
# wrong password is an authentication error (sasl_confluent.py).
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
/usr/bin/python3 -c 'import confluent_kafka' 2>/dev/null || kaas_skip "python3-confluent-kafka is not installed"
tls_cert client "/CN=client1/O=kaas" # the SSL listener's client (principal User:CN=client1,O=kaas)
PW="pw-$(openssl rand -hex 12)"
mkdir -p "$KAAS_SCRATCH/data/__cluster"
echo "$PW" | "$KAAS_TOP_BUILDDIR/kaasctl" --data "$KAAS_SCRATCH/data" user add alice \
	--mechanism SCRAM-SHA-512 --iterations 4096 >/dev/null || kaas_fail "kaasctl user add"
tls_kaasd_start "listeners = EXT://127.0.0.1:0,INT://127.0.0.1:0,CRT://127.0.0.1:0" \
	"listener.security.protocol.map = EXT:SASL_SSL,INT:SASL_PLAINTEXT,CRT:SSL" \
	"ssl.keystore.location = $TLS/broker-keystore.pem" "sasl.enabled.mechanisms = SCRAM-SHA-512,PLAIN" \
	"ssl.truststore.location = $TLS/ca.pem" "ssl.client.auth = requested"
timeout 150 /usr/bin/python3 "$KAAS_TOP_SRCDIR/tests/security/sasl_confluent.py" "$(port EXT)" "$(port INT)" \
	"$TLS/ca.pem" "$PW" "$(port CRT)" "$TLS/client.pem" "$TLS/client.key" || { tail -20 "$KAASD_LOG" >&2; kaas_fail "confluent-kafka over SASL"; }
grep -F "$PW" "$KAASD_LOG" && kaas_fail "the password in the broker's log"
kaasd_stop
exit 0
