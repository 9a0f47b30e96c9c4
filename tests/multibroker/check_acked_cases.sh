#!/bin/bash
# check_acked_offsets on fixed cases.  The first is the pattern every
# "reordered" failure of failover_faultfs.sh had (four kept runs, 4 to 64
# records): the broker acknowledged 12338-12339 at offsets 12348-12349 and
# then 12334-12337 at 12350-12353 -- librdkafka's non-idempotent producer
# had re-sent a batch answered with a retriable error after the batch
# queued behind it, and every acknowledged offset held its value.  The
# old check (values in sequence order) failed it; the broker's guarantee
# holds.  The other cases are broker faults, which must fail.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
S=$KAAS_SCRATCH
# acks "SEQ OFFSET MS BROKER"; consumed "OFFSET VALUE"
printf '%s\n' "1 0 0 0" "2 1 0 0" "5 2 0 0" "6 3 0 0" "3 4 0 0" "4 5 0 0" "7 6 0 0" >"$S/acks"
printf '%s\n' "0 1" "1 2" "2 5" "3 6" "4 3" "5 4" "6 7" >"$S/late"
out=$(check_acked_offsets "$S/acks" "$S/late") || kaas_fail "sent late by the producer: failed: $out"
grep -q "sent late by the producer 2" <<<"$out" || kaas_fail "sent late not counted: $out"
cut -d' ' -f2 "$S/late" >"$S/late.values"
check_acked "$S/acks" "$S/late.values" >/dev/null 2>&1 && kaas_fail "the sequence-order check passed a producer reorder"
echo "ok: producer reorder: $out"
# a duplicate (an unacknowledged first copy, then the acknowledged retry)
printf '%s\n' "0 1" "1 2" "2 5" "3 5" "4 6" "5 3" "6 4" "7 7" >"$S/dup"
sed 's/^6 3 /6 4 /; s/^3 4 /3 5 /; s/^4 5 /4 6 /; s/^7 6 /7 7 /' "$S/acks" |
	awk '$1 == 5 { $2 = 3 } { print }' >"$S/acks.dup"
check_acked_offsets "$S/acks.dup" "$S/dup" >/dev/null || kaas_fail "a duplicate failed the check"
echo "ok: duplicate"
# broker faults: an acknowledged offset holding another value, one missing,
# offsets served out of order
fail_case() { # NAME CONSUMED-LINES...
	local name=$1
	shift
	printf '%s\n' "$@" >"$S/bad"
	check_acked_offsets "$S/acks" "$S/bad" >/dev/null 2>&1 && kaas_fail "$name: passed"
	echo "ok: $name fails"
}
fail_case moved "0 1" "1 2" "2 6" "3 5" "4 3" "5 4" "6 7"
fail_case lost "0 1" "1 2" "2 5" "4 3" "5 4" "6 7"
fail_case "offset order" "0 1" "1 2" "3 6" "2 5" "4 3" "5 4" "6 7"
echo PASS
