# tests/multibroker/mb-lib.sh — several kaasd brokers on one shared
# directory (sourced after tests/lib.sh).
#
#   mb_start ID [args...]  start broker ID (data $MB_DATA, ephemeral port,
#                          short heartbeat, group.initial.rebalance.delay.ms
#                          $MB_GROUP_DELAY_MS, default 0); sets MB_PID[ID], MB_PORT[ID]
#   mb_kill ID [SIG]       signal broker ID (default KILL; waits if KILL)
#   mb_bootstrap [ID...]   "host:port,..." of the given (default: running) brokers
#   mb_leader TOPIC PART [ID]  leader id of TOPIC/PART in the metadata of
#                          broker ID (default: the first running broker that
#                          names one); -1 or empty if none
#   mb_controller [ID]     controller id in the metadata of broker ID
#   mb_now_ms              wall clock in ms
#   mb_coordinator GROUP   id of the broker coordinating GROUP (the one whose
#                          OffsetFetch answers without NOT_COORDINATOR); empty
#                          if none does
#   mb_acked ACKS          acknowledgements in an mbclient ack file
#   mb_wait_acks SECS ACKS N   wait until ACKS holds N acknowledgements
#   mb_kill_leader TOPIC ACKS  kill -9 the leader of TOPIC/0 under a running
#                          `mbclient produce` writing ACKS; waits for the first
#                          acknowledgement by another broker and sets
#                          MB_KILLED (the id) and MB_FAILOVER_MS (kill to that
#                          acknowledgement)
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
MBCLIENT="$KAAS_TOP_BUILDDIR/tests/multibroker/mbclient"
MB_OFFSETS_RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"
: "${MB_HEARTBEAT_MS:=100}"
: "${MB_LIVENESS_MS:=1000}"
MB_DATA="$KAAS_SCRATCH/data"
# MB_HOSTS_DIR (a faultfs mount): broker ID uses $MB_HOSTS_DIR/hostID as its
# data directory, so each broker is its own NFS-like client of one volume.
mb_data() { if [ -n "${MB_HOSTS_DIR:-}" ]; then echo "$MB_HOSTS_DIR/host$1"; else echo "$MB_DATA"; fi; }
declare -A MB_PID MB_PORT MB_RUNS

mb_start() {
	local id=$1
	shift
	MB_RUNS[$id]=$(( ${MB_RUNS[$id]:-0} + 1 ))
	local log="$KAAS_SCRATCH/kaasd.$id.${MB_RUNS[$id]}.log"
	: >"$log"
	"$KAASD" --data "$(mb_data "$id")" --broker-id "$id" --listen "127.0.0.1:${MB_PORT[$id]:-0}" \
		--heartbeat-ms "$MB_HEARTBEAT_MS" --liveness-timeout-ms "$MB_LIVENESS_MS" \
		--log-level "${KAASD_LEVEL:-info}" \
		--group-initial-rebalance-delay-ms "${MB_GROUP_DELAY_MS:-0}" "$@" 2>"$log" &
	MB_PID[$id]=$!
	kaas_on_exit "kill -9 ${MB_PID[$id]}"
	local i port=
	for i in $(seq 1 100); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log" | head -n1)
		[ -n "$port" ] && break
		kill -0 "${MB_PID[$id]}" 2>/dev/null || { cat "$log" >&2; kaas_fail "broker $id exited at start"; }
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$log" >&2; kaas_fail "broker $id did not start listening"; }
	MB_PORT[$id]=$port
}

mb_kill() {
	local id=$1 sig=${2:-KILL}
	kill -"$sig" "${MB_PID[$id]}"
	if [ "$sig" = KILL ]; then
		wait "${MB_PID[$id]}" 2>/dev/null || true
		unset "MB_PID[$id]"
	fi
}

mb_bootstrap() {
	local ids=("$@") out= id
	[ ${#ids[@]} -gt 0 ] || ids=("${!MB_PID[@]}")
	for id in "${ids[@]}"; do out="$out${out:+,}127.0.0.1:${MB_PORT[$id]}"; done
	echo "$out"
}

mb_metadata() {
	local b
	if [ -n "${1:-}" ]; then b="127.0.0.1:${MB_PORT[$1]}"; else b=$(mb_bootstrap); fi
	shift || true
	timeout 10 kcat -b "$b" -L "$@" 2>/dev/null
}

mb_leader() {
	if [ -n "${3:-}" ]; then
		mb_metadata "$3" -t "$1" | sed -n "s/^ *partition $2, leader \([0-9-]*\),.*/\1/p" | head -n1
		return
	fi
	# Any running broker: the first that names a leader (one that has not
	# read the assignment yet answers -1).
	local id l= first=
	for id in "${!MB_PID[@]}"; do
		l=$(mb_leader "$1" "$2" "$id")
		[ -z "$first" ] && first=$l
		[ -n "$l" ] && [ "$l" -ge 0 ] 2>/dev/null && { echo "$l"; return; }
	done
	echo "$first"
}

mb_controller() {
	mb_metadata "${1:-}" | sed -n 's/^ *broker \([0-9]*\) at .*(controller).*/\1/p' | head -n1
}

mb_now_ms() { date +%s%3N; }

# Wait until every partition 0..N-1 of TOPIC has a leader among the given
# live ids in broker FROM's metadata: mb_wait_led SECS TOPIC N FROM IDS...
mb_wait_led() {
	local secs=$1 topic=$2 n=$3 from=$4
	shift 4
	local end=$((SECONDS + secs)) p l ok md
	while :; do
		ok=1
		md=$(mb_metadata "$from" -t "$topic")
		for p in $(seq 0 $((n - 1))); do
			l=$(sed -n "s/^ *partition $p, leader \([0-9-]*\),.*/\1/p" <<<"$md" | head -n1)
			[[ " $* " == *" $l "* ]] || { ok=0; break; }
		done
		[ $ok = 1 ] && return 0
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

mb_coordinator() {
	local id out
	for id in "${!MB_PID[@]}"; do
		out=$(timeout 20 "$MB_OFFSETS_RAW" "127.0.0.1:${MB_PORT[$id]}" fetch "$1" x 0 2>/dev/null) || continue
		case $out in *" 0") echo "$id"; return 0 ;; esac
	done
}

mb_acked() { wc -l <"$1"; }

mb_wait_acks() {
	kaas_wait_for "$1" bash -c "[ \$(wc -l <'$2') -ge $3 ]"
}

mb_kill_leader() {
	local topic=$1 acks=$2 leader t0 t1
	leader=$(mb_leader "$topic" 0)
	[ -n "$leader" ] && [ "$leader" -ge 0 ] || kaas_fail "no leader for $topic/0"
	t0=$(mb_now_ms)
	mb_kill "$leader"
	# The first acknowledgement by another broker after the kill.
	kaas_wait_for 60 awk -v t="$t0" -v b="$leader" '$3 > t && $4 != b { f = 1 } END { exit !f }' "$acks" ||
		kaas_fail "no acknowledgement within 60 s of killing broker $leader"
	t1=$(awk -v t="$t0" -v b="$leader" '$3 > t && $4 != b { print $3; exit }' "$acks")
	MB_KILLED=$leader
	MB_FAILOVER_MS=$((t1 - t0))
}
