#!/bin/bash
# /readyz follows the broker's state, each transition made on purpose:
#   1. 503 while the broker has joined but not opened its partitions (held
#      at the named step cluster.round.before-serve of its first round by
#      KAAS_PAUSE_AT), while /healthz already answers 200;
#   2. 200 once it serves;
#   3. 503 while it is self-fenced (faultfs fails every operation on the
#      broker documents from its host: no round succeeds for half the
#      liveness timeout);
#   4. 200 again after the faults stop and a round succeeds.
# kaas_ready on /metrics agrees with /readyz each time.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
. "$KAAS_TOP_SRCDIR/tests/metrics/metrics-lib.sh"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"
ffs_start rz 1 --seed 7

ready_metric() { scrape | sed -n 's/^kaas_ready \([01]\)$/\1/p'; }
expect_ready() { # CODE METRIC WHAT
	local code m
	code=$(http_code readyz)
	m=$(ready_metric)
	[ "$code" = "$1" ] || kaas_fail "$3: /readyz answered $code, expected $1"
	[ "$m" = "$2" ] || kaas_fail "$3: kaas_ready is '$m', expected $2"
}
wait_ready() { # SECS CODE WHAT
	local end=$((SECONDS + $1))
	until [ "$(http_code readyz)" = "$2" ]; do
		[ $SECONDS -ge $end ] && { tail -n 20 "$LOG" >&2; kaas_fail "$3: /readyz did not answer $2 within $1 s"; }
		sleep 0.05
	done
}

LOG=$KAAS_SCRATCH/kaasd.log
KAAS_PAUSE_AT=cluster.round.before-serve:4000 "$KAASD" --data "$M/host0" --listen 127.0.0.1:0 \
	--heartbeat-ms 100 --liveness-timeout-ms 1000 --http-listen 127.0.0.1:0 2>"$LOG" &
PID=$!
kaas_on_exit "kill -9 $PID"
http_port "$LOG"
kaas_wait_for 20 grep -q "kaas-step: pause at cluster.round.before-serve" "$LOG" ||
	{ cat "$LOG" >&2; kaas_fail "kaasd never reached cluster.round.before-serve"; }
# 1. Joined (its heartbeat is written), partitions not opened yet.
[ "$(http_code healthz)" = 200 ] || kaas_fail "/healthz does not answer 200 while the broker starts"
expect_ready 503 0 "held before its first round opens the partitions"
grep -q "listening on" "$LOG" && kaas_fail "the broker serves before its first round finished"

# 2. Serving.
wait_ready 20 200 "after the first rounds"
grep -q "listening on" "$LOG" || kaas_fail "ready before listening"
expect_ready 200 1 "serving"

# 3. Self-fenced: no round can write its heartbeat.
ffs_ctl set '{"op":"*","path":"__cluster/brokers/*","host":0,"prob":1,"times":-1,"fault":"EIO"}' \
	>/dev/null || kaas_fail "faultfs rule"
wait_ready 10 503 "while its heartbeat fails"
expect_ready 503 0 "fenced"
[ "$(http_code healthz)" = 200 ] || kaas_fail "/healthz must stay 200 while fenced (the process serves)"

# 4. Recovered.
ffs_ctl clear >/dev/null || kaas_fail "faultfs clear"
wait_ready 20 200 "after the faults stopped"
expect_ready 200 1 "recovered"

kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
[ $rc = 0 ] || { tail -n 20 "$LOG" >&2; kaas_fail "kaasd exited with $rc"; }
echo PASS
