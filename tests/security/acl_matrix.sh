#!/bin/bash
# The ACL matrix (issue 17): for each API kaasd serves, a principal without
# the permission gets Kafka's authorization error and the volume is
# unchanged; with it, the call works (tests/security/acl_matrix.py).
# Principals are TLS client certificates: User:CN=admin is a super user,
# User:CN=alice starts with no binding (allow.everyone.if.no.acl.found
# defaults to false on an SSL listener).
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
TLS_ACL_LINES=()
tls_cert admin "/CN=admin"
tls_cert alice "/CN=alice"
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $TLS/broker-keystore.pem" \
	"ssl.truststore.location = $TLS/ca.pem" "ssl.client.auth = required" \
	"super.users = User:CN=admin" "num.partitions = 1"
grep -q "authorizer: on (0 binding(s), 1 super user(s), allow.everyone.if.no.acl.found=false)" \
	"$KAASD_LOG" || kaas_fail "the authorizer's settings are not logged as expected"
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/security/acl_matrix.py" "127.0.0.1:$(port SSL)" \
	"$TLS" "$KAAS_SCRATCH/data" || { tail -n 30 "$KAASD_LOG" >&2; kaas_fail "the ACL matrix"; }
# kaasctl acl: an operator's grant and revoke, followed by the broker within
# a heartbeat (kcat as alice; the data volume's default cluster directory).
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"
kctl() { "$KAASCTL" --data "$KAAS_SCRATCH/data" acl "$@"; }
kctl list --principal User:CN=alice | grep -Eq '^allow +User:CN=alice +write +topic +literal +mt ' ||
	kaas_fail "kaasctl acl list does not show alice's WRITE on mt: $(kctl list)"
alice=(-X ssl.certificate.location="$TLS/alice.pem" -X ssl.key.location="$TLS/alice.key")
kctl remove --principal User:CN=alice --topic mt --operation write >/dev/null ||
	kaas_fail "kaasctl acl remove"
sleep 1
echo denied | kssl "${alice[@]}" -m 10 -P -t mt 2>"$KAAS_SCRATCH/kcat.err" &&
	kaas_fail "alice produced after kaasctl acl remove"
grep -qi "authorization" "$KAAS_SCRATCH/kcat.err" ||
	kaas_fail "kcat's refusal is not an authorization error: $(cat "$KAAS_SCRATCH/kcat.err")"
kctl add --principal User:CN=alice --topic mt --operation write >/dev/null || kaas_fail "kaasctl acl add"
sleep 1
echo granted | kssl "${alice[@]}" -m 10 -P -t mt || kaas_fail "alice cannot produce after kaasctl acl add"
# The bindings are documents under <cluster>/acls named by their content.
ls "$KAAS_SCRATCH/data/__cluster/acls" | grep -Eq '^[0-9a-f]{32}\.json$' ||
	kaas_fail "no ACL documents under __cluster/acls"
kaasd_stop
"$KAASCTL" --data "$KAAS_SCRATCH/data" verify >"$KAAS_SCRATCH/verify.out" ||
	kaas_fail "kaasctl verify after the matrix: $(cat "$KAAS_SCRATCH/verify.out")"
exit 0
