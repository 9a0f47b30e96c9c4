#!/bin/bash
# kaas-test-timeout: 900
# A log that fails with -EAGAIN (NFS3ERR_JUKEBOX from an fsync or a fence
# check; here a faultfs EAGAIN rule on one fsync) while a produce lane is
# between its kaas_idem_check and kaas_log_append_nowait: the append returns
# the log's failure, -EAGAIN, which api_produce.c:append_partition reads as
# "no room: parked" -- but no room waiter was registered (append() registers
# one only when it would wait for room), so the lane stays parked for ever:
# the request is never answered, nor is any later one on that connection or
# partition, the topic stays referenced (a re-open of the failed log waits
# in kaas_topic_wait_exclusive holding admin_mu) and a drain never ends.
# A race: tried up to ROUNDS times, with the failing fsync at varying points
# of a pipelined burst.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/groups/idem_raw"
kaas_scratch
ROUNDS=${KAAS_EAGAIN_ROUNDS:-20}
for i in $(seq 1 "$ROUNDS"); do
	vol="$KAAS_SCRATCH/vol$i"
	mkdir -p "$vol"
	after=$((3 + i % 8))
	printf '{"rules":[{"op":"fsync","path":"pipe/0/*.log","after":%d,"times":1,"fault":"EAGAIN"}]}\n' \
		"$after" >"$KAAS_SCRATCH/r$i.json"
	kaasd_start --data "fault+$vol?seed=$i&config=$KAAS_SCRATCH/r$i.json"
	echo first | kc -P -t pipe -p 0 || kaas_fail "create pipe"
	if ! out=$(timeout 120 "$RAW" "$BROKER" pipe pipe 200 2>&1); then
		echo "$out" >&2
		tail -n 20 "$KAASD_LOG" >&2
		echo "re-open of the failed log logged: $(grep -c 're-opening it' "$KAASD_LOG") time(s)" >&2
		kill -TERM "$KAASD_PID"
		for j in $(seq 1 15); do kill -0 "$KAASD_PID" 2>/dev/null || break; sleep 1; done
		kill -0 "$KAASD_PID" 2>/dev/null &&
			echo "kaasd still running 15 s after SIGTERM (its drain waits for the unanswered request)" >&2
		kaas_fail "round $i (fsync $after fails with EAGAIN): a produce request was never answered"
	fi
	echo "round $i (after $after): $(echo $out | tr '\n' ' ')"
	kaasd_kill
done
echo "PASS (not reproduced in $ROUNDS rounds)"
