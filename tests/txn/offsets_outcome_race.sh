#!/bin/bash
# Issue 33 defect 2: a group coordinator settling a transaction's pending
# offsets while that transaction commits must not take it for aborted.
# The coordinator pauses right after PrepareCommit is durable
# (txn.end.after-prepare, 2 s); meanwhile an OffsetFetch makes the group
# settle, and the settle pauses between its two reads, the transaction
# state and the outcome claim (group.txn.outcome-between-checks, 5 s).
# The commit (claim, markers, CompleteCommit) lands inside that pause.
# The group's offset must then be the transaction's (42), never dropped.
# (The old order, claim first and state second, read "no claim" before the
# commit and "CompleteCommit" after it: dropped as aborted.)
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
OFFSETS_RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"
# Every time (a settle while the transaction is still Ongoing reaches the
# group's step first).
export KAAS_PAUSE_AT=txn.end.after-prepare:2000,group.txn.outcome-between-checks:5000
export KAAS_PAUSE_REPEAT=1
# On a directory and on the fault model (no rules: the contract's floor).
run_case() {
	local what=$1 DATA=$2
	echo "== $what"
	kaasd_start --num-partitions 2 --data "$DATA"
	txn_client "$BROKER" otx commit ta tb c1 og >"$S/$what.client" 2>&1 &
	CPID=$!
	kaas_wait_for 30 grep -q 'pause at txn.end.after-prepare' "$KAASD_LOG" ||
		{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "the coordinator never reached PrepareCommit"; }
	# A group operation while the offsets are pending: the settle runs now.
	"$OFFSETS_RAW" "$BROKER" fetch og ta 0 >"$S/$what.fetch" || kaas_fail "OffsetFetch failed"
	wait $CPID || { cat "$S/$what.client" >&2; kaas_fail "the transaction failed"; }
	[ "$(cat "$S/$what.client")" = ok ] || kaas_fail "client: $(cat "$S/$what.client")"
	kaas_wait_for 20 grep -q 'otx: transaction 1 CompleteCommit' "$KAASD_LOG" ||
		{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "transaction 1 never completed"; }
	got=
	for _ in $(seq 1 100); do
		got=$("$OFFSETS_RAW" "$BROKER" fetch og ta 0) || kaas_fail "OffsetFetch failed"
		[ "$got" = "42 0" ] && break
		sleep 0.1
	done
	grep 'group og: transactional offsets' "$KAASD_LOG" >&2 || true
	grep -q 'group og: transactional offsets.*dropped (aborted)' "$KAASD_LOG" &&
		kaas_fail "the committed transaction's offsets were dropped as aborted"
	[ "$got" = "42 0" ] || kaas_fail "group og ta/0: '$got', expected '42 0' (the committed transaction's)"
	grep -q 'AddressSanitizer\|runtime error' "$KAASD_LOG" && kaas_fail "sanitizer report in the log"
	kaasd_stop
}
run_case posix "$S/data"
mkdir -p "$S/vol"
run_case fault+ "fault+$S/vol?seed=1"
echo PASS
