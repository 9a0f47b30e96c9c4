#!/bin/bash
# Committed offsets expire after offsets.retention for groups without
# members (issue 15), with a small retention set through --config:
# tests/groups/offsets_retention.py.  About 12 s.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
conf="$KAAS_SCRATCH/kaasd.conf"
printf 'offsets.retention.minutes=1\noffsets-retention-ms=2500\n' >"$conf"
kaasd_start --config "$conf"
timeout 90 $PY "$KAAS_TOP_SRCDIR/tests/groups/offsets_retention.py" "$BROKER" \
	"$KAAS_TOP_BUILDDIR/kaasctl" "$KAAS_SCRATCH/data" || kaas_fail "offsets retention"
grep -q "expired (offsets.retention.minutes)" "$KAASD_LOG" || kaas_fail "no expiry logged"
kaasd_stop
echo PASS
