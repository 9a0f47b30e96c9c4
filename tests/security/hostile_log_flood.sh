#!/bin/bash
# Issue 35, finding 7 (logs): what strangers send does not flood the log or
# reach it raw.  900 junk connections (an unknown API key, an unsupported
# version, a frame size out of range) on a PLAINTEXT and a SASL_PLAINTEXT
# listener leave a bounded number of warnings, with a count of the ones
# left out (69fd79e: 2,300 lines from 1,300 connections in 0.1 s); a SASL
# user name with ESC, CR and other control bytes is logged escaped (\x1b),
# never raw (69fd79e wrote ESC sequences and CR into the log).
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
mkdir -p "$KAAS_SCRATCH/data/__cluster"
tls_kaasd_start "listeners = PT://127.0.0.1:0,SP://127.0.0.1:0" \
	"listener.security.protocol.map = PT:PLAINTEXT,SP:SASL_PLAINTEXT" \
	"sasl.enabled.mechanisms = PLAIN,SCRAM-SHA-512" "connection.failed.authentication.delay.ms = 0"
timeout 120 python3 - "$(port PT)" "$(port SP)" <<'PY' || kaas_fail "junk connections"
import socket, struct, sys
def junk(port, payload):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(payload)
    s.settimeout(10)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
def req(api, ver):
    h = struct.pack(">hhih", api, ver, 1, 1) + b"j"
    return struct.pack(">i", len(h)) + h
for port in map(int, sys.argv[1:3]):
    for i in range(150):
        junk(port, req(999, 0))
        junk(port, req(3, 99))
        junk(port, struct.pack(">i", 3) + b"xyz")
# PLAIN with control bytes in the user name.
for user in (b"ev\x1b[2J\x1b[31mil", b"cr\rlf\nbel\x07"):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    h = struct.pack(">hhih", 17, 1, 1, 1) + b"j" + struct.pack(">h", 5) + b"PLAIN"
    s.sendall(struct.pack(">i", len(h)) + h)
    s.recv(4096)
    tok = b"\0" + user + b"\0pw"
    h = struct.pack(">hhih", 36, 0, 2, 1) + b"j" + struct.pack(">i", len(tok)) + tok
    s.sendall(struct.pack(">i", len(h)) + h)
    s.recv(4096)
    s.close()
PY
warns=$(grep -c " WARN " "$KAASD_LOG")
echo "$warns warning lines for 900 junk connections"
[ "$warns" -le 60 ] || kaas_fail "$warns warning lines: not rate-limited"
kaas_wait_for 15 grep -q "more connection close warnings in the last\|more refused request warnings in the last" \
	"$KAASD_LOG" || kaas_fail "the warnings left out were not counted"
# The escaped names (the SASL failures have their own window: 10 per 10 s).
grep -q "user 'ev\\\\x1b\[2J\\\\x1b\[31mil'" "$KAASD_LOG" || { grep sasl "$KAASD_LOG" | tail -3; kaas_fail "ESC not escaped"; }
grep -q "user 'cr\\\\x0dlf\\\\x0abel\\\\x07'" "$KAASD_LOG" || kaas_fail "CR, LF, BEL not escaped"
LC_ALL=C grep -q $'\x1b\|\r\|\x07' "$KAASD_LOG" && kaas_fail "a control byte reached the log raw"
kaasd_stop
exit 0
