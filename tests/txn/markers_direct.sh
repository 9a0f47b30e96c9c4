#!/bin/bash
# A transaction whose coordinator leads every partition in it writes its
# markers by direct calls, and its completion then touches no file in
# txn-markers/: the coordinator's clean-up unlinks only the request and
# reply files a listing shows (an unlink of a missing file is a server
# round trip on NFS; the old code sent two per partition).  kaasd's volume is
# the in-process fault model, whose rule "delay 0 ms on unlink of
# txn-markers/*" logs one event per unlink there.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
mkdir -p "$S/vol/__cluster/txn-markers"
echo '{"rules":[{"op":"unlink","path":"txn-markers/*","fault":"delay","delay_ms":0}]}' >"$S/rules.json"
kaasd_start --num-partitions 2 --data "fault+$S/vol?seed=1&config=$S/rules.json&log=$S/events.jsonl"
for tag in d1 d2; do
	out=$(txn_client "$BROKER" dtx commit da db "$tag") || kaas_fail "commit $tag: $out"
	[ "$out" = ok ] || kaas_fail "commit $tag: $out"
done
kaas_wait_for 20 grep -q 'dtx: transaction 2 CompleteCommit' "$KAASD_LOG" ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "transaction 2 never completed"; }
n=$(grep -c '"op":"unlink","path":"txn-markers/' "$S/events.jsonl" 2>/dev/null || true)
[ "${n:-0}" = 0 ] || kaas_fail "$n unlinks in txn-markers/ for two transactions with direct markers"
committed=$(txn_read "$BROKER" read_committed da db | wc -l)
[ "$committed" = 6 ] || kaas_fail "read_committed read $committed records, not 6"
kaasd_stop
echo PASS
