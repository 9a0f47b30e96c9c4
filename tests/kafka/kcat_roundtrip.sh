#!/bin/bash
# kcat against kaasd: metadata, 1 and 100,000 messages with keys, headers and
# null values, each compression codec, consume by offset and by timestamp.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
kaasd_start

# Metadata.
kc -L | grep -q "broker 0 at $BROKER" || kaas_fail "kcat -L does not list the broker"

# One message with a key and a header.
echo "k1:hello" | kc -P -t one -K: -H h1=v1 || kaas_fail "produce one"
out=$(kc -C -t one -e -o beginning -f '%k|%s|%h|%o\n' 2>/dev/null)
[ "$out" = "k1|hello|h1=v1|0" ] || kaas_fail "one message read back as '$out'"

# A null value (kcat -Z sends empty values as NULL) and a null key.
printf 'nk:\n' | kc -P -t nulls -K: -Z || kaas_fail "produce null value"
echo "plain" | kc -P -t nulls || kaas_fail "produce null key"
out=$(kc -C -t nulls -e -o beginning -Z -f '%k|%s;' 2>/dev/null)
[ "$out" = "nk|NULL;NULL|plain;" ] || kaas_fail "null key/value read back as '$out'"

# 100,000 keyed messages.
seq 1 100000 | sed 's/^\(.*\)$/key\1:value\1/' >"$KAAS_SCRATCH/in.txt"
kc -P -t big -K: -l "$KAAS_SCRATCH/in.txt" || kaas_fail "produce 100000"
kc -C -t big -e -o beginning -f '%k:%s\n' 2>/dev/null >"$KAAS_SCRATCH/out.txt"
cmp -s "$KAAS_SCRATCH/in.txt" "$KAAS_SCRATCH/out.txt" || kaas_fail "100000 messages differ on read back ($(wc -l <"$KAAS_SCRATCH/out.txt") lines)"

# By offset.
out=$(kc -C -t big -o 99990 -c 3 -f '%o=%s\n' 2>/dev/null | tr '\n' ' ')
[ "$out" = "99990=value99991 99991=value99992 99992=value99993 " ] || kaas_fail "by offset: '$out'"

# Each codec, with keys and headers.
for z in gzip snappy lz4 zstd; do
	seq 1 5000 | sed 's/^/k:/' | kc -P -t "c-$z" -z "$z" -K: -H "codec=$z" || kaas_fail "produce $z"
	n=$(kc -C -t "c-$z" -e -o beginning -f '%s %h\n' 2>/dev/null | grep -c " codec=$z\$")
	[ "$n" = 5000 ] || kaas_fail "$z: read back $n of 5000"
	sum=$(kc -C -t "c-$z" -e -o beginning -f '%s\n' 2>/dev/null | awk '{s+=$1} END {print s}')
	[ "$sum" = 12502500 ] || kaas_fail "$z: payload sum $sum"
done

# By timestamp: two batches produced at known times (-o s@TS).
echo "early" | kc -P -t ts || kaas_fail "produce early"
sleep 1.2
ts=$(($(date +%s%3N) - 100))
echo "late" | kc -P -t ts || kaas_fail "produce late"
out=$(kc -C -t ts -o "s@$ts" -e -f '%s\n' 2>/dev/null)
[ "$out" = "late" ] || kaas_fail "by timestamp read '$out'"
out=$(kc -C -t ts -o "s@$((ts - 60000))" -e -f '%s\n' 2>/dev/null | tr '\n' ' ')
[ "$out" = "early late " ] || kaas_fail "by early timestamp read '$out'"

kaasd_stop
echo "PASS"
