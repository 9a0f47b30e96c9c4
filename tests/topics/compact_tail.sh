#!/bin/bash
# A compacted partition whose last records were all cleaned away (issue 21):
# k1=v1, k2=v2, then a tombstone of k1 as the log's last record; the segment
# rolls by age (the active one is empty) and the cleaner removes v1 and,
# delete.retention.ms=0, the tombstone: [2, 3) is a gap that reaches the
# high watermark.  A consumer reading from the beginning must reach the end
# (kcat -e: librdkafka's partition EOF at the high watermark) after k2 at
# offset 1; a Fetch inside the gap answers an empty batch up to the high
# watermark, as Kafka's cleaner keeps one.  Before that answer the consumer
# sat at offset 2 forever (kcat -e never returned).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
kaasd_start
timeout 60 $PY - "$BROKER" <<'E' || kaas_fail "CreateTopics"
import sys
from kafka.admin import KafkaAdminClient, NewTopic
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=20000)
r = a.create_topics([NewTopic("tail", 1, 1, topic_configs={
    "cleanup.policy": "compact", "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "0"})])
for (name, err, msg) in r.topic_errors:
    if err:
        sys.exit("create %s: %s %s" % (name, err, msg))
E
printf 'k1:v1\nk2:v2\n' | kc -P -t tail -p 0 -K: || kaas_fail "produce"
printf 'k1:\n' | kc -P -t tail -p 0 -K: -Z || kaas_fail "produce the tombstone"
dir="$KAAS_SCRATCH/data/tail/0"
# Rolled by age and cleaned by housekeeping (every 5 s): a cleaned segment
# holding one batch (k2's), ending at offset 3, and the active segment empty
# at 3.
cleaned() {
	grep -q '"base":0,"epoch":[0-9]*,"sealed":true,"end":[0-9]*,"next":3,.*"gen":' \
		"$dir"/manifest-*.json 2>/dev/null &&
		grep -q '"base":3,"epoch":[0-9]*,"sealed":false,"end":0' "$dir"/manifest-*.json &&
		[ "$(timeout 30 kcat -b "$BROKER" -C -t tail -o beginning -c 1 -q -f '%o %k')" = "1 k2" ]
}
for i in $(seq 1 60); do cleaned && break; sleep 0.5; done
cleaned || kaas_fail "not cleaned as expected within 30 s: $(cat "$dir"/manifest-*.json)"
got=$(timeout 30 kcat -b "$BROKER" -C -t tail -o beginning -e -q -f '%o %k\n')
rc=$?
[ $rc = 0 ] || kaas_fail "a read from the beginning never reached the end (exit $rc; read: $got)"
[ "$got" = "1 k2" ] || kaas_fail "read '$got', want '1 k2'"
# A consumer positioned inside the gap moves to the end too.
got=$(timeout 30 kcat -b "$BROKER" -C -t tail -o 2 -e -q -f '%o %k\n')
rc=$?
[ $rc = 0 ] && [ -z "$got" ] || kaas_fail "a read from offset 2 (exit $rc, read '$got') must end at once, empty"
# A record appended after the gap is read after it.
printf 'k3:v3\n' | kc -P -t tail -p 0 -K: || kaas_fail "produce k3"
got=$(timeout 30 kcat -b "$BROKER" -C -t tail -o beginning -e -q -f '%o %k\n' | tr '\n' ' ')
[ "$got" = "1 k2 3 k3 " ] || kaas_fail "after k3: read '$got', want '1 k2 3 k3'"
kaasd_stop
echo PASS
