#!/bin/bash
# The chaos run's transactional client (chaos/chaos_txn.c) against one
# kaasd: every transaction it logs as aborted reached the coordinator as
# EndTxn(abort) (kaasd logs its PrepareAbort) with its records on the log
# (read_uncommitted reads them), so the chaos checker's "aborted record
# seen by read_committed" has something to catch; read_committed reads
# none of them, and chaos_txn check finds no violation.
# kaas-test-timeout: 300
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
CHAOS_TXN="$KAAS_TOP_BUILDDIR/chaos/chaos_txn"
[ -x "$CHAOS_TXN" ] || kaas_skip "no chaos/chaos_txn (built without librdkafka)"
kaas_scratch
S=$KAAS_SCRATCH
kaasd_start --num-partitions 3

# Transactions 20 ms apart until 3 aborted ones are logged (n % 3 == 2).
"$CHAOS_TXN" produce "$BROKER" ct 3 ctx "$S/txn-log.txt" 20000 2>"$S/producer.err" &
PROD=$!
kaas_on_exit "kill -9 $PROD"
aborts() { grep -c '^abort ' "$S/txn-log.txt" 2>/dev/null; }
three_aborts() { [ "$(aborts)" -ge 3 ]; }
kaas_wait_for 120 three_aborts || { cat "$S/producer.err" >&2; kaas_fail "3 aborted transactions were not logged in 120 s"; }
kill -TERM "$PROD"
wait "$PROD" || kaas_fail "chaos_txn produce exited with $?"
grep -q '^unknown ' "$S/txn-log.txt" && { cat "$S/producer.err" >&2; kaas_fail "a transaction of unknown outcome without faults"; }

# Each aborted transaction's EndTxn(abort): its PrepareAbort in kaasd's log.
na=$(aborts)
nd=$(grep -c 'transactional id ctx: .*: PrepareAbort' "$KAASD_LOG" || true)
[ "$nd" -ge "$na" ] || kaas_fail "$na transactions logged as aborted, $nd PrepareAbort decisions at the coordinator"

# Their records are on the log (read_uncommitted), and not read_committed.
txn_read "$BROKER" read_uncommitted ct >"$S/uncommitted.txt"
for tag in $(awk '$1 == "abort" { print $2 }' "$S/txn-log.txt"); do
	grep -q " $tag-0\$" "$S/uncommitted.txt" || kaas_fail "aborted transaction $tag: its records never reached the log"
done
timeout 30 kcat -b "$BROKER" -C -t ct -o beginning -e -q -X isolation.level=read_committed \
	-f '%t %p %o %s\n' >"$S/committed.txt" 2>/dev/null || kaas_fail "read_committed read failed"
"$CHAOS_TXN" check "$S/txn-log.txt" "$S/committed.txt" >"$S/check.json" ||
	kaas_fail "chaos_txn check: $(cat "$S/check.json")"
echo "$na aborted transactions, each decided at the coordinator; $(wc -l <"$S/committed.txt") committed records read"
kaasd_stop
echo PASS
