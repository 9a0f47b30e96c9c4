#!/bin/bash
# Listener and TLS settings that cannot work are refused at start with a
# clear message, before anything is opened.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
refused() { # refused WHAT-STDERR-SAYS [config lines...] -- [args...]
	local want=$1
	shift
	local lines=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do lines+=("$1"); shift; done
	[ "${1-}" = -- ] && shift
	printf '%s\n' "${lines[@]}" >"$KAAS_SCRATCH/c.conf"
	local rc=0
	timeout 10 "$KAASD" --data "$KAAS_SCRATCH/data" --config "$KAAS_SCRATCH/c.conf" "$@" \
		>"$KAAS_SCRATCH/err" 2>&1 || rc=$?
	[ $rc -eq 2 ] || kaas_fail "exit $rc (not 2) for: ${lines[*]} $*"
	grep -q "$want" "$KAAS_SCRATCH/err" || kaas_fail "for ${lines[*]}: said '$(cat "$KAAS_SCRATCH/err")'"
}
refused "needs ssl.keystore.location" "listeners = SASL_SSL://127.0.0.1:0"
refused "'GSSAPI' is not served" "listeners = EXT://127.0.0.1:0" \
	"listener.security.protocol.map = EXT:SASL_PLAINTEXT" "sasl.enabled.mechanisms = PLAIN,GSSAPI"
refused "sasl.enabled.mechanisms is empty" "sasl.enabled.mechanisms = ,"
refused "bad value '-1' for connections.max.reauth.ms" "connections.max.reauth.ms = -1"
refused "has no security protocol" "listeners = EXTERNAL://127.0.0.1:0"
refused "needs ssl.keystore.location" "listeners = SSL://127.0.0.1:0"
refused "needs ssl.truststore.location" "listeners = SSL://127.0.0.1:0" \
	"ssl.keystore.location = /nonexistent.pem" "ssl.client.auth = required"
refused "use one" "listeners = PLAINTEXT://127.0.0.1:0" -- --listen 127.0.0.1:0
refused "is not NAME://host:port" "listeners = 127.0.0.1:9092"
refused "named twice" "listeners = PLAINTEXT://127.0.0.1:0,plaintext://127.0.0.1:0"
refused "is not in listeners" "listeners = PLAINTEXT://127.0.0.1:0" "advertised.listeners = SSL://x:1"
refused "only PEM" "ssl.keystore.type = JKS"
refused "expected none, requested or required" "ssl.client.auth = maybe"
# Issue 35's limits: Kafka's keys, values in range.
refused "bad value '-5' for max.connections " "max.connections = -5"
refused "bad value 'x' for max.connections.per.ip " "max.connections.per.ip = x"
refused "'10.0.0.1' is not address:count" "max.connections.per.ip.overrides = 10.0.0.1"
refused "bad value '-2' for connections.max.idle.ms" "connections.max.idle.ms = -2"
refused "bad value '10' for sasl.server.max.receive.size" "sasl.server.max.receive.size = 10"
refused "bad value '50' for sasl.authentication.timeout.ms" "sasl.authentication.timeout.ms = 50"
refused "bad value '-1' for connection.failed.authentication.delay.ms" \
	"connection.failed.authentication.delay.ms = -1"
refused "'TLSv1.1' is not served" "ssl.enabled.protocols = TLSv1.1,TLSv1.2"
# A keystore that does not load: the TLS error, and a non-zero exit.
echo garbage >"$KAAS_SCRATCH/bad.pem"
printf '%s\n' "listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $KAAS_SCRATCH/bad.pem" >"$KAAS_SCRATCH/c.conf"
rc=0
timeout 20 "$KAASD" --data "$KAAS_SCRATCH/data" --config "$KAAS_SCRATCH/c.conf" >"$KAAS_SCRATCH/err" 2>&1 || rc=$?
[ $rc -ne 0 ] || kaas_fail "kaasd started with a keystore that does not load"
grep -q "TLS: .*bad.pem" "$KAAS_SCRATCH/err" || kaas_fail "bad keystore: said '$(cat "$KAAS_SCRATCH/err")'"
exit 0
