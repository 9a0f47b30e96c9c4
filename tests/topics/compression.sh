#!/bin/bash
# compression.type on a topic (issue 33): Kafka's codecs are accepted at
# CreateTopics and by IncrementalAlterConfigs, and the broker recompresses a
# batch whose codec differs, as Kafka does: every batch of a gzip, snappy,
# lz4, zstd or uncompressed topic is stored in that codec whatever the
# producer sent (none and zstd from kcat, gzip from kafka-python: librdkafka
# 2.0 compresses with neither gzip, snappy nor lz4 for a broker without
# Produce v2), `producer` keeps the producer's, and every record reads back
# intact (kcat, librdkafka: the snappy and lz4 kaas writes too).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
kaasd_start
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"

timeout 60 $PY - "$BROKER" <<'PY' || kaas_fail "create the topics"
import sys
from kafka.admin import KafkaAdminClient, NewTopic
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=20000)
topics = [NewTopic("c-" + c, 1, 1, topic_configs={"compression.type": c})
          for c in ("uncompressed", "gzip", "snappy", "lz4", "zstd", "producer")]
topics.append(NewTopic("c-alter", 1, 1))
res = a.create_topics(topics)
bad = [(t, e, m) for (t, e, m) in res.topic_errors if e]
if bad:
    sys.exit("create: %s" % bad)
PY
timeout 60 $PY "$KAAS_TOP_SRCDIR/tests/topics/topic_configs.py" "$BROKER" set c-alter compression.type zstd ||
	kaas_fail "IncrementalAlterConfigs compression.type=zstd"

CODECS="none zstd gzip"
for t in uncompressed gzip snappy lz4 zstd producer alter; do
	for z in none zstd; do
		seq 1 300 | sed "s/^/$z-/" | timeout 60 kcat -b "$BROKER" -P -t "c-$t" -z "$z" -X linger.ms=20 ||
			kaas_fail "produce to c-$t with $z"
	done
	timeout 60 $PY - "$BROKER" "c-$t" <<'PY' || kaas_fail "produce to c-$t with gzip (kafka-python)"
import sys
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=sys.argv[1], compression_type="gzip", linger_ms=20)
for i in range(1, 301):
    p.send(sys.argv[2], ("gzip-%d" % i).encode(), partition=0)
p.flush()
p.close()
PY
	want=$(for z in $CODECS; do seq 1 300 | sed "s/^/$z-/"; done | sort)
	got=$(timeout 60 kcat -b "$BROKER" -C -t "c-$t" -o beginning -e -q 2>/dev/null | sort)
	[ "$got" = "$want" ] || kaas_fail "c-$t: the records read back differ ($(wc -l <<<"$got") lines)"
	"$KAASCTL" --data "$KAAS_SCRATCH/data" dump-log "c-$t" 0 --json >"$KAAS_SCRATCH/dump.json" ||
		kaas_fail "dump-log c-$t"
	stored=$($PY -c 'import json,sys; print(" ".join(sorted({b["compression"] for b in json.load(open(sys.argv[1]))["batches"]})))' "$KAAS_SCRATCH/dump.json")
	case $t in
	uncompressed) want_c=none ;;
	producer) want_c="gzip none zstd" ;;
	alter) want_c=zstd ;;
	*) want_c=$t ;;
	esac
	[ "$stored" = "$want_c" ] || kaas_fail "c-$t: batches stored as '$stored', want '$want_c'"
	echo "c-$t: 3 producer codecs stored as $want_c, every record read back"
done
kaasd_stop
echo "compression.type: all good"
