#!/bin/bash
# Issue 35, finding 6: TLS settings.
#  - No TLS 1.2 session ticket and no resumption (69fd79e issued a ticket
#    with a 7200 s lifetime and resumed it, and with ssl.client.auth a
#    resumed session failed its handshake: "session id context
#    uninitialized").
#  - By default only forward-secret suites: static-RSA suites (AES128-GCM-
#    SHA256, AES256-SHA) are refused (69fd79e accepted them).
#  - ssl.cipher.suites (Kafka's key; IANA names as Kafka writes them, or
#    OpenSSL's) restricts the suites; a name OpenSSL does not know is a
#    start-up error.
#  - ssl.enabled.protocols (Kafka's key, default TLSv1.2,TLSv1.3).
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
tls_cert client "/O=kaas/CN=client1"
SSL_LINES=("listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $TLS/broker-keystore.pem")
sc() { # s_client ARGS... : its output, the connection closed at once
	timeout 20 openssl s_client -connect "127.0.0.1:$(port SSL)" -CAfile "$TLS/ca.pem" "$@" \
		</dev/null 2>&1
}

# 1. Tickets, resumption, suites, with client authentication requested.
tls_kaasd_start "${SSL_LINES[@]}" "ssl.client.auth = requested" "ssl.truststore.location = $TLS/ca.pem"
out=$(sc -tls1_2 -cert "$TLS/client.pem" -key "$TLS/client.key" -sess_out "$KAAS_SCRATCH/sess")
echo "$out" | grep -q "Verify return code: 0" || { echo "$out" | tail -20; kaas_fail "TLS 1.2 handshake"; }
echo "$out" | grep -q "TLS session ticket lifetime hint" && kaas_fail "a TLS 1.2 session ticket was issued"
# (s_client keeps a session only when it can be resumed: no file is the
# answer wanted; a file, from an older broker, must not resume.)
if [ -s "$KAAS_SCRATCH/sess" ]; then
	out=$(sc -tls1_2 -cert "$TLS/client.pem" -key "$TLS/client.key" -sess_in "$KAAS_SCRATCH/sess")
	echo "$out" | grep -q "^Reused" && kaas_fail "a TLS 1.2 session was resumed"
	echo "$out" | grep -q "^New, " || { echo "$out" | tail -20; kaas_fail "a reconnect with a session failed"; }
fi
grep -q "session id context uninitialized" "$KAASD_LOG" && kaas_fail "session id context"
for c in AES128-GCM-SHA256 AES256-SHA AES128-SHA256; do
	sc -tls1_2 -cipher "$c" | grep -q "Cipher is $c" && kaas_fail "static-RSA suite $c accepted"
done
sc -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 | grep -q "Cipher is ECDHE-RSA-AES128-GCM-SHA256" ||
	kaas_fail "ECDHE-RSA-AES128-GCM-SHA256 refused"
sc -tls1_3 | grep -q "TLSv1.3" || kaas_fail "TLS 1.3 refused"
sc -tls1_1 | grep -q "Cipher is (NONE)\|alert\|no protocols" || kaas_fail "TLS 1.1 accepted"
kaasd_stop

# 2. ssl.cipher.suites in Kafka's spelling, ssl.enabled.protocols = TLSv1.2.
tls_kaasd_start "${SSL_LINES[@]}" "ssl.enabled.protocols = TLSv1.2" \
	"ssl.cipher.suites = TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
sc -tls1_2 | grep -q "Cipher is ECDHE-RSA-AES256-GCM-SHA384" || kaas_fail "the one suite listed"
sc -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 | grep -q "Cipher is ECDHE-RSA-AES128-GCM-SHA256" &&
	kaas_fail "a suite not listed was accepted"
sc -tls1_3 | grep -q "Protocol *: TLSv1.3\|New, TLSv1.3" && kaas_fail "TLS 1.3 with ssl.enabled.protocols = TLSv1.2"
kaasd_stop

# 3. TLS 1.3 only; a suite OpenSSL does not know; a protocol not served.
tls_kaasd_start "${SSL_LINES[@]}" "ssl.enabled.protocols = TLSv1.3"
sc -tls1_2 | grep -q "Cipher is ECDHE" && kaas_fail "TLS 1.2 with ssl.enabled.protocols = TLSv1.3"
sc -tls1_3 | grep -q "TLSv1.3" || kaas_fail "TLS 1.3"
kaasd_stop
printf '%s\n' "${SSL_LINES[@]}" "ssl.cipher.suites = TLS_NO_SUCH_SUITE" >"$KAAS_SCRATCH/bad.conf"
"$KAASD" --data "$KAAS_SCRATCH/data" --config "$KAAS_SCRATCH/bad.conf" 2>"$KAAS_SCRATCH/bad.log" &&
	kaas_fail "kaasd started with an unknown suite"
grep -q "TLS_NO_SUCH_SUITE" "$KAAS_SCRATCH/bad.log" || { cat "$KAAS_SCRATCH/bad.log"; kaas_fail "the unknown suite is not named"; }
printf '%s\n' "${SSL_LINES[@]}" "ssl.enabled.protocols = TLSv1.1" >"$KAAS_SCRATCH/bad.conf"
"$KAASD" --data "$KAAS_SCRATCH/data" --config "$KAAS_SCRATCH/bad.conf" 2>"$KAAS_SCRATCH/bad.log" &&
	kaas_fail "kaasd started with TLSv1.1"
grep -q "TLSv1.1" "$KAAS_SCRATCH/bad.log" || kaas_fail "TLSv1.1 not named"
exit 0
