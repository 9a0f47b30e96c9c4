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
		sleep "$delay"
		kill -"$sig" $pid
		timeout 60 tail --pid=$pid -f /dev/null
		wait $pid; rc=$?
		echo "SIG$sig after $delay s: exit $rc; $(tail -n 1 "$log")"
		[ $rc = 0 ] || { cat "$log" >&2; kaas_fail "SIG$sig $delay s into start-up: exit $rc, not a clean stop"; }
		grep -q "stopped cleanly" "$log" || kaas_fail "SIG$sig $delay s into start-up: no 'stopped cleanly'"
		grep -q "starting: pid $pid," "$log" || [ "$delay" = 0.02 ] ||
			kaas_fail "the start line does not give the pid $pid"
	done
done
echo PASS
