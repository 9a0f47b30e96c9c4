#!/bin/bash
# 200 half-open connections to the TLS listener (TCP open, a partial or no
# ClientHello) are closed by the broker after ssl.handshake.timeout.ms, the
# broker's memory stays bounded, and it serves throughout.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed"
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.location = $TLS/broker-keystore.pem" \
	"ssl.handshake.timeout.ms = 1500"
kssl -L >/dev/null || kaas_fail "metadata before"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$KAASD_PID/status"; }
before=$(rss)

python3 - "$(port SSL)" "$KAAS_SCRATCH/opened" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(200):
    s = socket.create_connection(("127.0.0.1", port))
    if i % 2:
        s.sendall(bytes.fromhex("160301")) # the start of a record header
    socks.append(s)
open(sys.argv[2], "w").write("200\n")
t0 = time.time()
closed = 0
for s in socks:
    s.settimeout(max(0.1, 8 - (time.time() - t0)))
    try:
        if s.recv(1) == b"":
            closed += 1
    except (socket.timeout, ConnectionResetError):
        if not isinstance(sys.exc_info()[1], socket.timeout):
            closed += 1
took = time.time() - t0
print("closed %d of 200 in %.1f s" % (closed, took))
sys.exit(0 if closed == 200 and took < 6 else 1)
PY
flood=$!
kaas_wait_for 10 test -s "$KAAS_SCRATCH/opened" || kaas_fail "the flood did not connect"
# Served while the half-open connections are there.
kssl -L >/dev/null || kaas_fail "metadata during the flood"
during=$(rss)
wait $flood || kaas_fail "half-open connections were not all closed in time"
grep -q "TLS handshake did not finish in 1500 ms" "$KAASD_LOG" || kaas_fail "no timeout logged"
kssl -L >/dev/null || kaas_fail "metadata after"
echo "RSS kB: before $before, with 200 half-open $during"
[ $((during - before)) -lt 40000 ] || kaas_fail "RSS grew by $((during - before)) kB for 200 half-open connections"
kaasd_stop
exit 0
