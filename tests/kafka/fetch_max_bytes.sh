#!/bin/bash
# Fetch honours the response-level max_bytes (issue 22, item 1): a librdkafka
# consumer with fetch.max.bytes=1000000 and receive.message.max.bytes=1000512
# (librdkafka drops any response larger than the latter) reads 10 MB of
# 100 KB records in 3 partitions to the end, through the copying path and the
# zero-copy (sendfile) path; and the raw-protocol check of the bounds.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
[ -x "$RAW" ] || kaas_fail "no rawclient at $RAW"
kaas_scratch

# 100 records of 100,000 bytes, each line distinct (its number first).
for i in $(seq 1 100); do
	printf '%03d' "$i"
	head -c 99997 /dev/zero | tr '\0' 'x'
	echo
done >"$KAAS_SCRATCH/rec.txt"

# zero-copy-min-bytes 0: always copied; 1: always sendfile.
for zc in 0 1; do
	rm -rf "$KAAS_SCRATCH/data"
	kaasd_start --num-partitions 3 --zero-copy-min-bytes "$zc"
	# 34 + 33 + 33 records, acks=all; librdkafka packs several 100 KB
	# records in one batch (batch.size 1000000), so batches approach 1 MB.
	sed -n '1,34p' "$KAAS_SCRATCH/rec.txt" | kc -P -t big3 -p 0 -X acks=all || kaas_fail "produce p0"
	sed -n '35,67p' "$KAAS_SCRATCH/rec.txt" | kc -P -t big3 -p 1 -X acks=all || kaas_fail "produce p1"
	sed -n '68,100p' "$KAAS_SCRATCH/rec.txt" | kc -P -t big3 -p 2 -X acks=all || kaas_fail "produce p2"

	# Raw protocol: the response and partition bounds, one batch over.
	"$RAW" "$BROKER" fetch-bounds big3 3 || kaas_fail "fetch-bounds (zero-copy-min-bytes $zc)"

	# The consumer must reach the end of all three partitions (-e).
	timeout 90 kcat -b "$BROKER" -C -t big3 -o beginning -e -q \
		-X fetch.max.bytes=1000000 -X receive.message.max.bytes=1000512 \
		-f '%s\n' >"$KAAS_SCRATCH/out.txt" 2>"$KAAS_SCRATCH/kcat.err"
	rc=$?
	n=$(wc -l <"$KAAS_SCRATCH/out.txt")
	if [ $rc -ne 0 ] || [ "$n" != 100 ]; then
		tail -n 3 "$KAAS_SCRATCH/kcat.err" >&2
		kaas_fail "zero-copy-min-bytes $zc: consumer read $n of 100 records (kcat exit $rc)"
	fi
	sort "$KAAS_SCRATCH/out.txt" | cmp -s - "$KAAS_SCRATCH/rec.txt" ||
		kaas_fail "zero-copy-min-bytes $zc: records read back differ"
	kaasd_stop
done
echo PASS
