#!/usr/bin/env python3
"""sasl_kafka_python.py PORT MECHANISM PASSWORD — kafka-python 2.0
(python3-kafka) as user alice over SASL_PLAINTEXT: it speaks SaslHandshake
v0 and then raw tokens (Kafka's v0 framing).  Produce 20, read them back
in a group.  Exit 0 when all 20 come back."""
import sys, time
from kafka import KafkaProducer, KafkaConsumer
port, mech, pw = sys.argv[1:4]
kw = dict(bootstrap_servers="127.0.0.1:" + port, security_protocol="SASL_PLAINTEXT",
          sasl_mechanism=mech, sasl_plain_username="alice", sasl_plain_password=pw)
p = KafkaProducer(**kw)
for i in range(20):
    p.send("kp-" + mech, b"v%d" % i)
p.flush(20)
c = KafkaConsumer("kp-" + mech, group_id="kpg-" + mech, auto_offset_reset="earliest",
                  consumer_timeout_ms=20000, **kw)
got = []
for m in c:
    got.append(m.value)
    if len(got) == 20:
        break
print(mech, len(got))
sys.exit(0 if len(got) == 20 else 1)
