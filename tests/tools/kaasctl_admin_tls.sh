#!/usr/bin/env bash
# kaasctl's broker commands over TLS (issue 39): SSL with ssl.ca.location
# and with a PEM truststore, the broker's name checked (127.0.0.1 and
# localhost are in its certificate's SAN); SASL_SSL with SCRAM-SHA-512; a
# CA that did not sign the broker's certificate and a JKS truststore
# refused with exit 2 and the reason; a client certificate where the broker
# requires one (none: refused).
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
mkdir -p "$KAAS_SCRATCH/data/__cluster"
echo secret2 | timeout 30 "$KAASCTL" --data "$KAAS_SCRATCH/data" user add bob >/dev/null
tls_kaasd_start "listeners = SSL://127.0.0.1:0,SASLSSL://127.0.0.1:0" \
	"listener.security.protocol.map = SSL:SSL,SASLSSL:SASL_SSL" \
	"sasl.enabled.mechanisms = SCRAM-SHA-512" \
	"ssl.keystore.type = PEM" "ssl.keystore.location = $TLS/broker-keystore.pem"
P="$KAAS_SCRATCH"
printf '%s\n' "security.protocol=SSL" "ssl.ca.location=$TLS/ca.pem" >"$P/ssl.properties"
printf '%s\n' "security.protocol=SSL" "ssl.truststore.type=PEM" \
	"ssl.truststore.location=$TLS/ca.pem" >"$P/ts.properties"
printf '%s\n' "security.protocol=SASL_SSL" "ssl.ca.location=$TLS/ca.pem" \
	"sasl.mechanism=SCRAM-SHA-512" \
	'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="secret2";' \
	>"$P/sasl.properties"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" \
	-keyout "$P/other.key" -out "$P/other.pem" 2>/dev/null || kaas_fail "openssl: another CA"
printf '%s\n' "security.protocol=SSL" "ssl.ca.location=$P/other.pem" >"$P/other.properties"
printf '%s\n' "security.protocol=SSL" "ssl.truststore.location=$P/x.jks" >"$P/jks.properties"

ADM_BOOT="127.0.0.1:$(port SSL)"
adm 0 --command-config "$P/ssl.properties" topic create tlst --partitions 3 --config retention.ms=60000
adm 0 --command-config "$P/ts.properties" topic describe tlst --json
[ "$(adm_py "(d['topics'][0]['partition_count'], d['topics'][0]['configs'])")" = "(3, {'retention.ms': '60000'})" ] ||
	kaas_fail "describe over SSL: $ADM_OUT"
ADM_BOOT="localhost:$(port SSL)"
adm 0 --command-config "$P/ssl.properties" cluster describe
ADM_BOOT="127.0.0.1:$(port SASLSSL)"
adm 0 --command-config "$P/sasl.properties" topic list
grep -qx tlst <<<"$ADM_OUT" || kaas_fail "topic list over SASL_SSL: $ADM_OUT"
ADM_BOOT="127.0.0.1:$(port SSL)"
adm 2 --command-config "$P/other.properties" topic list
grep -q "certificate verify failed\|unable to get local issuer" <<<"$ADM_ERR" || kaas_fail "another CA: $ADM_ERR"
adm 2 --command-config "$P/jks.properties" topic list
grep -q "JKS truststore" <<<"$ADM_ERR" || kaas_fail "JKS: $ADM_ERR"
kaasd_stop

# ssl.client.auth = required: kaasctl's client certificate, from a PEM
# keystore or from ssl.certificate.location and ssl.key.location
tls_cert client "/CN=kaasctl"
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.type = PEM" \
	"ssl.keystore.location = $TLS/broker-keystore.pem" "ssl.truststore.location = $TLS/ca.pem" \
	"ssl.client.auth = required"
printf '%s\n' "security.protocol=SSL" "ssl.ca.location=$TLS/ca.pem" "ssl.keystore.type=PEM" \
	"ssl.keystore.location=$TLS/client-keystore.pem" >"$P/ks.properties"
printf '%s\n' "security.protocol=SSL" "ssl.ca.location=$TLS/ca.pem" \
	"ssl.certificate.location=$TLS/client.pem" "ssl.key.location=$TLS/client.key" >"$P/crt.properties"
ADM_BOOT="127.0.0.1:$(port SSL)"
adm 0 --command-config "$P/ks.properties" topic list
grep -qx tlst <<<"$ADM_OUT" || kaas_fail "topic list with a keystore: $ADM_OUT"
adm 0 --command-config "$P/crt.properties" topic describe tlst
adm 2 --command-config "$P/ssl.properties" topic list
kaasd_stop
echo "kaasctl over TLS: ok"
