#!/bin/bash
# The HTTP endpoint serves whatever its connection's descriptor number:
# with 1,100 Kafka connections held open (a broker leading thousands of
# partitions holds ~1,000 segment handles too), a scrape's socket lands
# above FD_SETSIZE (1024).  libmicrohttpd's select() loop refused those
# ("not less than FD_SETSIZE"): /healthz, /readyz and /metrics failed at
# 10,000 partitions (bench/scale.sh saw it).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/metrics/metrics-lib.sh"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"
ulimit -n 4096 2>/dev/null || kaas_skip "cannot raise the descriptor limit to 4096"
LOG=$KAAS_SCRATCH/kaasd.log
"$KAASD" --data "$KAAS_SCRATCH/data" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 2>"$LOG" &
PID=$!
kaas_on_exit "kill -9 $PID 2>/dev/null"
http_port "$LOG"
kaas_wait_for 20 grep -q "listening on" "$LOG" || { cat "$LOG" >&2; kaas_fail "kaasd did not listen"; }
KPORT=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$LOG" | head -n1)
[ -n "$KPORT" ] || kaas_fail "no Kafka port in the log"
[ "$(http_code healthz)" = 200 ] || kaas_fail "/healthz is not 200 before the connections"

# Hold 1,100 connections to the Kafka port until told to stop.
mkfifo "$KAAS_SCRATCH/go"
/usr/bin/python3 - "$KPORT" "$KAAS_SCRATCH/go" <<'PY' &
import resource, socket, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
held = [socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) for _ in range(1100)]
print("held", len(held), flush=True)
open(sys.argv[2]).read()   # until the test writes to the fifo
PY
HOLDER=$!
kaas_on_exit "kill $HOLDER 2>/dev/null"
end=$((SECONDS + 30))
until [ "$(ls /proc/$PID/fd | wc -l)" -gt 1100 ]; do
	[ $SECONDS -ge $end ] && kaas_fail "kaasd holds only $(ls /proc/$PID/fd | wc -l) descriptors"
	sleep 0.1
done
echo "kaasd holds $(ls /proc/$PID/fd | wc -l) descriptors"
for path in healthz readyz metrics; do
	code=$(http_code $path)
	[ "$code" = 200 ] || { tail -n 5 "$LOG" >&2; kaas_fail "/$path answered '$code' with kaasd's descriptors above FD_SETSIZE"; }
done
echo "/healthz, /readyz and /metrics answer 200 above FD_SETSIZE"
echo done >"$KAAS_SCRATCH/go"
wait "$HOLDER" || true
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
[ $rc = 0 ] || { tail -n 20 "$LOG" >&2; kaas_fail "kaasd exited with $rc"; }
echo PASS
