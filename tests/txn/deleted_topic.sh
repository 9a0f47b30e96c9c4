#!/bin/bash
# Issue 33 defect 5: a transaction over a partition of a topic deleted
# before its markers were written completes; the transactional id is not
# stuck.  A producer opens a transaction on dd/0, dd/1 and de/0 and dies;
# dd is deleted; a new producer with the same transactional id initialises
# (its InitProducerId aborts the open transaction) and commits one of its
# own.  The abort's marker for dd has no partition to land on: done, not
# pending.  (Before: the marker request for dd was never served, the state
# stayed PrepareAbort and InitProducerId answered CONCURRENT_TRANSACTIONS
# until the client gave up.)
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
MBCLIENT="$KAAS_TOP_BUILDDIR/tests/multibroker/mbclient"
[ -x "$MBCLIENT" ] || kaas_skip "no mbclient (built without librdkafka)"
run_case() {
	local what=$1 DATA=$2 tx=dtx-$1
	echo "== $what"
	kaasd_start --num-partitions 2 --data "$DATA"
	txn_client "$BROKER" "$tx" hang dd de h1 >"$S/$what.hang" 2>&1 &
	local hpid=$!
	kaas_wait_for 30 grep -q '^open' "$S/$what.hang" ||
		{ cat "$S/$what.hang" >&2; kaas_fail "the first producer never opened its transaction"; }
	kill -9 $hpid
	wait $hpid 2>/dev/null
	"$MBCLIENT" delete "$BROKER" dd || kaas_fail "DeleteTopics dd failed"
	out=$(KAAS_TXN_TIMEOUT_MS=60000 txn_client "$BROKER" "$tx" commit de df c1 2>&1) ||
		{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "the next producer of $tx: $out"; }
	[ "$out" = ok ] || kaas_fail "the next producer of $tx: $out"
	kaas_wait_for 20 grep -q "$tx: transaction 2 CompleteCommit" "$KAASD_LOG" ||
		{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "transaction 2 never completed"; }
	committed=$(txn_read "$BROKER" read_committed de df | awk '{print $2}' | sort | tr '\n' ' ')
	[ "$committed" = "c1-0 c1-1 c1-2 " ] || kaas_fail "read_committed saw '$committed'"
	ls "$S/$what-vol/__cluster/txn-markers" 2>/dev/null | grep -q '^req-' &&
		kaas_fail "a marker request was left behind"
	grep -q 'AddressSanitizer\|runtime error' "$KAASD_LOG" && kaas_fail "sanitizer report in the log"
	kaasd_stop
}
run_case posix "$S/posix-vol"
mkdir -p "$S/fault+-vol"
run_case fault+ "fault+$S/fault+-vol?seed=1"
echo PASS
