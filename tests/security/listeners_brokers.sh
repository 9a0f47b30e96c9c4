#!/bin/bash
# Two brokers on one volume, each with a PLAINTEXT and an SSL listener
# (the SSL one advertised as localhost): Metadata through either listener
# of broker 0 lists broker 1 at broker 1's address on that same listener,
# and clients over SSL produce to and consume in a group from partitions
# led by both brokers (leaders and the coordinator reached over SSL).  24
# partitions: the controller places them counting the group-coordinator
# slots it is still moving to the new broker, so a few could all land on it.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
conf=("listeners = PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"
	"advertised.listeners = SSL://localhost:0"
	"ssl.keystore.location = $TLS/broker-keystore.pem" "num-partitions = 24")
TLS_KAASD_ARGS=(--broker-id 0 --heartbeat-ms 100 --liveness-timeout-ms 1000)
tls_kaasd_start "${conf[@]}"
log0=$KAASD_LOG pid0=$KAASD_PID
TLS_KAASD_ARGS=(--broker-id 1 --heartbeat-ms 100 --liveness-timeout-ms 1000)
tls_kaasd_start "${conf[@]}"
log1=$KAASD_LOG pid1=$KAASD_PID

both_listed() {
	local m
	m=$(timeout 10 kcat -b "127.0.0.1:$(port PLAINTEXT "$log0")" -L) || return 1
	grep -q "broker 1 at 127.0.0.1:$(port PLAINTEXT "$log1")" <<<"$m" || return 1
	m=$(timeout 10 kcat -b "127.0.0.1:$(port SSL "$log0")" -X security.protocol=ssl \
		-X ssl.ca.location="$TLS/ca.pem" -L) || return 1
	grep -q "broker 1 at localhost:$(port SSL "$log1")" <<<"$m" &&
		grep -q "broker 0 at localhost:$(port SSL "$log0")" <<<"$m"
}
kaas_wait_for 20 both_listed || kaas_fail "broker 0's metadata does not list broker 1 per listener"

ssl0=(-b "127.0.0.1:$(port SSL "$log0")" -X security.protocol=ssl -X ssl.ca.location="$TLS/ca.pem")
seq 1 2000 | sed 's/^/v/' >"$KAAS_SCRATCH/want"
timeout 60 kcat "${ssl0[@]}" -P -t spread -l "$KAAS_SCRATCH/want" || kaas_fail "produce over SSL"
# The controller spreads the auto-created topic's partitions over both
# brokers; right after the produce the assignment may still be moving.
leaders_both() {
	leaders=$(timeout 10 kcat "${ssl0[@]}" -L -t spread | sed -n 's/.*leader \([0-9]*\),.*/\1/p' | sort -u | tr '\n' ' ')
	[ "$leaders" = "0 1 " ]
}
kaas_wait_for 20 leaders_both || { tail -n 15 "$log0" "$log1" >&2; kaas_fail "partitions led by '$leaders', expected both brokers"; }
timeout 60 kcat "${ssl0[@]}" -G gs -X auto.offset.reset=earliest -X session.timeout.ms=6000 -e \
	-f '%s\n' spread 2>"$KAAS_SCRATCH/consumer.err" | sort >"$KAAS_SCRATCH/got"
sort "$KAAS_SCRATCH/want" | cmp -s - "$KAAS_SCRATCH/got" ||
	{ tail -5 "$KAAS_SCRATCH/consumer.err" >&2; kaas_fail "group read $(wc -l <"$KAAS_SCRATCH/got") of 2000 over SSL"; }
kill -TERM "$pid1" "$pid0"
wait "$pid1" || kaas_fail "broker 1 exit"
wait "$pid0" || kaas_fail "broker 0 exit"
exit 0
