"""Topic configs through kafka-python's admin client (an independent
encoder and decoder of CreateTopics, DescribeConfigs and AlterConfigs) and a
hand-encoded IncrementalAlterConfigs v0 (kafka-python has none).

usage: topic_configs.py BROKER STEP   (STEP: create, describe, alter,
incremental, after-restart); prints what it checked, exits 1 on a mismatch.
       topic_configs.py BROKER set TOPIC KEY VALUE   (IncrementalAlterConfigs
SET sent to exactly that broker)
"""
import os
import struct
import sys

from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import InvalidConfigurationError, KafkaError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import kraw  # noqa: E402

broker, step = sys.argv[1], sys.argv[2]
admin = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=20000,
                         client_id="topic-configs-test")
TOPIC_CONFIG, STATIC_BROKER, DEFAULT = 1, 4, 5


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def describe(topic):
    """{name: (value, source, [synonym names])} of a topic (v1, synonyms)."""
    res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                 include_synonyms=True)
    out = {}
    for r in res:
        for (err, msg, rtype, rname, entries) in r.resources:
            if err:
                fail("describe %s: error %d %s" % (topic, err, msg))
            for e in entries:
                name, value, read_only, source, sensitive, syns = e
                out[name] = (value, source, [s[0] for s in syns])
    return out


def create_error(name, configs, rf=1):
    """(error code, message) of creating `name` (kafka-python raises on an
    error; its text carries the broker's error_message)."""
    try:
        res = admin.create_topics([NewTopic(name, 1, rf, topic_configs=configs)],
                                  validate_only=False)
    except KafkaError as e:
        return e.errno, str(e)
    for (tname, err, msg) in res.topic_errors:
        return err, msg
    return None, None


def incremental(topic, ops):
    """IncrementalAlterConfigs v0 by hand: ops [(name, op, value)]; returns
    (error_code, message) of the topic's resource."""
    body = struct.pack(">i", 1) + struct.pack(">b", 2) + kraw.string(topic)
    body += struct.pack(">i", len(ops))
    for (name, op, value) in ops:
        body += kraw.string(name) + struct.pack(">b", op) + kraw.string(value)
    body += struct.pack(">b", 0)  # validate_only
    data = kraw.request(broker, 44, 0, body)
    throttle, n = struct.unpack(">ii", data[:8])
    if n != 1:
        fail("IncrementalAlterConfigs answer: %d resources" % n)
    err, mlen = struct.unpack(">hh", data[8:12])
    msg = data[12:12 + mlen].decode() if mlen >= 0 else None
    return err, msg


if step == "create":
    err, msg = create_error("cfg", {"retention.ms": "2000", "segment.bytes": "1048576"})
    if err:
        fail("create cfg: %s %s" % (err, msg))
    err, msg = create_error("small", {"max.message.bytes": "1000"})
    if err:
        fail("create small: %s %s" % (err, msg))
    err, msg = create_error("bad", {"retention.msx": "5"})
    if err != InvalidConfigurationError.errno or "retention.msx" not in (msg or ""):
        fail("an unknown key: got %s %s, want INVALID_CONFIG naming it" % (err, msg))
    err, msg = create_error("bad", {"retention.ms": "soon"})
    if err != InvalidConfigurationError.errno or "retention.ms" not in (msg or ""):
        fail("a bad value: got %s %s" % (err, msg))
    err, msg = create_error("bad", {"cleanup.policy": "compact,shred"})
    if err != InvalidConfigurationError.errno or "cleanup.policy" not in (msg or ""):
        fail("cleanup.policy=compact,shred: got %s %s" % (err, msg))
    # Kafka 3.x's deprecated keys are accepted (message.format.version is
    # ignored: record format v2), a value still checked (issue 33).
    err, msg = create_error("mfv", {"message.format.version": "2.8",
                                    "message.downconversion.enable": "false",
                                    "message.timestamp.difference.max.ms": "60000"})
    if err:
        fail("create with Kafka 3.x's deprecated keys: %s %s" % (err, msg))
    err, msg = create_error("bad", {"message.format.version": "banana"})
    if err != InvalidConfigurationError.errno or "message.format.version" not in (msg or ""):
        fail("message.format.version=banana: got %s %s" % (err, msg))
    err, msg = create_error("rf3", {}, rf=3)
    if err:
        fail("replication factor 3 (Connect and Streams ask for it): %s %s" % (err, msg))
    err, msg = create_error("rf0", {}, rf=0)
    if err != 38:
        fail("replication factor 0: got %s %s, want INVALID_REPLICATION_FACTOR" % (err, msg))
    if "bad" in admin.list_topics():
        fail("a refused create left the topic")
    print("create: configs taken, unknown key / bad values refused with INVALID_CONFIG; "
          "replication factor 3 accepted, 0 refused")
