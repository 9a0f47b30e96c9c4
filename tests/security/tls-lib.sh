# tests/security/tls-lib.sh — certificates and a kaasd with listeners for
# the security tests.  Sourced first: it sources tests/lib.sh and
# tests/kafka/kaasd-lib.sh, makes the scratch directory, a CA and a broker
# certificate (broker-keystore.pem, CN=localhost).
#
#   tls_ca                     a CA in $TLS (ca.pem, ca.key)
#   tls_cert NAME SUBJECT      NAME.pem + NAME.key signed by the CA, with
#                              SAN localhost/127.0.0.1; NAME-keystore.pem =
#                              key + certificate (a kaasd keystore)
#   tls_serial NAME            NAME.pem's serial, hex, upper case
#   tls_kaasd_start LINES...   kaasd with these config-file lines (and
#                              --group-initial-rebalance-delay-ms 0, then
#                              the array TLS_KAASD_ARGS); sets KAASD_PID,
#                              KAASD_LOG; port NAME [LOG] prints the bound
#                              port of listener NAME (in LOG, default
#                              $KAASD_LOG)
#   kssl ARGS...               kcat over SSL to the SSL listener, trusting the CA
#   TLS_ACL_LINES              config lines tls_kaasd_start adds first: by
#                              default allow.everyone.if.no.acl.found = true
#                              (an SSL listener makes it default to false; the
#                              listener and TLS tests are not about ACLs); the
#                              ACL tests set TLS_ACL_LINES=()

. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v openssl >/dev/null 2>&1 || kaas_skip "the openssl CLI is not installed"
TLS_KAASD_ARGS=()
TLS_ACL_LINES=("allow.everyone.if.no.acl.found = true")
TLS="$KAAS_SCRATCH/tls"
mkdir -p "$TLS"

tls_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kaas test CA" \
		-keyout "$TLS/ca.key" -out "$TLS/ca.pem" 2>/dev/null || kaas_fail "openssl: CA"
}

tls_cert() {
	local name=$1 subj=$2
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$TLS/san.ext"
	openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$TLS/$name.key" \
		-out "$TLS/$name.csr" 2>/dev/null &&
	openssl x509 -req -in "$TLS/$name.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" \
		-set_serial "0x$(openssl rand -hex 8)" -days 2 -extfile "$TLS/san.ext" \
		-out "$TLS/$name.pem" 2>/dev/null || kaas_fail "openssl: certificate $name"
	cat "$TLS/$name.key" "$TLS/$name.pem" >"$TLS/$name-keystore.pem"
}

tls_serial() {
	openssl x509 -in "$TLS/$1.pem" -noout -serial | sed 's/^serial=//' | tr a-f A-F
}

tls_kaasd_start() {
	KAASD_RUN=$((KAASD_RUN + 1))
	KAASD_LOG="$KAAS_SCRATCH/kaasd.$KAASD_RUN.log"
	printf '%s\n' "${TLS_ACL_LINES[@]}" "$@" >"$KAAS_SCRATCH/kaas.$KAASD_RUN.conf"
	"$KAASD" --data "$KAAS_SCRATCH/data" --config "$KAAS_SCRATCH/kaas.$KAASD_RUN.conf" \
		--group-initial-rebalance-delay-ms 0 "${TLS_KAASD_ARGS[@]}" 2>"$KAASD_LOG" &
	KAASD_PID=$!
	kaas_on_exit "kill -9 $KAASD_PID"
	kaas_wait_for 20 grep -q "listening on" "$KAASD_LOG" ||
		{ cat "$KAASD_LOG" >&2; kaas_fail "kaasd did not start listening"; }
}

port() {
	sed -n "s/.* listener $1 ([A-Z_]*) on [^ ]*:\([0-9]*\),.*/\1/p" "${2:-$KAASD_LOG}" | head -n1
}

kssl() {
	timeout 60 kcat -b "127.0.0.1:$(port SSL)" -X security.protocol=ssl \
		-X ssl.ca.location="$TLS/ca.pem" "$@"
}

tls_ca
tls_cert broker "/CN=localhost"
