#!/bin/bash
# ListOffsets by timestamp answers from the records inside a batch (issue 22,
# item 2): a batch of two records stamped 1234 and 999999999999 answers
# offset 1 for 999999999999 (and that record's timestamp), uncompressed,
# gzip and zstd; a LogAppendTime batch answers with its append time; -3
# (ListOffsets v7, flexible encoding) the record with the largest timestamp.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/kafka/rawclient"
[ -x "$RAW" ] || kaas_fail "no rawclient at $RAW"
kaas_scratch
kaasd_start
timeout 30 "$RAW" "$BROKER" time-offsets tplain 0 || kaas_fail "uncompressed"
timeout 30 "$RAW" "$BROKER" time-offsets tgzip 1 || kaas_fail "gzip"
timeout 30 "$RAW" "$BROKER" time-offsets tzstd 4 || kaas_fail "zstd"
timeout 30 "$RAW" "$BROKER" time-offsets tappend 0 append || kaas_fail "LogAppendTime"
timeout 30 "$RAW" "$BROKER" time-offsets tappendz 1 append || kaas_fail "LogAppendTime, gzip"
# The same answers after a restart (sealed segment, index from the files).
kaasd_stop
kaasd_start
timeout 30 "$RAW" "$BROKER" time-offsets-check tgzip 1 || kaas_fail "gzip after restart"
kaasd_stop
echo PASS
