# tests/kafka/kaasd-lib.sh — start and stop a scratch kaasd for a shell test
# (sourced after tests/lib.sh).
#
#   kaasd_start [extra args...]   start kaasd on an ephemeral 127.0.0.1 port
#                                 with data in $KAAS_SCRATCH/data; sets
#                                 KAASD_PID, KAASD_PORT, BROKER, KAASD_LOG;
#                                 a group's first rebalance waits
#                                 $KAASD_GROUP_DELAY_MS (default 0, not
#                                 Kafka's 3000, so tests form groups fast;
#                                 set but empty: kaasd's own setting)
#   kaasd_stop                    SIGTERM and wait (fails if exit is not 0)
#   kaasd_kill                    SIGKILL and wait

KAASD="$KAAS_TOP_BUILDDIR/kaasd"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"

KAASD_RUN=0
kaasd_start() {
	KAASD_RUN=$((KAASD_RUN + 1))
	KAASD_LOG="$KAAS_SCRATCH/kaasd.$KAASD_RUN.log"
	local delay=()
	[ -n "${KAASD_GROUP_DELAY_MS-0}" ] && delay=(--group-initial-rebalance-delay-ms "${KAASD_GROUP_DELAY_MS-0}")
	"$KAASD" --data "$KAAS_SCRATCH/data" --listen 127.0.0.1:0 --log-level "${KAASD_LEVEL:-info}" \
		"${delay[@]}" "$@" 2>"$KAASD_LOG" &
	KAASD_PID=$!
	kaas_on_exit "kill -9 $KAASD_PID"
	local i
	KAASD_PORT=
	for i in $(seq 1 100); do
		KAASD_PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$KAASD_LOG" | head -n1)
		[ -n "$KAASD_PORT" ] && break
		kill -0 "$KAASD_PID" 2>/dev/null || { cat "$KAASD_LOG" >&2; kaas_fail "kaasd exited at start"; }
		sleep 0.1
	done
	[ -n "$KAASD_PORT" ] || { cat "$KAASD_LOG" >&2; kaas_fail "kaasd did not start listening"; }
	BROKER="127.0.0.1:$KAASD_PORT"
	export BROKER
}

kaasd_stop() {
	kill -TERM "$KAASD_PID"
	local rc=0
	wait "$KAASD_PID" || rc=$?
	[ $rc -eq 0 ] || { tail -n 20 "$KAASD_LOG" >&2; kaas_fail "kaasd exited with $rc after SIGTERM"; }
}

kaasd_kill() {
	kill -KILL "$KAASD_PID"
	wait "$KAASD_PID" 2>/dev/null || true
}

# kcat with a bounded run time and the scratch broker.
kc() {
	timeout 60 kcat -b "$BROKER" "$@"
}
