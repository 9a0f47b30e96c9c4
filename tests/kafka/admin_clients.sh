#!/bin/bash
# The admin-client acceptance test of issue 15: kafka-python's and
# confluent-kafka's admin clients against kaasd, each call checked for its
# effect (tests/kafka/admin_clients.py).  Python clients only: the normal
# suite (the sanitizer suite decodes every admin API in api_versions_wire.sh).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
$PY -c 'import confluent_kafka' 2>/dev/null || kaas_skip "python3-confluent-kafka is not installed"
kaas_scratch
kaasd_start
timeout 120 $PY "$KAAS_TOP_SRCDIR/tests/kafka/admin_clients.py" "$BROKER" \
	"$KAAS_TOP_BUILDDIR/kaasctl" "$KAAS_SCRATCH/data" || kaas_fail "admin clients"
kaasd_stop
echo PASS
