#!/bin/bash
# ssl.client.auth = required: a client without a certificate, or with one
# from another CA, gets no service; one with a certificate from the
# truststore's CA does, and its principal is User:<subject DN>.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
tls_cert client "/CN=client1/O=kaas"
# A second CA and a client certificate signed by it.
mkdir -p "$TLS/other"
(TLS="$TLS/other"; tls_ca; tls_cert client "/CN=intruder")
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $TLS/broker-keystore.pem" \
	"ssl.truststore.location = $TLS/ca.pem" "ssl.client.auth = required" "log-level = debug"

kssl -m 5 -L >/dev/null 2>&1 && kaas_fail "a client without a certificate was served"
grep -q "TLS handshake" "$KAASD_LOG" || kaas_fail "the refused handshake is not logged"
kssl -m 5 -X ssl.certificate.location="$TLS/other/client.pem" \
	-X ssl.key.location="$TLS/other/client.key" -L >/dev/null 2>&1 &&
	kaas_fail "a client with a certificate from another CA was served"

withcert=(-X ssl.certificate.location="$TLS/client.pem" -X ssl.key.location="$TLS/client.key")
echo hello | kssl "${withcert[@]}" -P -t auth || kaas_fail "produce with a client certificate"
out=$(kssl "${withcert[@]}" -C -t auth -o beginning -e 2>/dev/null)
[ "$out" = hello ] || kaas_fail "consume with a client certificate read '$out'"
out=$(kssl "${withcert[@]}" -G auth-group -X auto.offset.reset=earliest -e -f '%s\n' auth 2>/dev/null)
[ "$out" = hello ] || kaas_fail "consume in a group with a client certificate read '$out'"
kssl "${withcert[@]}" -L -t auth 2>/dev/null | grep -q 'topic "auth" with 1 partitions' ||
	kaas_fail "metadata with a client certificate does not list topic auth"
grep -q "TLS established on listener SSL as User:O=kaas,CN=client1" "$KAASD_LOG" ||
	kaas_fail "principal not User:O=kaas,CN=client1: $(grep -o 'as User:.*' "$KAASD_LOG" | head -1)"
kaasd_stop
exit 0
