#!/bin/bash
# A topic config changed through one broker is applied by the broker that
# leads the partition (at its next agent round, from the topic document):
# IncrementalAlterConfigs to broker A sets max.message.bytes=1000, and a 2 KB record to
# a partition broker B leads is refused with MESSAGE_TOO_LARGE; the old code
# stored nothing and B kept accepting it.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
mb_start 0
mb_start 1
echo x | timeout 30 kcat -b "$(mb_bootstrap)" -P -t follow -p 0 2>/dev/null || true
timeout 30 $PY - "$(mb_bootstrap 0)" <<'PY' || kaas_fail "creating the topic"
import sys
from kafka.admin import KafkaAdminClient, NewTopic
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=20000)
a.create_topics([NewTopic("follow2", 4, 3)])
PY
# A partition broker 1 leads (the controller spreads four over two brokers).
part=
for i in $(seq 1 100); do
	for p in 0 1 2 3; do
		[ "$(mb_leader follow2 $p 0)" = 1 ] && [ "$(mb_leader follow2 $p 1)" = 1 ] && { part=$p; break; }
	done
	[ -n "$part" ] && break
	sleep 0.1
done
[ -n "$part" ] || kaas_fail "broker 1 leads no partition of follow2"
head -c 2000 /dev/zero | tr '\0' a >"$KAAS_SCRATCH/big.txt"
timeout 30 kcat -b "$(mb_bootstrap 1)" -P -t follow2 -p "$part" -l "$KAAS_SCRATCH/big.txt" ||
	kaas_fail "a 2 KB record refused before the change"
timeout 30 $PY "$KAAS_TOP_SRCDIR/tests/topics/topic_configs.py" "$(mb_bootstrap 0)" set follow2 \
	max.message.bytes 1000 || kaas_fail "IncrementalAlterConfigs to broker 0"
refused=0
for i in $(seq 1 50); do
	if ! out=$(timeout 30 kcat -b "$(mb_bootstrap 1)" -P -t follow2 -p "$part" -l "$KAAS_SCRATCH/big.txt" 2>&1); then
		echo "$out" | grep -qi "too large" && { refused=1; break; }
	fi
	sleep 0.2
done
[ $refused = 1 ] || kaas_fail "broker 1 still accepts a 2 KB record into follow2/$part after max.message.bytes=1000 was set through broker 0"
grep -q "config changed elsewhere; applied" "$KAAS_SCRATCH"/kaasd.1.*.log ||
	kaas_fail "broker 1 did not log applying the change from the document"
echo "max.message.bytes set through broker 0 is enforced by broker 1 (leader of follow2/$part) after $i tries"
