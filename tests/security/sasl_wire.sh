#!/bin/bash
# The SASL exchange byte by byte on a SASL_PLAINTEXT listener
# (sasl_wire.py): only ApiVersions and SASL before authentication, every
# SaslAuthenticate version with SCRAM-SHA-256/512 and PLAIN, the server
# signature, SASL_AUTHENTICATION_FAILED / UNSUPPORTED_SASL_MECHANISM /
# ILLEGAL_SASL_STATE answered and the connection closed after, malformed
# SCRAM messages, KIP-368 (session_lifetime_ms, re-authentication extends
# the session, a request after its end closes the connection), and a user
# stored by AlterUserScramCredentials logging in at once.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
mkdir -p "$KAAS_SCRATCH/data/__cluster"
for m in SCRAM-SHA-512 SCRAM-SHA-256; do
	echo alice-pw-7Qx | "$KAAS_TOP_BUILDDIR/kaasctl" --data "$KAAS_SCRATCH/data" user add alice \
		--mechanism $m --iterations 4096 >/dev/null || kaas_fail "kaasctl user add ($m)"
done
tls_kaasd_start "listeners = SP://127.0.0.1:0" "listener.security.protocol.map = SP:SASL_PLAINTEXT" \
	"sasl.enabled.mechanisms = PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" "connections.max.reauth.ms = 2000"
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/security/sasl_wire.py" "$(port SP)" ||
	{ tail -20 "$KAASD_LOG" >&2; kaas_fail "SASL wire exchanges"; }
grep -q "sasl: authentication failed from 127.0.0.1:[0-9]* (mechanism SCRAM-SHA-512, user 'alice')" \
	"$KAASD_LOG" || kaas_fail "no failure logged with the peer's address"
grep -q "sasl: connection 127.0.0.1:[0-9]* closed: API 3 before SASL authentication" "$KAASD_LOG" ||
	kaas_fail "the request before authentication was not logged as refused"
# (Failures and refusals share one limit, 10 lines per 10 s: the later
# ones of this test are counted, not logged.)
kaasd_stop
exit 0
