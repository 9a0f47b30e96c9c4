#!/bin/bash
# One broker, two listeners (PLAINTEXT and SSL) advertised under different
# host names: Metadata over each answers that listener's address, and the
# broker document on the volume carries both by name.
. "$KAAS_TOP_SRCDIR/tests/security/tls-lib.sh"
tls_kaasd_start "listeners = INTERNAL://127.0.0.1:0, SSL://127.0.0.1:0" \
	"advertised.listeners = INTERNAL://127.0.0.1:0,SSL://localhost:0" \
	"listener.security.protocol.map = INTERNAL:PLAINTEXT,SSL:SSL" \
	"ssl.keystore.location = $TLS/broker-keystore.pem"
pi=$(port INTERNAL)
ps=$(port SSL)
[ -n "$pi" ] && [ -n "$ps" ] && [ "$pi" != "$ps" ] || kaas_fail "listener ports '$pi' '$ps'"

out=$(timeout 30 kcat -b "127.0.0.1:$pi" -L)
echo "$out" | grep -q "broker 0 at 127.0.0.1:$pi" || kaas_fail "metadata over INTERNAL: $out"
out=$(kssl -L)
echo "$out" | grep -q "broker 0 at localhost:$ps" || kaas_fail "metadata over SSL: $out"

# Produce on one listener, read on the other.
echo across | timeout 30 kcat -b "127.0.0.1:$pi" -P -t x || kaas_fail "produce over INTERNAL"
out=$(kssl -C -t x -o beginning -e 2>/dev/null)
[ "$out" = across ] || kaas_fail "read over SSL: '$out'"

doc="$KAAS_SCRATCH/data/__cluster/brokers/0.json"
tail -n1 "$doc" | grep -q "\"listeners\":\[{\"name\":\"INTERNAL\",\"host\":\"127.0.0.1\",\"port\":$pi},{\"name\":\"SSL\",\"host\":\"localhost\",\"port\":$ps}\]" ||
	kaas_fail "broker document: $(tail -n1 "$doc")"
tail -n1 "$doc" | grep -q "\"host\":\"127.0.0.1\",\"port\":$pi," || kaas_fail "top-level address is not the first listener's"
kaasd_stop
exit 0
