#!/bin/bash
# Three brokers on one directory; a transaction over 3 partitions of 2
# topics is committed, and its coordinator is killed (-9) after its first
# marker is durable and before the last (every broker sleeps at the step
# txn.complete.after-marker the first time it gets there; the test kills
# the one that printed it).  Another broker takes the coordinator slot over,
# loads PrepareCommit from the volume and completes it: the client's commit
# succeeds, read_committed sees the three records, and every partition holds
# exactly one marker (a plain record produced afterwards lands at offset 2:
# the record, one marker, then it).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
S=$KAAS_SCRATCH
export KAAS_PAUSE_AT=txn.complete.after-marker:1200
for id in 0 1 2; do mb_start $id --num-partitions 2; done
"$MBCLIENT" create "$(mb_bootstrap)" ka 2 || kaas_fail "create topic ka"
"$MBCLIENT" create "$(mb_bootstrap)" kb 2 || kaas_fail "create topic kb"
mb_wait_led 20 ka 2 0 0 1 2 && mb_wait_led 20 kb 2 0 0 1 2 || kaas_fail "topics without leaders"

txn_client "$(mb_bootstrap)" ktx commit ka kb k1 >"$S/client.out" 2>"$S/client.err" &
CLIENT=$!
kaas_on_exit "kill -9 $CLIENT"
victim=
for i in $(seq 1 200); do
	for id in 0 1 2; do
		grep -q 'kaas-step: pause at txn.complete.after-marker' "$S/kaasd.$id.1.log" && victim=$id
	done
	[ -n "$victim" ] && break
	sleep 0.05
done
[ -n "$victim" ] || { cat "$S/client.err" >&2; kaas_fail "no coordinator reached txn.complete.after-marker"; }
mb_kill "$victim"
echo "killed coordinator broker $victim after its first marker"
wait "$CLIENT" || { cat "$S/client.err" >&2; tail -n 20 "$S"/kaasd.*.log >&2; kaas_fail "the commit did not complete after the coordinator died"; }
[ "$(cat "$S/client.out")" = ok ] || kaas_fail "client: $(cat "$S/client.out")"
# EndTxn answers once the decision is durable; the new coordinator
# completes it (its own first marker sleeps at the step too).
kaas_wait_for 20 bash -c "grep -q 'ktx: transaction 1 CompleteCommit' '$S'/kaasd.*.log" ||
	{ tail -n 20 "$S"/kaasd.*.log >&2; kaas_fail "no broker logged the completion"; }

committed=$(txn_read "$(mb_bootstrap)" read_committed ka kb)
expect="ka/0 k1-0
ka/1 k1-1
kb/0 k1-2"
[ "$committed" = "$expect" ] || { echo "$committed" >&2; kaas_fail "read_committed after the failover"; }
# Exactly one marker per partition: the next record is at offset 2.
for tp in ka:0 ka:1 kb:0; do
	echo "after" | timeout 30 kcat -P -b "$(mb_bootstrap)" -t "${tp%:*}" -p "${tp#*:}" -X acks=all ||
		kaas_fail "produce to $tp"
	off=$(timeout 30 kcat -C -b "$(mb_bootstrap)" -t "${tp%:*}" -p "${tp#*:}" -o beginning -e -q \
		-f '%o %s\n' | awk '$2 == "after" { print $1 }')
	[ "$off" = 2 ] || kaas_fail "$tp: the record after the transaction is at offset '$off', not 2 (markers: not exactly one)"
done
echo PASS
