#!/bin/bash
# SIGHUP reloads the certificate without a restart: after the keystore file
# is replaced and kaasd gets SIGHUP, a new connection sees the new serial;
# a keystore that does not load keeps the old certificate in service.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
tls_cert one "/CN=localhost"
tls_cert two "/CN=localhost"
cp "$TLS/one-keystore.pem" "$TLS/keystore.pem"
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $TLS/keystore.pem"

served_serial() {
	timeout 10 openssl s_client -connect "127.0.0.1:$(port SSL)" -CAfile "$TLS/ca.pem" </dev/null 2>/dev/null |
		openssl x509 -noout -serial | sed 's/^serial=//' | tr a-f A-F
}
s1=$(served_serial)
[ "$s1" = "$(tls_serial one)" ] || kaas_fail "first serial '$s1', expected $(tls_serial one)"

cp "$TLS/two-keystore.pem" "$TLS/keystore.pem.new" && mv "$TLS/keystore.pem.new" "$TLS/keystore.pem"
kill -HUP "$KAASD_PID"
kaas_wait_for 10 grep -q "TLS: reloaded" "$KAASD_LOG" || kaas_fail "no reload logged"
s2=$(served_serial)
[ "$s2" = "$(tls_serial two)" ] || kaas_fail "after SIGHUP serial '$s2', expected $(tls_serial two)"
kssl -L >/dev/null || kaas_fail "metadata after the reload"

# A broken keystore: the reload fails and the current certificate stays.
echo garbage >"$TLS/keystore.pem"
kill -HUP "$KAASD_PID"
kaas_wait_for 10 grep -q "TLS reload failed" "$KAASD_LOG" || kaas_fail "no failed reload logged"
s3=$(served_serial)
[ "$s3" = "$(tls_serial two)" ] || kaas_fail "after a failed reload serial '$s3'"
kill -0 "$KAASD_PID" || kaas_fail "kaasd died"
kaasd_stop
exit 0
