#!/bin/bash
# kafka-python (Debian's python3-kafka) pinned to older protocol versions
# produces, consumes in a group, commits and resumes, and runs admin calls
# against kaasd (tests/kafka/kafka_python_versions.py).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
/usr/bin/python3 -c 'import kafka' 2>/dev/null || kaas_skip "no kafka-python (python3-kafka)"
kaas_scratch
kaasd_start --group-initial-rebalance-delay-ms 0
timeout 300 /usr/bin/python3 "$KAAS_TOP_SRCDIR/tests/kafka/kafka_python_versions.py" "$BROKER" ||
	kaas_fail "kafka-python exchanges failed"
kaasd_stop
echo PASS
