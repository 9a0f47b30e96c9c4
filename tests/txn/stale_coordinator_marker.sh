#!/bin/bash
# Issue 33 defect 1, the coordinator's side: a coordinator whose epoch was
# superseded writes no marker directly.  One broker coordinates the
# transactional id and leads every partition in its transaction, so EndTxn
# appends the markers itself.  kaasd stops (SIGSTOP) at its first direct
# append (step txn.marker.before-direct-append); the test then claims the
# next coordinator epoch of the id in txns/<enc>/fence/, as a broker taking
# the coordinator slot over does first, and resumes it.  The coordinator
# must find itself superseded and append nothing: read_committed sees none
# of the transaction's records (its new coordinator, here none, would
# finish it).  (Before: the stale coordinator appended its markers from the
# state in memory; a later transaction of the same producer epoch open on
# the partition would have been closed by them: test_marker_coord.)
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
export KAAS_PAUSE_AT=txn.marker.before-direct-append
run_case() {
	local what=$1 DATA=$2 VOL=$3 tx=stx-$1
	echo "== $what"
	kaasd_start --num-partitions 2 --data "$DATA"
	txn_client "$BROKER" "$tx" commit sa sb c1 >"$S/$what.client" 2>&1 &
	local cpid=$!
	kaas_wait_for 30 grep -q 'pause at txn.marker.before-direct-append' "$KAASD_LOG" ||
		{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "no direct marker append"; }
	# kaasd is stopped: claim the id's next coordinator epoch.
	local fence
	fence=$(ls -d "$VOL"/__cluster/txns/*/fence)
	[ -d "$fence" ] || kaas_fail "no fence directory for $tx"
	local top next
	top=$(ls "$fence" | sed -n 's/^epoch-0*\([0-9][0-9]*\)$/\1/p' | sort -n | tail -n1)
	[ -n "$top" ] || kaas_fail "no epoch claimed in $fence"
	next=$(printf 'epoch-%020d' $((top + 1)))
	echo "txn coordinator: host test" >"$fence/$next"
	kill -CONT "$KAASD_PID"
	kaas_wait_for 20 grep -q "transactional id $tx: transaction 1 not driven further" "$KAASD_LOG"
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	committed=$(txn_read "$BROKER" read_committed sa sb | wc -l)
	[ "$committed" = 0 ] || kaas_fail "read_committed saw $committed records: a superseded coordinator wrote markers"
	grep -q "transactional id $tx: transaction 1 not driven further" "$KAASD_LOG" ||
		{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "the superseded coordinator did not stop"; }
	grep -q 'AddressSanitizer\|runtime error' "$KAASD_LOG" && kaas_fail "sanitizer report in the log"
	kaasd_stop
}
run_case posix "$S/posix-vol" "$S/posix-vol"
mkdir -p "$S/fault-vol"
run_case fault+ "fault+$S/fault-vol?seed=1" "$S/fault-vol"
echo PASS
