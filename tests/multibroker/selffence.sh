#!/bin/bash
# Self-fencing: each broker on its own faultfs host view; the leader of a
# partition loses its cluster directory (EIO on every broker document
# operation from its host).  Within half the liveness timeout it refuses
# produce (NOT_LEADER_OR_FOLLOWER), a survivor takes the partition over,
# and once the faults stop it rejoins.  The log holds exactly the
# acknowledged messages.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
ffs_start mb 3 --seed 11
MB_HOSTS_DIR=$M
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" sf 1 || kaas_fail "create topic"
mb_wait_led 20 sf 1 0 0 1 2 || kaas_fail "sf/0 has no leader"
leader=$(mb_leader sf 0)
[ -n "$leader" ] && [ "$leader" -ge 0 ] || kaas_fail "sf/0: no leader in any broker's metadata"
seq 1 100 | sed 's/^/before-/' | timeout 60 kcat -b "$(mb_bootstrap)" -P -t sf -p 0 -X acks=all ||
	kaas_fail "produce before the fault"

ffs_ctl set "{\"op\":\"*\",\"path\":\"__cluster/brokers/*\",\"host\":$leader,\"prob\":1,\"times\":-1,\"fault\":\"EIO\"}" >/dev/null ||
	kaas_fail "faultfs rule"
sleep 0.8 # more than half the liveness timeout ($MB_LIVENESS_MS ms)
out=$(timeout 30 "$RAW" "127.0.0.1:${MB_PORT[$leader]}" good-batch sf 2>&1)
echo "broker $leader without its heartbeat answered: $out"
echo "$out" | grep -q "error 6" || kaas_fail "a broker that cannot renew its heartbeat still accepted produce"
others=()
for id in 0 1 2; do [ "$id" != "$leader" ] && others+=("$id"); done
ok=0
for i in $(seq 1 100); do
	l=$(mb_leader sf 0 "${others[0]}")
	[ -n "$l" ] && [ "$l" != "$leader" ] && [ "$l" != -1 ] && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] || kaas_fail "no survivor took sf/0 over"
seq 1 100 | sed 's/^/after-/' | timeout 60 kcat -b "$(mb_bootstrap "${others[@]}")" -P -t sf -p 0 -X acks=all ||
	{ for id in "${others[@]}"; do echo "broker $id: $(timeout 20 "$RAW" "127.0.0.1:${MB_PORT[$id]}" good-batch sf 2>&1)"; mb_metadata "$id" -t sf; done >&2
	  for f in "$KAAS_SCRATCH"/kaasd.*.log; do echo "== $f"; grep -v "INFO.*assignment version" "$f" | tail -n 12; done >&2
	  [ -n "${MB_HOLD:-}" ] && sleep "$MB_HOLD"; kaas_fail "produce to the new leader"; }
ffs_ctl clear >/dev/null || kaas_fail "faultfs clear"
kaas_wait_for 20 grep -q "heartbeat renewed again" "$KAAS_SCRATCH/kaasd.$leader.1.log" ||
	kaas_fail "broker $leader did not rejoin after the faults stopped"
timeout 60 kcat -b "$(mb_bootstrap)" -C -t sf -p 0 -o beginning -e -f '%s\n' \
	>"$KAAS_SCRATCH/consumed.txt" 2>/dev/null || kaas_fail "consume"
{ seq 1 100 | sed 's/^/before-/'; seq 1 100 | sed 's/^/after-/'; } >"$KAAS_SCRATCH/want.txt"
cmp -s "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/consumed.txt" ||
	{ diff "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/consumed.txt" | head >&2; kaas_fail "the log is not exactly the acknowledged messages"; }
echo PASS
