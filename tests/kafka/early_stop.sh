#!/bin/bash
# Ctrl-C (SIGINT) or SIGTERM during start-up stops kaasd cleanly once
# start-up is done (issue 39: it used to die by the signal, half started,
# with no "stopped cleanly"); the start line names the pid.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
for sig in INT TERM; do
	for delay in 0.02 0.2; do
		log=$KAAS_SCRATCH/kaasd-$sig-$delay.log
		"$KAASD" --data "$KAAS_SCRATCH/data" --listen 127.0.0.1:0 2>"$log" &
		pid=$!
		kaas_on_exit "kill -9 $pid"
		# From the start line on (the process is in main, its handler
		# set; before main no program can catch a signal: a sanitizer
		# build takes tens of ms to get there), then DELAY more.
		for i in $(seq 1 500); do grep -q "starting: pid" "$log" && break; sleep 0.01; done
		sleep "$delay"
		kill -"$sig" $pid
		timeout 60 tail --pid=$pid -f /dev/null
		wait $pid; rc=$?
		echo "SIG$sig after $delay s: exit $rc; $(tail -n 1 "$log")"
		[ $rc = 0 ] || { cat "$log" >&2; kaas_fail "SIG$sig $delay s into start-up: exit $rc, not a clean stop"; }
		grep -q "stopped cleanly" "$log" || kaas_fail "SIG$sig $delay s into start-up: no 'stopped cleanly'"
		grep -q "starting: pid $pid," "$log" || kaas_fail "the start line does not give the pid $pid"
	done
done
echo PASS
