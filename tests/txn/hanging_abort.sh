#!/bin/bash
# A hanging transaction and its way out (issue 33, KIP-664): a transactional
# batch written after its transaction's commit marker holds the last stable
# offset, and is found and aborted as kafka-transactions.sh find-hanging and
# abort do (DescribeProducers, ListTransactions, DescribeTransactions, then
# WriteTxnMarkers to the partition's leader): tests/txn/hanging_abort.py,
# on POSIX and on fault+.
# Then another found and aborted by Apache Kafka's own TransactionsCommand
# (kafka-tools), when its jars are there (see below; skipped otherwise).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
kaas_scratch
# A hanging transaction is what the produce path's verification with the
# coordinator (KIP-890 part 1) prevents: made here with it off, as Kafka's
# transaction.partition.verification.enable=false.
KAAS_NOVERIFY=(--transaction-partition-verification-enable false)
kaasd_start "${KAAS_NOVERIFY[@]}"
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/txn/hanging_abort.py" "$BROKER" ||
	kaas_fail "hanging transaction (kaasd log: $(grep -c . "$KAASD_LOG") lines)"
grep -q 'WriteTxnMarkers: abort marker for producer' "$KAASD_LOG" ||
	kaas_fail "kaasd did not log the admin's abort marker"
# The same on fault+ (the in-process model of the NFS floor).
kaasd_stop
mkdir -p "$KAAS_SCRATCH/fvol"
kaasd_start --data "fault+$KAAS_SCRATCH/fvol?seed=1" "${KAAS_NOVERIFY[@]}"
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/txn/hanging_abort.py" "$BROKER" ||
	kaas_fail "hanging transaction on fault+"

# Apache Kafka's TransactionsCommand (kafka-transactions.sh) against kaasd:
# the jars of org.apache.kafka:kafka-tools (and its run-time dependencies)
# in $KAAS_KAFKA_TOOLS_LIBS, default ~/.cache/kaas/kafka-tools/4.1.2/libs
# (Maven: dependency:copy-dependencies of kafka-tools 4.1.2); skipped
# without them or java.
tools=${KAAS_KAFKA_TOOLS_LIBS:-$HOME/.cache/kaas/kafka-tools/4.1.2/libs}
if ! command -v java >/dev/null || ! ls "$tools"/kafka-tools-*.jar >/dev/null 2>&1; then
	echo "note: no kafka-tools jars in $tools (or no java): TransactionsCommand not run"
	kaasd_stop
	echo PASS
	exit 0
fi
tc() { # TransactionsCommand ARGS: its output (not SLF4J's notes), its status
	timeout 120 java -cp "$tools/*" org.apache.kafka.tools.TransactionsCommand \
		--bootstrap-server "$BROKER" "$@" >"$KAAS_SCRATCH/tc.out" 2>&1
	local rc=$?
	grep -v '^SLF4J' "$KAAS_SCRATCH/tc.out"
	return $rc
}
timeout 60 python3 "$KAAS_TOP_SRCDIR/tests/txn/hanging_abort.py" "$BROKER" make hang2 ||
	kaas_fail "a second hanging transaction"
tc find-hanging --broker-id 0 --max-transaction-timeout 0 >"$KAAS_SCRATCH/hanging" ||
	kaas_fail "find-hanging: $(cat "$KAAS_SCRATCH/hanging")"
start=$(awk '$1 == "hang2" && $2 == 0 { print $6 }' "$KAAS_SCRATCH/hanging")
[ -n "$start" ] || kaas_fail "find-hanging did not find hang2/0: $(cat "$KAAS_SCRATCH/hanging")"
tc abort --topic hang2 --partition 0 --start-offset "$start" >"$KAAS_SCRATCH/abort" ||
	kaas_fail "abort: $(cat "$KAAS_SCRATCH/abort")"
tc find-hanging --broker-id 0 --max-transaction-timeout 0 >"$KAAS_SCRATCH/hanging" ||
	kaas_fail "find-hanging after the abort: $(cat "$KAAS_SCRATCH/hanging")"
! grep -q '^hang' "$KAAS_SCRATCH/hanging" ||
	kaas_fail "still hanging after the abort: $(cat "$KAAS_SCRATCH/hanging")"
timeout 60 python3 "$KAAS_TOP_SRCDIR/tests/txn/hanging_abort.py" "$BROKER" check hang2 ||
	kaas_fail "hang2 after TransactionsCommand abort"
echo "TransactionsCommand find-hanging found hang2/0 at $start, abort closed it"
kaasd_stop
echo PASS
