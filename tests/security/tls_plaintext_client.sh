#!/bin/bash
# A plaintext Kafka client on a TLS listener gets a closed connection at
# once, not a hang: raw ApiVersions bytes, and kcat without SSL.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed"
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $TLS/broker-keystore.pem"

python3 - "$(port SSL)" <<'PY' || kaas_fail "raw plaintext request on the TLS listener"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
t = time.time()
# ApiVersions v0, correlation id 1, client id "x"
s.sendall(bytes.fromhex("0000000b" "0012" "0000" "00000001" "0001" "78"))
data = b""
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
except socket.timeout:
    sys.exit("no close within 5 s")
took = time.time() - t
if took > 2:
    sys.exit("closed after %.1f s" % took)
# At most a TLS alert record (content type 21), never a Kafka answer.
if data and data[0] != 21:
    sys.exit("answered %r" % data[:16])
PY
start=$SECONDS
timeout 30 kcat -b "127.0.0.1:$(port SSL)" -m 5 -L >/dev/null 2>&1 && kaas_fail "plaintext kcat was served"
[ $((SECONDS - start)) -le 15 ] || kaas_fail "plaintext kcat took $((SECONDS - start)) s to fail"
grep -q "wrong version number\|TLS handshake" "$KAASD_LOG" || kaas_fail "no handshake failure logged"
kaasd_stop
exit 0
