#!/usr/bin/python3
"""confluent-kafka's transactional producer against kaasd (argv[1] bootstrap):
a committed and an aborted transaction over 3 partitions of 2 topics, offsets
sent to a group; read_committed sees exactly the committed records in order,
read_uncommitted all of them; a second producer with the same transactional
id fences the first.  Prints PASS or raises."""
import sys
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

BS = sys.argv[1]
RUN = uuid.uuid4().hex[:8]
TA, TB, GROUP, TXN = "pa-" + RUN, "pb-" + RUN, "pg-" + RUN, "ptx-" + RUN
PARTS = [(TA, 0), (TA, 1), (TB, 0)]


def producer(txn_id):
    p = Producer({"bootstrap.servers": BS, "transactional.id": txn_id,
                  "transaction.timeout.ms": 60000, "linger.ms": 0})
    p.init_transactions(30)
    return p


def run(p, tag, commit):
    p.begin_transaction()
    for i, (t, part) in enumerate(PARTS):
        p.produce(t, value=("%s-%d" % (tag, i)).encode(), partition=part)
    c = Consumer({"bootstrap.servers": BS, "group.id": GROUP, "enable.auto.commit": False})
    p.send_offsets_to_transaction([TopicPartition(TA, 0, 7)], c.consumer_group_metadata(), 30)
    c.close()
    if commit:
        p.commit_transaction(30)
    else:
        p.flush(30)  # on the partitions first: an abort purges what is queued
        p.abort_transaction(30)


def read(isolation):
    c = Consumer({"bootstrap.servers": BS, "group.id": "r-" + uuid.uuid4().hex,
                  "isolation.level": isolation, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True, "enable.auto.commit": False})
    c.assign([TopicPartition(t, p, 0) for t, p in PARTS])
    got, eof = {}, set()
    for _ in range(300):
        m = c.poll(0.1)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                eof.add((m.topic(), m.partition()))
                if len(eof) == len(PARTS):
                    break
                continue
            raise KafkaException(m.error())
        got.setdefault((m.topic(), m.partition()), []).append(m.value().decode())
    c.close()
    return got


p = producer(TXN)
run(p, "c1", True)
run(p, "a1", False)
run(p, "c2", True)
committed = read("read_committed")
want = {(TA, 0): ["c1-0", "c2-0"], (TA, 1): ["c1-1", "c2-1"], (TB, 0): ["c1-2", "c2-2"]}
assert committed == want, committed
everything = read("read_uncommitted")
for (t, part), vals in want.items():
    assert everything[(t, part)] == [vals[0], vals[0].replace("c1", "a1"), vals[1]], everything
c = Consumer({"bootstrap.servers": BS, "group.id": GROUP})
offs = c.committed([TopicPartition(TA, 0)], timeout=10)
c.close()
assert offs[0].offset == 7, offs

# Fencing: a second producer with the same id; the first one's commit fails.
p.begin_transaction()
p.produce(TB, value=b"zombie", partition=0)
p.flush(10)
q = producer(TXN)
try:
    p.commit_transaction(10)
    raise AssertionError("the fenced producer committed")
except KafkaException as e:
    print("fenced:", e.args[0].str())
q.begin_transaction()
q.produce(TB, value=b"fencer", partition=0)
q.commit_transaction(30)
committed = read("read_committed")
assert committed[(TB, 0)] == ["c1-2", "c2-2", "fencer"], committed
print("PASS")
