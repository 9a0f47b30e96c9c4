#!/usr/bin/python3
"""kafka_python_versions.py HOST:PORT — kafka-python (an independent
decoder, Debian's python3-kafka) pinned to older protocol versions against
kaasd: for each pinned client version, a producer writes ten records, a
consumer group reads them back and commits, a second consumer of the group
resumes after the commit (reads nothing new), and the admin client creates,
describes (configs, groups) and deletes a topic.

kafka-python picks each API's version from api_version, e.g. (0, 11, 0):
Produce v3, Fetch v4, Metadata v1, ListOffsets v1, OffsetCommit v2,
OffsetFetch v1, JoinGroup v1, CreateTopics v1, DescribeConfigs v0;
(1, 0, 0) and (2, 0, 0) raise several of them.  Exit 0 or 1."""
import logging
import sys

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)


def run(broker, ver):
    tag = "kp%s" % "".join(str(x) for x in ver)
    topic, group = tag + "-t", tag + "-g"
    admin = KafkaAdminClient(bootstrap_servers=broker, api_version=ver, request_timeout_ms=20000)
    admin.create_topics([NewTopic(topic, 1, 1)])
    prod = KafkaProducer(bootstrap_servers=broker, api_version=ver, acks="all")
    for i in range(10):
        prod.send(topic, b"m%d" % i).get(timeout=20)
    prod.close()

    def consume():
        c = KafkaConsumer(topic, bootstrap_servers=broker, api_version=ver, group_id=group,
                          auto_offset_reset="earliest", enable_auto_commit=False,
                          consumer_timeout_ms=8000, session_timeout_ms=10000)
        got = [m.value for m in c]
        c.commit()
        c.close()
        return got

    got = consume()
    check(got == [b"m%d" % i for i in range(10)], "%s: first consumer read %r" % (tag, got))
    got = consume()
    check(got == [], "%s: second consumer re-read %r" % (tag, got))

    res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    names = [c[0] for r in res for res_ in r.resources for c in res_[4]]
    check("retention.ms" in names, "%s: describe configs: %r" % (tag, names))
    groups = [g[0] for g in admin.list_consumer_groups()]
    check(group in groups, "%s: list groups: %r" % (tag, groups))
    desc = admin.describe_consumer_groups([group])
    check(desc and desc[0].group == group, "%s: describe groups: %r" % (tag, desc))
    admin.delete_topics([topic])
    admin.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    for ver in [(0, 11, 0), (1, 0, 0), (2, 0, 0)]:
        print("api_version %r" % (ver,), flush=True)
        try:
            run(sys.argv[1], ver)
        except Exception as e:  # a client error is a failure, with its reason
            check(False, "api_version %r: %s: %s" % (ver, type(e).__name__, e))
    sys.exit(1 if FAILS else 0)