elif step == "describe":
    d = describe("cfg")
    if d["retention.ms"][:2] != ("2000", TOPIC_CONFIG):
        fail("retention.ms of cfg: %s" % (d["retention.ms"],))
    if d["segment.bytes"][:2] != ("1048576", TOPIC_CONFIG):
        fail("segment.bytes of cfg: %s" % (d["segment.bytes"],))
    if d["retention.ms"][2][:2] != ["retention.ms", "log.retention.hours"]:
        fail("synonyms of retention.ms: %s" % (d["retention.ms"][2],))
    if d["cleanup.policy"][:2] != ("delete", DEFAULT):
        fail("cleanup.policy of cfg: %s" % (d["cleanup.policy"],))
    p = describe("plain")
    if p["retention.ms"][:2] != (str(100 * 3600000), STATIC_BROKER):
        fail("retention.ms of plain from log.retention.hours=100: %s" % (p["retention.ms"],))
    if p["segment.bytes"][:2] != ("2097152", STATIC_BROKER):
        fail("segment.bytes of plain from log.segment.bytes: %s" % (p["segment.bytes"],))
    m = describe("mfv")
    if m["message.format.version"][:2] != ("2.8", TOPIC_CONFIG):
        fail("message.format.version of mfv: %s" % (m["message.format.version"],))
    if p["message.format.version"][:2] != ("3.0-IV1", DEFAULT):
        fail("message.format.version of plain (Kafka 3.x's default): %s" % (p["message.format.version"],))
    print("describe: values with their sources (topic, broker file, default) and synonyms; "
          "message.format.version as set, else 3.0-IV1")
elif step == "alter":
    res = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "plain",
                                              configs={"retention.bytes": "123456789",
                                                       "max.message.bytes": "5000"})])
    for (err, msg, rtype, rname) in res.resources:
        if err:
            fail("alter plain: %s %s" % (err, msg))
    d = describe("plain")
    if d["retention.bytes"][:2] != ("123456789", TOPIC_CONFIG):
        fail("retention.bytes after alter: %s" % (d["retention.bytes"],))
    res = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "plain",
                                              configs={"nonsense.key": "1"})])
    for (err, msg, rtype, rname) in res.resources:
        if err != InvalidConfigurationError.errno:
            fail("alter with an unknown key: %s %s" % (err, msg))
    print("alter: AlterConfigs replaces the overrides; an unknown key is INVALID_CONFIG")
elif step == "incremental":
    err, msg = incremental("plain", [("retention.ms", 0, "86400000"),
                                     ("retention.bytes", 1, None)])
    if err:
        fail("incremental SET/DELETE: %s %s" % (err, msg))
    d = describe("plain")
    if d["retention.ms"][:2] != ("86400000", TOPIC_CONFIG):
        fail("retention.ms after SET: %s" % (d["retention.ms"],))
    if d["retention.bytes"][1] != DEFAULT:
        fail("retention.bytes after DELETE: %s" % (d["retention.bytes"],))
    if d["max.message.bytes"][:2] != ("5000", TOPIC_CONFIG):
        fail("max.message.bytes kept by an incremental change: %s" % (d["max.message.bytes"],))
    err, msg = incremental("plain", [("retention.ms", 2, "5")])
    if err != InvalidConfigurationError.errno:
        fail("APPEND to a number: %s %s" % (err, msg))
    # APPEND and SUBTRACT edit the effective list: the default (delete)
    # when the topic has no override, as Kafka's (issue 33).
    err, msg = incremental("plain", [("cleanup.policy", 2, "compact")])
    if err:
        fail("APPEND compact to cleanup.policy: %s %s" % (err, msg))
    pol = describe("plain")["cleanup.policy"]
    if pol[:2] != ("delete,compact", TOPIC_CONFIG):
        fail("cleanup.policy after APPEND compact to the default: %s, want delete,compact" % (pol,))
    err, msg = incremental("plain", [("cleanup.policy", 3, "delete")])
    pol = describe("plain")["cleanup.policy"]
    if err or pol[:2] != ("compact", TOPIC_CONFIG):
        fail("SUBTRACT delete from delete,compact: %s %s, then %s" % (err, msg, pol))
    err, msg = incremental("plain", [("cleanup.policy", 2, "compact,delete")])
    pol = describe("plain")["cleanup.policy"]
    if err or pol[:2] != ("compact,delete", TOPIC_CONFIG):
        fail("APPEND compact,delete to compact: %s %s, then %s" % (err, msg, pol))
    err, msg = incremental("plain", [("message.format.version", 0, "3.0")])
    if err:
        fail("SET message.format.version=3.0: %s %s" % (err, msg))
    err, msg = incremental("plain", [("cleanup.policy", 0, "delete")])
    if err:
        fail("SET cleanup.policy=delete: %s %s" % (err, msg))
    err, msg = incremental("nosuchtopic", [("retention.ms", 0, "1")])
    if err != 3:
        fail("unknown topic: %s %s" % (err, msg))
    print("incremental: SET, DELETE kept the other overrides; APPEND on a number refused; "
          "APPEND/SUBTRACT edit the effective list; unknown topic UNKNOWN_TOPIC_OR_PARTITION")
elif step == "set":
    err, msg = incremental(sys.argv[3], [(sys.argv[4], 0, sys.argv[5])])
    if err:
        fail("set %s=%s on %s: %s %s" % (sys.argv[4], sys.argv[5], sys.argv[3], err, msg))
elif step == "after-restart":
    d = describe("plain")
    if d["retention.ms"][:2] != ("86400000", TOPIC_CONFIG) or \
            d["max.message.bytes"][:2] != ("5000", TOPIC_CONFIG):
        fail("configs after a restart: %s %s" % (d["retention.ms"], d["max.message.bytes"]))
    print("after-restart: the overrides came back from the topic document")
else:
    fail("unknown step " + step)
admin.close()
