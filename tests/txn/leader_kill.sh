#!/bin/bash
# Three brokers on one directory; a transaction whose coordinator does not
# lead every one of its partitions, so some markers go through request files
# (txn-markers/).  The first leader about to serve a marker request (every
# broker sleeps at txn.marker.before-append the first time) is killed (-9):
# the partition's next leader serves the request, the commit completes, and
# every partition holds exactly one marker.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
[ -x "$MB_OFFSETS_RAW" ] || kaas_fail "no offsets_raw at $MB_OFFSETS_RAW"
S=$KAAS_SCRATCH
export KAAS_PAUSE_AT=txn.marker.before-append:1200
for id in 0 1 2; do mb_start $id --num-partitions 2; done
"$MBCLIENT" create "$(mb_bootstrap)" la 2 || kaas_fail "create topic la"
"$MBCLIENT" create "$(mb_bootstrap)" lb 2 || kaas_fail "create topic lb"
mb_wait_led 20 la 2 0 0 1 2 && mb_wait_led 20 lb 2 0 0 1 2 || kaas_fail "topics without leaders"
leaders=" $(mb_leader la 0) $(mb_leader la 1) $(mb_leader lb 0) "
# A transactional id (same slots as groups) whose coordinator is not the
# leader of some partition of the transaction.
txn=
for i in $(seq 1 40); do
	c=$(mb_coordinator "ltx$i")
	[ -n "$c" ] && [ "$leaders" != " $c $c $c " ] && { txn=ltx$i; break; }
done
[ -n "$txn" ] || kaas_fail "no transactional id among ltx1..ltx40 has a remote partition"
echo "transactional id $txn coordinated by broker $c; leaders:$leaders"

txn_client "$(mb_bootstrap)" "$txn" commit la lb l1 >"$S/client.out" 2>"$S/client.err" &
CLIENT=$!
kaas_on_exit "kill -9 $CLIENT"
victim=
for i in $(seq 1 300); do
	for id in 0 1 2; do
		grep -q 'kaas-step: pause at txn.marker.before-append' "$S/kaasd.$id.1.log" && victim=$id
	done
	[ -n "$victim" ] && break
	sleep 0.05
done
[ -n "$victim" ] || { cat "$S/client.err" >&2; kaas_fail "no leader reached txn.marker.before-append"; }
mb_kill "$victim"
echo "killed broker $victim while it served a marker request"
wait "$CLIENT" || { cat "$S/client.err" >&2; kaas_fail "the commit failed"; }
kaas_wait_for 30 bash -c "grep -q '$txn: transaction 1 CompleteCommit' '$S'/kaasd.*.log" ||
	{ tail -n 20 "$S"/kaasd.*.log >&2; kaas_fail "the transaction was not completed"; }
committed=$(txn_read "$(mb_bootstrap)" read_committed la lb)
expect="la/0 l1-0
la/1 l1-1
lb/0 l1-2"
[ "$committed" = "$expect" ] || { echo "$committed" >&2; kaas_fail "read_committed after the leader died"; }
for tp in la:0 la:1 lb:0; do
	echo "after" | timeout 30 kcat -P -b "$(mb_bootstrap)" -t "${tp%:*}" -p "${tp#*:}" -X acks=all ||
		kaas_fail "produce to $tp"
	off=$(timeout 30 kcat -C -b "$(mb_bootstrap)" -t "${tp%:*}" -p "${tp#*:}" -o beginning -e -q \
		-f '%o %s\n' | awk '$2 == "after" { print $1 }')
	[ "$off" = 2 ] || kaas_fail "$tp: the record after the transaction is at offset '$off', not 2"
done
[ -z "$(ls "$MB_DATA/__cluster/txn-markers" 2>/dev/null)" ] || kaas_fail "marker requests left behind: $(ls "$MB_DATA/__cluster/txn-markers")"
echo PASS
