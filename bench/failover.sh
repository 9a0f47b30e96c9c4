#!/bin/bash
# Failover benchmark (prints numbers; no pass/fail on time): three brokers on
# one directory, a partition pre-filled with PREFILL_MB MiB, a producer
# running; KILLS times: kill -9 the partition's leader, measure the time to
# the first acknowledgement by another broker, restart the killed broker.
# Prints every figure, the median and the maximum.
#
#   cd build && KILLS=20 PREFILL_MB=20 ../bench/failover.sh
#   (MB_LIVENESS_MS / MB_HEARTBEAT_MS set the cluster timing; defaults 1000/100)
: "${KAAS_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
: "${KILLS:=20}"
: "${PREFILL_MB:=20}"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" fb 1 || kaas_fail "create topic"
mb_wait_led 20 fb 1 0 0 1 2 || kaas_fail "fb/0 has no leader"
if [ "$PREFILL_MB" -gt 0 ]; then
	head -c 1000 /dev/zero | tr '\0' x >"$KAAS_SCRATCH/line"
	for i in $(seq 1 1024); do cat "$KAAS_SCRATCH/line"; echo; done >"$KAAS_SCRATCH/mib"
	for i in $(seq 1 "$PREFILL_MB"); do cat "$KAAS_SCRATCH/mib"; done |
		timeout 600 kcat -b "$(mb_bootstrap)" -P -t fb -p 0 -X acks=all ||
		kaas_fail "pre-fill"
	rm -f "$KAAS_SCRATCH/mib"
fi
echo "partition fb/0 pre-filled with $PREFILL_MB MiB; liveness timeout $MB_LIVENESS_MS ms, heartbeat $MB_HEARTBEAT_MS ms"
ACKS="$KAAS_SCRATCH/acks.txt"
: >"$ACKS"
"$MBCLIENT" produce "$(mb_bootstrap)" fb 100000000 "$ACKS" 1000 2>"$KAAS_SCRATCH/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"
figures=()
for k in $(seq 1 "$KILLS"); do
	mb_wait_acks 60 "$ACKS" $(( $(mb_acked "$ACKS") + 500 )) || kaas_fail "kill $k: producer stalled"
	mb_kill_leader fb "$ACKS"
	leader=$MB_KILLED
	figures+=("$MB_FAILOVER_MS")
	echo "kill $k: broker $leader, failover $MB_FAILOVER_MS ms"
	mb_start "$leader"
done
kill -TERM $PROD
wait $PROD
sorted=($(printf '%s\n' "${figures[@]}" | sort -n))
n=${#sorted[@]}
echo "failover over $n kills (PREFILL_MB=$PREFILL_MB): median ${sorted[$((n / 2))]} ms, max ${sorted[$((n - 1))]} ms, min ${sorted[0]} ms"
