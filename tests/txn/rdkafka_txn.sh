#!/bin/bash
# librdkafka's transactional producer against one kaasd: a committed, an
# aborted and another committed transaction over 3 partitions of 2 topics
# with offsets sent to a group; read_committed sees exactly the committed
# records in order, read_uncommitted all of them; the group's offset is the
# committed transaction's; a second producer with the same transactional id
# fences the first.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
kaasd_start --num-partitions 2
OFFSETS_RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"

for step in "commit c1" "abort a1" "commit c2"; do
	set -- $step
	out=$(txn_client "$BROKER" tx1 "$1" ta tb "$2" g1) ||
		{ tail -n 30 "$KAASD_LOG" >&2; kaas_fail "$1 transaction $2 failed: $out"; }
	[ "$out" = ok ] || kaas_fail "$1 transaction $2: $out"
done

# "topic/partition value" lines of the transactions named, in log order.
records() {
	local tp i tag
	for tp in "ta/0 0" "ta/1 1" "tb/0 2"; do
		set -- $tp
		for tag in $TAGS; do echo "$1 $tag-$2"; done
	done
}
committed=$(txn_read "$BROKER" read_committed ta tb)
[ "$committed" = "$(TAGS="c1 c2" records)" ] ||
	{ echo "$committed" >&2; kaas_fail "read_committed saw other records"; }
uncommitted=$(txn_read "$BROKER" read_uncommitted ta tb)
[ "$uncommitted" = "$(TAGS="c1 a1 c2" records)" ] ||
	{ echo "$uncommitted" >&2; kaas_fail "read_uncommitted did not see every record"; }

# The group's offset: the committed transactions' (42), visible once committed.
got=$("$OFFSETS_RAW" "$BROKER" fetch g1 ta 0) || kaas_fail "OffsetFetch failed"
[ "$got" = "42 0" ] || kaas_fail "group g1 ta/0: '$got', expected '42 0'"

# Fencing: the second producer's commit lands, the first one's fails.
out=$(txn_client "$BROKER" tx2 fence ta tb f1) || { tail -n 30 "$KAASD_LOG" >&2; kaas_fail "fence run failed: $out"; }
echo "$out" | grep -q '^fenced: ' || kaas_fail "the fenced producer was not told: $out"
committed=$(txn_read "$BROKER" read_committed tb | grep ' f1-' || true)
[ "$committed" = "tb/0 f1-fencer" ] || { echo "$committed" >&2; kaas_fail "read_committed after fencing"; }

grep -q 'AddressSanitizer\|runtime error' "$KAASD_LOG" && kaas_fail "sanitizer report in the log"
kaasd_stop
echo PASS
