#!/bin/bash
# A transactional producer killed (-9) in the middle of a transaction: its
# records hold the last stable offset until the coordinator aborts the
# transaction after transaction.timeout.ms (1500 ms here); then a record
# produced after them becomes visible to read_committed, and theirs never.
# transaction.max.timeout.ms is enforced: a longer timeout is refused.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
echo "transaction.max.timeout.ms=60000" >"$S/kaasd.conf"
kaasd_start --num-partitions 2 --config "$S/kaasd.conf"

KAAS_TXN_TIMEOUT_MS=120000 txn_client "$BROKER" ptx0 commit pa pb x >"$S/over.out" 2>&1 &&
	kaas_fail "a timeout above transaction.max.timeout.ms was accepted"
grep -qi 'timeout' "$S/over.out" || kaas_fail "refusal does not name the timeout: $(cat "$S/over.out")"

KAAS_TXN_TIMEOUT_MS=1500 "$TXN_CLIENT" "$BROKER" ptx hang pa pb h1 >"$S/hang.out" 2>"$S/hang.err" &
HANG=$!
kaas_on_exit "kill -9 $HANG"
kaas_wait_for 30 grep -q '^open' "$S/hang.out" || { cat "$S/hang.err" >&2; kaas_fail "the transaction did not open"; }
kill -9 "$HANG"
t0=$(date +%s%3N)
echo "after" | timeout 30 kcat -P -b "$BROKER" -t pa -p 0 || kaas_fail "produce after"
# Stuck behind the open transaction first, visible once it is aborted.
seen=
for i in $(seq 1 150); do
	seen=$(txn_read "$BROKER" read_committed pa)
	case $seen in *after*) break ;; esac
	sleep 0.1
done
t1=$(date +%s%3N)
[ "$seen" = "pa/0 after" ] || { echo "$seen" >&2; tail -n 20 "$KAASD_LOG" >&2; kaas_fail "read_committed after the timeout"; }
grep -q "ptx: transaction 1 older than its timeout" "$KAASD_LOG" || { grep -i ptx "$KAASD_LOG" >&2; kaas_fail "no timeout abort logged"; }
echo "aborted and visible $((t1 - t0)) ms after the kill"
kaasd_stop
echo PASS
