#!/bin/bash
# Requests of 256 KiB and more, read by kaasd straight into their own
# buffer once their head has arrived (server/conn.c, BIG_FRAME), however
# they arrive (tests/kafka/large_frames.py): trickled, pipelined behind and
# before others, whole; fetched back byte for byte; and a connection that
# leaves in the middle of one.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
kaas_scratch
kaasd_start
timeout 120 python3 "$KAAS_TOP_SRCDIR/tests/kafka/large_frames.py" "$BROKER" ||
	kaas_fail "large frames"
kill -0 "$KAASD_PID" 2>/dev/null || kaas_fail "kaasd died"
kaasd_stop
echo PASS
