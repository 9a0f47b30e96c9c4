"""DeleteGroups through kafka-python's admin client and OffsetDelete v0 by
hand (kafka-python has none).  usage: delete_groups.py BROKER STEP"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import kraw  # noqa: E402

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata

broker, step = sys.argv[1], sys.argv[2]
# The cluster directory (groups/<name>/ must not appear for a group that
# never existed) and kaasctl, which must not list a deleted group.
CLUSTER = os.path.join(os.environ["KAAS_SCRATCH"], "data", "__cluster")
KAASCTL = os.path.join(os.environ["KAAS_TOP_BUILDDIR"], "kaasctl")
NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, GROUP_SUBSCRIBED = 68, 69, 86


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def admin():
    return KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=20000)


def commit(group, offsets):
    """Commit {partition: offset} of topic t as a standalone consumer."""
    c = KafkaConsumer(bootstrap_servers=broker, group_id=group, enable_auto_commit=False)
    c.commit({TopicPartition("t", p): OffsetAndMetadata(o, "") for p, o in offsets.items()})
    c.close(autocommit=False)


def committed(group):
    return {tp.partition: om.offset
            for tp, om in admin().list_consumer_group_offsets(group).items()}


def state(group):
    d = admin().describe_consumer_groups([group])[0]
    return d.state


def kaasctl_groups():
    """The group names kaasctl groups --volume-only --json shows."""
    import json
    import subprocess
    out = subprocess.run([KAASCTL, "--data", os.path.dirname(CLUSTER), "groups", "--volume-only",
                          "--json"], check=True, capture_output=True, timeout=60).stdout
    return [g["group"] for g in json.loads(out)["groups"]]


def no_trace(group, when):
    """A group that does not exist (never did, or deleted): Dead, not
    listed by ListGroups or kaasctl, no directory if it never existed."""
    if state(group) != "Dead":
        fail("%s: %s describes as %s, want Dead" % (when, group, state(group)))
    if group in [g[0] for g in admin().list_consumer_groups()]:
        fail("%s: %s listed by ListGroups" % (when, group))
    if group in kaasctl_groups():
        fail("%s: %s listed by kaasctl groups: %s" % (when, group, kaasctl_groups()))


def delete_group(group):
    res = admin().delete_consumer_groups([group])
    return res[0][1].errno if res[0][1] is not None else 0


def offset_delete(group, topic, parts):
    """OffsetDelete v0: (top error, {partition: error})."""
    body = kraw.string(group) + struct.pack(">i", 1) + kraw.string(topic)
    body += struct.pack(">i", len(parts)) + b"".join(struct.pack(">i", p) for p in parts)
    data = kraw.request(broker, 47, 0, body)
    err, throttle, nt = struct.unpack(">hii", data[:10])
    p = 10
    out = {}
    for _ in range(nt):
        (nl,) = struct.unpack(">h", data[p:p + 2])
        p += 2 + nl
        (np_,) = struct.unpack(">i", data[p:p + 4])
        p += 4
        for _ in range(np_):
            part, perr = struct.unpack(">ih", data[p:p + 6])
            p += 6
            out[part] = perr
    return err, out


if step == "setup":
    prod = KafkaProducer(bootstrap_servers=broker)
    for i in range(10):
        prod.send("t", b"m%d" % i, partition=i % 2)
    prod.flush()
    prod.close()
    commit("g1", {0: 3, 1: 4})
    commit("g3", {0: 1, 1: 2})
    if committed("g1") != {0: 3, 1: 4}:
        fail("g1 committed %s" % committed("g1"))
    print("setup: g1 and g3 committed offsets")
elif step == "delete":
    groups = [g[0] for g in admin().list_consumer_groups()]
    if "g1" not in groups:
        fail("g1 not listed before the delete: %s" % groups)
    # A group with a member cannot be deleted.
    c = KafkaConsumer("t", bootstrap_servers=broker, group_id="g2", auto_offset_reset="earliest",
                      consumer_timeout_ms=3000)
    end = time.time() + 20
    while not c.assignment() and time.time() < end:
        c.poll(200)
    if not c.assignment():
        fail("g2's consumer got no assignment")
    err = delete_group("g2")
    if err != NON_EMPTY_GROUP:
        fail("deleting g2 with a member: %s, want NON_EMPTY_GROUP" % err)
    # OffsetDelete of a topic g2's member subscribes to is refused per partition.
    err, parts = offset_delete("g2", "t", [0])
    if err or parts.get(0) != GROUP_SUBSCRIBED:
        fail("OffsetDelete while subscribed: %s %s" % (err, parts))
    c.close()
    err = delete_group("g1")
    if err:
        fail("deleting g1: %s" % err)
    if committed("g1"):
        fail("g1 still has offsets %s" % committed("g1"))
    groups = [g[0] for g in admin().list_consumer_groups()]
    if "g1" in groups:
        fail("g1 still listed: %s" % groups)
    no_trace("g1", "deleted")
    err = delete_group("g1")
    if err != GROUP_ID_NOT_FOUND:
        fail("deleting g1 again: %s, want GROUP_ID_NOT_FOUND" % err)
    # A group that never existed: GROUP_ID_NOT_FOUND, and nothing made.
    err = delete_group("never")
    if err != GROUP_ID_NOT_FOUND:
        fail("deleting a group that never existed: %s, want GROUP_ID_NOT_FOUND" % err)
    if os.path.exists(os.path.join(CLUSTER, "groups", "never")):
        fail("DeleteGroups of a group that never existed made %s" % os.path.join(CLUSTER, "groups", "never"))
    no_trace("never", "never existed, deleted")
    err, parts = offset_delete("g3", "t", [0, 7])
    if err or parts != {0: 0, 7: 3}:
        fail("OffsetDelete of g3 t/0 and t/7: %s %s" % (err, parts))
    if committed("g3") != {1: 2}:
        fail("g3 after OffsetDelete of t/0: %s" % committed("g3"))
    err, parts = offset_delete("nosuchgroup", "t", [0])
    if err != GROUP_ID_NOT_FOUND:
        fail("OffsetDelete of an unknown group: %s" % err)
    if os.path.exists(os.path.join(CLUSTER, "groups", "nosuchgroup")):
        fail("OffsetDelete of an unknown group made its directory")
    if committed("nosuchgroup2") or os.path.exists(os.path.join(CLUSTER, "groups", "nosuchgroup2")):
        fail("OffsetFetch of an unknown group made its directory")
    print("delete: NON_EMPTY_GROUP with a member, GROUP_SUBSCRIBED_TO_TOPIC, g1 deleted "
          "(not listed, no offsets, then GROUP_ID_NOT_FOUND), g3's t/0 deleted and t/1 kept")
elif step == "after-restart":
    if committed("g1") or committed("g3") != {1: 2}:
        fail("after a restart: g1 %s g3 %s" % (committed("g1"), committed("g3")))
    no_trace("g1", "deleted, after a restart")
    no_trace("never", "never existed, after a restart")
    print("after-restart: the deletes were durable")
else:
    fail("unknown step")
