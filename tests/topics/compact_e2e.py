"""A compacted topic end to end (issue 21) through kafka-python: CreateTopics
with cleanup.policy=compact succeeds, DescribeConfigs answers it (Kafka
Connect's precondition), keyed records (gzip and uncompressed batches, with
tombstones) are produced, and after the broker cleaned the log a consumer
reading from the beginning gets exactly the latest value of every live key,
in offset order, at the offsets they were written at.

usage: compact_e2e.py BROKER STEP  (STEP: create, produce, check)
"""
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

broker, step, state = sys.argv[1], sys.argv[2], sys.argv[3]
TOPIC, KEYS, ROUNDS = "kv", 200, 20


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


if step == "create":
    admin = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=20000)
    res = admin.create_topics([NewTopic(TOPIC, 1, 1, topic_configs={
        "cleanup.policy": "compact", "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "0"})])
    for (name, err, msg) in res.topic_errors:
        if err:
            fail("create %s: %s %s" % (name, err, msg))
    d = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])
    got = {}
    for r in d:
        for (err, msg, rtype, rname, entries) in r.resources:
            for e in entries:
                got[e[0]] = e[1]
    if got.get("cleanup.policy") != "compact":
        fail("DescribeConfigs cleanup.policy: %r" % got.get("cleanup.policy"))
    print("create: CreateTopics with cleanup.policy=compact succeeded; DescribeConfigs answers "
          "compact")
elif step == "produce":
    latest = {}
    gz = KafkaProducer(bootstrap_servers=broker, acks="all", linger_ms=5, compression_type="gzip")
    un = KafkaProducer(bootstrap_servers=broker, acks="all", linger_ms=5)
    for rnd in range(ROUNDS):
        p = gz if rnd < ROUNDS // 2 else un
        futs = []
        for k in range(KEYS):
            key = ("key-%03d" % k).encode()
            tomb = rnd == ROUNDS - 1 and k < 20
            val = None if tomb else ("v%d-%d" % (rnd, k)).encode()
            futs.append((key, val, p.send(TOPIC, key=key, value=val)))
        p.flush()
        for (key, val, f) in futs:
            latest[key.decode()] = (f.get(timeout=20).offset, val.decode() if val else None)
    gz.close()
    un.close()
    json.dump(latest, open(state, "w"))
    print("produce: %d keyed records (gzip and uncompressed batches, %d tombstones)"
          % (KEYS * ROUNDS, 20))
elif step == "check":
    latest = json.load(open(state))
    want = sorted((off, k, v) for k, (off, v) in latest.items() if v is not None)
    c = KafkaConsumer(bootstrap_servers=broker, auto_offset_reset="earliest",
                      enable_auto_commit=False)
    tp = TopicPartition(TOPIC, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    end = c.end_offsets([tp])[tp]
    got = []
    deadline = time.time() + 20
    # Up to the last retained record (the end offset is past the removed
    # tail of tombstones: its position never reaches it).
    last = want[-1][0] if want else -1
    while (not got or got[-1][0] < last) and time.time() < deadline:
        for recs in c.poll(timeout_ms=500).values():
            got += [(m.offset, m.key.decode(), m.value.decode() if m.value is not None else None)
                    for m in recs]
    if got and got[-1][0] >= end:
        fail("read past the end offset %d" % end)
    if got != want:
        extra = [g for g in got if g not in want][:5]
        missing = [w for w in want if w not in got][:5]
        fail("read %d records, want %d; extra %s; missing %s" % (len(got), len(want), extra,
                                                                 missing))
    print("check: %d records from the beginning = the latest value of every live key, in "
          "offset order at their offsets (of %d written)" % (len(got), KEYS * ROUNDS))
