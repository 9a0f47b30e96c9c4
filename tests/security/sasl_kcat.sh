#!/bin/bash
# kcat over SASL_SSL with SCRAM-SHA-512 (produce, consume in a group,
# metadata) and over SASL_PLAINTEXT with PLAIN (produce, consume); a
# wrong password is refused (SASL_AUTHENTICATION_FAILED) and so is a client
# without SASL; a user added with kaasctl while the broker runs logs in
# within a heartbeat, and one deleted is refused.  Then the password it set
# is looked for in every log line (debug level) and every file of the
# volume: it must appear nowhere.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
PW="pw-$(openssl rand -hex 12)"
PW2="pw-$(openssl rand -hex 12)"
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"
mkdir -p "$KAAS_SCRATCH/data/__cluster"
echo "$PW" | "$KAASCTL" --data "$KAAS_SCRATCH/data" user add alice --mechanism SCRAM-SHA-512 \
	>/dev/null || kaas_fail "kaasctl user add"
tls_kaasd_start "listeners = EXT://127.0.0.1:0,INT://127.0.0.1:0" \
	"listener.security.protocol.map = EXT:SASL_SSL,INT:SASL_PLAINTEXT" \
	"ssl.keystore.location = $TLS/broker-keystore.pem" \
	"sasl.enabled.mechanisms = SCRAM-SHA-512,PLAIN" "num-partitions = 2" "log-level = debug" \
	"heartbeat-ms = 200"

ext() { # ext USER PASSWORD kcat-args...: kcat over SASL_SSL, SCRAM-SHA-512
	local u=$1 p=$2
	shift 2
	timeout 60 kcat -b "127.0.0.1:$(port EXT)" -X security.protocol=SASL_SSL \
		-X ssl.ca.location="$TLS/ca.pem" -X sasl.mechanisms=SCRAM-SHA-512 \
		-X sasl.username="$u" -X sasl.password="$p" "$@"
}
int() { # int USER PASSWORD kcat-args...: kcat over SASL_PLAINTEXT, PLAIN
	local u=$1 p=$2
	shift 2
	timeout 60 kcat -b "127.0.0.1:$(port INT)" -X security.protocol=SASL_PLAINTEXT \
		-X sasl.mechanisms=PLAIN -X sasl.username="$u" -X sasl.password="$p" "$@"
}
roundtrip() { # roundtrip ext|int TOPIC GROUP
	local via=$1 t=$2 g=$3
	seq 1 500 | sed "s/^/$t-/" >"$KAAS_SCRATCH/$t.want"
	$via alice "$PW" -P -t "$t" -l "$KAAS_SCRATCH/$t.want" || kaas_fail "$via: produce"
	$via alice "$PW" -G "$g" -X auto.offset.reset=earliest -X session.timeout.ms=6000 -e \
		-f '%s\n' "$t" 2>"$KAAS_SCRATCH/$t.err" | sort >"$KAAS_SCRATCH/$t.got"
	sort "$KAAS_SCRATCH/$t.want" | cmp -s - "$KAAS_SCRATCH/$t.got" ||
		{ tail -5 "$KAAS_SCRATCH/$t.err" >&2; kaas_fail "$via: group read $(wc -l <"$KAAS_SCRATCH/$t.got") of 500"; }
	$via alice "$PW" -L | grep -q "broker 0 at 127.0.0.1:$(port "${via^^}")" ||
		kaas_fail "$via: metadata does not name the listener's address"
}
roundtrip ext tx gx
# SASL_PLAINTEXT with PLAIN: produce, read back (the group over PLAIN:
# sasl_confluent.sh).
seq 1 200 >"$KAAS_SCRATCH/ti.want"
int alice "$PW" -P -t ti -l "$KAAS_SCRATCH/ti.want" || kaas_fail "int: produce"
int alice "$PW" -C -t ti -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/ti.got"
int alice "$PW" -C -t ti -p 1 -o beginning -e -f '%s\n' 2>/dev/null >>"$KAAS_SCRATCH/ti.got"
[ "$(sort -n "$KAAS_SCRATCH/ti.got" | tr '\n' ' ')" = "$(tr '\n' ' ' <"$KAAS_SCRATCH/ti.want")" ] ||
	kaas_fail "int: read back $(wc -l <"$KAAS_SCRATCH/ti.got") of 200"

# A wrong password: refused.
ext alice wrong-password -m 2 -L >/dev/null 2>"$KAAS_SCRATCH/bad.err" && kaas_fail "wrong password accepted"
grep -q "Authentication failed during authentication due to invalid credentials" "$KAAS_SCRATCH/bad.err" ||
	{ cat "$KAAS_SCRATCH/bad.err" >&2; kaas_fail "wrong password: not SASL_AUTHENTICATION_FAILED"; }
# (An unknown user and a client without SASL: sasl_wire.sh.)

# kaasctl while the broker runs: seen within a heartbeat (the cache).
echo "$PW2" | "$KAASCTL" --data "$KAAS_SCRATCH/data" user add bob >/dev/null || kaas_fail "add bob"
kaas_wait_for 10 int bob "$PW2" -m 2 -L || kaas_fail "bob cannot log in after kaasctl user add"
"$KAASCTL" --data "$KAAS_SCRATCH/data" user list | grep -q "^bob  *SCRAM-SHA-512  *8192" ||
	kaas_fail "user list does not show bob"
"$KAASCTL" --data "$KAAS_SCRATCH/data" user delete bob >/dev/null || kaas_fail "delete bob"
gone=
for i in $(seq 1 50); do
	int bob "$PW2" -m 2 -L >/dev/null 2>&1 || { gone=1; break; }
	sleep 0.2
done
[ -n "$gone" ] || kaas_fail "bob still logs in after kaasctl user delete"
kaasd_stop

# The passwords appear nowhere: not in a log line, not in a file of the volume.
grep -F -e "$PW" -e "$PW2" "$KAAS_SCRATCH"/kaasd.*.log && kaas_fail "a password in the broker's log"
grep -rlF -e "$PW" -e "$PW2" "$KAAS_SCRATCH/data" && kaas_fail "a password on the volume"
grep -q "sasl: .*authenticated as User:alice (SCRAM-SHA-512)" "$KAASD_LOG" ||
	kaas_fail "the debug log was not at debug level (the grep proves nothing)"
exit 0
