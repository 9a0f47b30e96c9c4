#!/usr/bin/env python3
"""sasl_confluent.py EXT_PORT INT_PORT CA PASSWORD CRT_PORT CERT KEY —
confluent-kafka (python3-confluent-kafka) over SASL_SSL with SCRAM-SHA-512
(EXT) and over SASL_PLAINTEXT with PLAIN (INT) as user alice, and over SSL
with a client certificate (CRT): an admin call (CreateTopics, then the
topic in the metadata), produce, consume in a group; a wrong password gets
an authentication error and nothing else.  Exit 0, or 1 with FAIL lines."""
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

ext, intl, ca, pw, crt, cert, key = sys.argv[1:8]
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, flush=True)


def conf(via, password):
    if via == "crt":  # SSL, the principal from the client certificate
        return {"bootstrap.servers": "127.0.0.1:" + crt, "security.protocol": "SSL",
                "ssl.ca.location": ca, "ssl.certificate.location": cert,
                "ssl.key.location": key}
    c = {"sasl.username": "alice", "sasl.password": password}
    if via == "ext":
        c.update({"bootstrap.servers": "127.0.0.1:" + ext, "security.protocol": "SASL_SSL",
                  "ssl.ca.location": ca, "sasl.mechanisms": "SCRAM-SHA-512"})
    else:
        c.update({"bootstrap.servers": "127.0.0.1:" + intl,
                  "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN"})
    return c


for via in ("ext", "int", "crt"):
    topic = "cf-" + via
    admin = AdminClient(conf(via, pw))
    fut = admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
    try:
        fut[topic].result(20)
    except Exception as e:  # noqa: BLE001
        fail("%s: create_topics: %s" % (via, e))
    md = admin.list_topics(timeout=20)
    if topic not in md.topics or len(md.topics[topic].partitions) != 2:
        fail("%s: %s not in the metadata with 2 partitions" % (via, topic))
    p = Producer(conf(via, pw))
    for i in range(100):
        p.produce(topic, value=b"%s-%d" % (via.encode(), i))
    if p.flush(20) != 0:
        fail("%s: produce did not finish" % via)
    c = Consumer(dict(conf(via, pw), **{"group.id": "cg-" + via, "auto.offset.reset": "earliest",
                                        "session.timeout.ms": 6000}))
    c.subscribe([topic])
    got, end = set(), time.time() + 30
    while len(got) < 100 and time.time() < end:
        m = c.poll(1)
        if m is not None and not m.error():
            got.add(m.value())
    c.commit(asynchronous=False)
    c.close()
    if len(got) != 100:
        fail("%s: the group read %d of 100" % (via, len(got)))

# A wrong password: an authentication error, no metadata.
for via in ("ext", "int"):
    errs = []
    admin = AdminClient(dict(conf(via, "wrong-password"), error_cb=errs.append))
    try:
        admin.list_topics(timeout=4)
        fail("%s: wrong password got metadata" % via)
    except Exception:  # noqa: BLE001
        pass
    admin.poll(1)  # error_cb runs from poll
    if not any(e.code() == KafkaError._AUTHENTICATION for e in errs):
        fail("%s: wrong password: no authentication error (%r)" % (via, errs))

print("FAILED" if FAILS else "ok")
sys.exit(1 if FAILS else 0)
