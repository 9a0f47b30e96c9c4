#!/bin/bash
# A transactional batch is verified with its transaction coordinator's
# record before it opens a transaction on a partition (KIP-890 part 1):
# a fenced producer's batch and one to a partition never added are refused,
# and no transaction hangs (tests/txn/produce_verify.py), on POSIX and on
# fault+; with --transaction-partition-verification-enable false the
# unverified batch is appended (Kafka's switch).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
kaas_scratch
kaasd_start
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/txn/produce_verify.py" "$BROKER" ||
	kaas_fail "transaction verification"
grep -q 'not verified with transactional id vtx' "$KAASD_LOG" ||
	kaas_fail "kaasd did not log the refused batches"
kaasd_stop
mkdir -p "$KAAS_SCRATCH/fvol"
kaasd_start --data "fault+$KAAS_SCRATCH/fvol?seed=1"
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/txn/produce_verify.py" "$BROKER" ||
	kaas_fail "transaction verification on fault+"
kaasd_stop
# Off: the batch to a partition never added is appended (error 0 where the
# check wants 48), as Kafka with the switch off.
rm -rf "$KAAS_SCRATCH/data"
kaasd_start --transaction-partition-verification-enable false
if timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/txn/produce_verify.py" "$BROKER" 2>"$KAAS_SCRATCH/off.err"; then
	kaas_fail "verification off, yet the unverified batches were refused"
fi
grep -q 'never added: error 0, want 48' "$KAAS_SCRATCH/off.err" ||
	kaas_fail "verification off: $(cat "$KAAS_SCRATCH/off.err")"
kaasd_stop
echo PASS
