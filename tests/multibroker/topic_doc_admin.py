"""topic_doc_admin.py — the topic admin requests of topic_doc_race.sh, sent
by hand to exactly one broker (tests/support/kraw.py), and the topic
document as it is on the volume.

usage: topic_doc_admin.py set BROKER TOPIC KEY VALUE
           IncrementalAlterConfigs v0 SET; prints "err=<code> <message>"
       topic_doc_admin.py grow BROKER TOPIC COUNT
           CreatePartitions v0; prints "err=<code> <message>"
       topic_doc_admin.py doc CLUSTER_DIR TOPIC
           prints the document's id, partitions and config (key=value, sorted)
       topic_doc_admin.py stamp DATA_DIR TOPIC
           prints the id in the topic directory's stamp
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import kraw  # noqa: E402

TIMEOUT = 90  # a broker stopped at a named step answers when it goes on


def nstring(data, pos):
    (n,) = struct.unpack(">h", data[pos:pos + 2])
    pos += 2
    if n < 0:
        return None, pos
    return data[pos:pos + n].decode(), pos + n


def set_config(broker, topic, key, value):
    body = struct.pack(">i", 1) + struct.pack(">b", 2) + kraw.string(topic)
    body += struct.pack(">i", 1) + kraw.string(key) + struct.pack(">b", 0) + kraw.string(value)
    body += struct.pack(">b", 0)  # validate_only
    data = kraw.request(broker, 44, 0, body, timeout=TIMEOUT)
    (n,) = struct.unpack(">i", data[4:8])
    assert n == 1, "IncrementalAlterConfigs: %d resources" % n
    (err,) = struct.unpack(">h", data[8:10])
    msg, _ = nstring(data, 10)
    return err, msg


def grow(broker, topic, count):
    body = struct.pack(">i", 1) + kraw.string(topic) + struct.pack(">ii", count, -1)
    body += struct.pack(">ib", 20000, 0)  # timeout_ms, validate_only
    data = kraw.request(broker, 37, 0, body, timeout=TIMEOUT)
    (n,) = struct.unpack(">i", data[4:8])
    assert n == 1, "CreatePartitions: %d results" % n
    _, pos = nstring(data, 8)
    (err,) = struct.unpack(">h", data[pos:pos + 2])
    msg, _ = nstring(data, pos + 2)
    return err, msg


def body_of(path):
    with open(path) as f:
        f.readline()  # the kaas_doc header
        return json.loads(f.read())


cmd = sys.argv[1]
if cmd == "set":
    err, msg = set_config(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    print("err=%d %s" % (err, msg or ""))
elif cmd == "grow":
    err, msg = grow(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    print("err=%d %s" % (err, msg or ""))
elif cmd == "doc":
    b = body_of(os.path.join(sys.argv[2], "topics", sys.argv[3] + ".json"))
    cfg = " ".join("%s=%s" % kv for kv in sorted(b.get("config", {}).items()))
    print("id=%s partitions=%d config=%s" % (b["id"], b["partitions"], cfg))
elif cmd == "stamp":
    print(body_of(os.path.join(sys.argv[2], sys.argv[3], ".topic-id.json"))["id"])
else:
    sys.exit("usage: see the file's head")
