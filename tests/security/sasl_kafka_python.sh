#!/bin/bash
# kafka-python (python3-kafka) over SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256
# and SCRAM-SHA-512: SaslHandshake v0 and the raw tokens after it (Kafka's
# v0 framing); produce and consume in a group; a wrong password gets no
# broker.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
/usr/bin/python3 -c 'import kafka' 2>/dev/null || kaas_skip "no kafka-python (python3-kafka)"
mkdir -p "$KAAS_SCRATCH/data/__cluster"
for m in SCRAM-SHA-512 SCRAM-SHA-256; do
	echo alice-pw-4Kd | "$KAAS_TOP_BUILDDIR/kaasctl" --data "$KAAS_SCRATCH/data" user add alice \
		--mechanism $m --iterations 4096 >/dev/null || kaas_fail "kaasctl user add ($m)"
done
tls_kaasd_start "listeners = SP://127.0.0.1:0" "listener.security.protocol.map = SP:SASL_PLAINTEXT" \
	"sasl.enabled.mechanisms = PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
for m in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
	timeout 60 /usr/bin/python3 "$KAAS_TOP_SRCDIR/tests/security/sasl_kafka_python.py" "$(port SP)" \
		$m alice-pw-4Kd >"$KAAS_SCRATCH/kp.$m" 2>&1 || { tail -5 "$KAAS_SCRATCH/kp.$m" >&2; kaas_fail "kafka-python over $m"; }
done
timeout 60 /usr/bin/python3 "$KAAS_TOP_SRCDIR/tests/security/sasl_kafka_python.py" "$(port SP)" \
	SCRAM-SHA-512 wrong >/dev/null 2>&1 && kaas_fail "kafka-python with a wrong password"
grep -q "sasl: authentication failed from .*SCRAM-SHA-512.*wrong password" "$KAASD_LOG" ||
	kaas_fail "the wrong password was not refused by the SCRAM check"
kaasd_stop
exit 0
