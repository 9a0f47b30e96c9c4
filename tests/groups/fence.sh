#!/bin/bash
# Two lives of one broker id on one volume (a zombie): the life started
# later gets the coordinator slots back at a bumped leader epoch and takes
# the group over; the older one's commits are then refused (NOT_COORDINATOR
# or, once it saw its id taken over, COORDINATOR_NOT_AVAILABLE) and never
# overwrite the newer one's offsets.  (Two
# distinct brokers sharing slots by the assignment: tests/multibroker/
# coordinator.sh.)
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"
kaas_scratch

kaasd_start
A=$BROKER A_PID=$KAASD_PID A_LOG=$KAASD_LOG
echo one | kc -P -t ft -p 0 || kaas_fail "create ft"
out=$(timeout 30 "$RAW" "$A" commit fg ft 0 5) || kaas_fail "commit on A"
[ "$out" = 0 ] || kaas_fail "commit on A answered $out"

# The second life starts while the first is paused (a zombie): a second
# kaasd with a live broker id refuses to start (tests/multibroker/dup_id.sh).
kill -STOP "$A_PID"
kaas_on_exit "kill -CONT $A_PID"
kaasd_start
B=$BROKER
kill -CONT "$A_PID"
out=$(timeout 30 "$RAW" "$B" fetch fg ft 0) || kaas_fail "fetch on B"
[ "$out" = "5 0" ] || kaas_fail "B read '$out', expected offset 5"

out=$(timeout 30 "$RAW" "$A" commit fg ft 0 7) || kaas_fail "late commit on A"
# NOT_COORDINATOR (16) from the group store's epoch fence, or
# COORDINATOR_NOT_AVAILABLE (15) once A saw its id taken over.
[ "$out" = 16 ] || [ "$out" = 15 ] ||
	kaas_fail "the fenced coordinator answered $out, expected NOT_COORDINATOR (16) or COORDINATOR_NOT_AVAILABLE (15)"
out=$(timeout 30 "$RAW" "$B" fetch fg ft 0)
[ "$out" = "5 0" ] || kaas_fail "after the fenced commit B reads '$out'"
out=$(timeout 30 "$RAW" "$B" commit fg ft 0 9)
[ "$out" = 0 ] || kaas_fail "commit on B answered $out"
out=$(timeout 30 "$RAW" "$B" fetch fg ft 0)
[ "$out" = "9 0" ] || kaas_fail "B reads '$out' after its commit"
# Unknown partitions and bad group ids answer errors, not crashes.
out=$(timeout 30 "$RAW" "$B" commit fg nosuchtopic 0 1)
[ "$out" = 3 ] || kaas_fail "commit to an unknown topic answered $out"
out=$(timeout 30 "$RAW" "$B" fetch "odd/../name" ft 0)
[ "$out" = "-1 0" ] || kaas_fail "fetch for an odd group name answered '$out'"
kaasd_stop
kill -TERM "$A_PID"; wait "$A_PID" 2>/dev/null || true
echo "PASS"
