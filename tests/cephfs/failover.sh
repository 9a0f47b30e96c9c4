#!/usr/bin/env bash
# Three brokers on three libcephfs clients (cephfs://, one client name
# each) of one lab cluster, an idempotent producer (acks=all, five in
# flight): kill -9 the partition's leader, twice, and a survivor serves
# the partition each time; every acknowledged message is read back exactly
# once, in order.  The failover time (kill to the first acknowledgement by
# another broker) is printed for both ways a dead client's capabilities
# are released: round 1 waits for the MDS to time its session out
# (session_timeout, CEPHFS_SESSION_TIMEOUT, default 30: Ceph's minimum),
# round 2 evicts the dead broker's client at once (what an orchestrator
# that saw the pod die can do).  Longer than CI's budget for the family
# (a lab of its own): run on demand,
#   make -C build check TESTS=tests/cephfs/failover.sh
# kaas-test-timeout: 600
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
LAB="$KAAS_TOP_SRCDIR/scripts/ceph-lab"
L="$KAAS_SCRATCH/lab"
st=${CEPHFS_SESSION_TIMEOUT:-30}
export KAAS_CEPH_LAB_STORE=${KAAS_CEPH_LAB_STORE:-file}
kaas_on_exit "'$LAB' stop '$L'"
out=$("$LAB" start "$L" --session-timeout "$st" 2>&1); rc=$?
echo "$out"
[ $rc -eq 77 ] && kaas_skip "the Ceph lab cannot run here: $(tail -1 <<<"$out")"
[ $rc -eq 0 ] || kaas_fail "the Ceph lab did not start (exit $rc): $(tail -1 <<<"$out")"
"$LAB" mount "$L" "$KAAS_SCRATCH/mnt" kaas-fuse || kaas_fail "cannot mount"
mkdir "$KAAS_SCRATCH/mnt/kaas" || kaas_fail "cannot make the data directory"

# CEPHFS_KEEP_LOGS=DIR: the brokers' and producer's logs are copied there at exit
[ -n "${CEPHFS_KEEP_LOGS:-}" ] && kaas_on_exit "mkdir -p '$CEPHFS_KEEP_LOGS' && cp '$KAAS_SCRATCH'/*.log '$KAAS_SCRATCH'/acks.txt '$CEPHFS_KEEP_LOGS'/"
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
declare -A URL
for id in 0 1 2; do URL[$id]=$("$LAB" url "$L" "kaas-broker$id" kaas) || kaas_fail "no URL"; done
mb_data() { echo "${URL[$1]}"; } # broker ID on client.kaas-brokerID
S=$KAAS_SCRATCH
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" cf 1 || kaas_fail "create topic"
mb_wait_led 60 cf 1 0 0 1 2 || kaas_fail "cf/0 has no leader"

ACKS=$S/acks.txt
: >"$ACKS"
"$MBCLIENT" produce --idempotent "$(mb_bootstrap)" cf 1000000 "$ACKS" 2000 2>"$S/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"

for round in 1 2; do
	mb_wait_acks 120 "$ACKS" $(( $(mb_acked "$ACKS") + 1000 )) ||
		kaas_fail "round $round: producer stalled at $(mb_acked "$ACKS") acknowledgements"
	before=$(mb_acked "$ACKS")
	leader=$(mb_leader cf 0)
	if [ $round = 2 ]; then
		# evict the dead broker's client as soon as it is dead
		( while kill -0 "${MB_PID[$leader]}" 2>/dev/null; do sleep 0.05; done
		  "$LAB" evict "$L" "kaas-broker$leader" ) >"$S/evict.log" 2>&1 &
	fi
	mb_kill_leader cf "$ACKS"
	how="session_timeout $st s"
	[ $round = 2 ] && how="evicted at once"
	echo "round $round: killed leader $MB_KILLED after $before acks; failover $MB_FAILOVER_MS ms ($how)"
	echo "failover $round $MB_FAILOVER_MS" >>"$S/failovers"
	[ $round = 2 ] || mb_start "$MB_KILLED"
done

mb_wait_acks 120 "$ACKS" $(( $(mb_acked "$ACKS") + 500 )) || kaas_fail "producer stalled after the failover"
kill -TERM $PROD
wait $PROD || { tail -n 20 "$S/producer.log" >&2; kaas_fail "producer: not every message acknowledged"; }
timeout 120 kcat -b "$(mb_bootstrap)" -C -t cf -p 0 -o beginning -e -f '%s\n' \
	>"$S/consumed.txt" 2>/dev/null || kaas_fail "consume"
check_acked "$ACKS" "$S/consumed.txt" exactly-once || kaas_fail "acknowledged messages lost, duplicated or reordered"
echo "failover on cephfs:// (ms): $(awk '{ printf("%s%s", (NR > 1 ? ", " : ""), $3) }' "$S/failovers")"
echo PASS
