#!/bin/bash
# kcat over an SSL listener: produce, consume in a group (FindCoordinator
# answers the SSL listener's address), and a fetch large enough for the
# zero-copy path, which a TLS connection must bypass (the record bytes are
# read and encrypted; the debug log says so).
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
tls_kaasd_start "listeners = SSL://127.0.0.1:0" "ssl.keystore.type = PEM" \
	"ssl.keystore.location = $TLS/broker-keystore.pem" "num-partitions = 3" "log-level = debug"

kssl -L | grep -q "broker 0 at 127.0.0.1:$(port SSL)" || kaas_fail "metadata over SSL"

seq 1 3000 | sed 's/^/m/' >"$KAAS_SCRATCH/want"
kssl -P -t tg -l "$KAAS_SCRATCH/want" || kaas_fail "produce over SSL"
timeout 60 kcat -b "127.0.0.1:$(port SSL)" -X security.protocol=ssl -X ssl.ca.location="$TLS/ca.pem" \
	-G g1 -X auto.offset.reset=earliest -X session.timeout.ms=6000 -e -f '%s\n' tg \
	2>"$KAAS_SCRATCH/consumer.err" | sort >"$KAAS_SCRATCH/got"
sort "$KAAS_SCRATCH/want" >"$KAAS_SCRATCH/want.sorted"
cmp -s "$KAAS_SCRATCH/want.sorted" "$KAAS_SCRATCH/got" ||
	{ tail -5 "$KAAS_SCRATCH/consumer.err" >&2; kaas_fail "group consumer read $(wc -l <"$KAAS_SCRATCH/got") of 3000"; }

# 200,000 records in one partition: fetches of more than 64 KiB.
seq 1 200000 >"$KAAS_SCRATCH/big"
kssl -P -t big -p 0 -l "$KAAS_SCRATCH/big" || kaas_fail "produce big"
kssl -C -t big -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/big.out"
cmp -s "$KAAS_SCRATCH/big" "$KAAS_SCRATCH/big.out" || kaas_fail "big read back $(wc -l <"$KAAS_SCRATCH/big.out") of 200000"
grep -q "record bytes read for TLS" "$KAASD_LOG" || kaas_fail "no fetch took the TLS copy path"
grep -q "by sendfile" "$KAASD_LOG" && kaas_fail "a TLS connection was sent a fetch by sendfile"
kaasd_stop
exit 0
