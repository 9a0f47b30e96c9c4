"""What a coordinator says of groups it took over (issue 33): raw
FindCoordinator v0, DescribeGroups v0 and ListGroups v0.

  group_state.py commit BOOTSTRAP TOPIC GROUP...
      each group commits TOPIC/0 at offset 3 (a standalone consumer)
  group_state.py check BROKER ID STATE GROUP...
      once BROKER (broker ID) coordinates every group (FindCoordinator names
      it), each group describes as STATE with no member, and ListGroups
      lists exactly the groups expected in STATE "Empty" (none for "Dead");
      COORDINATOR_LOAD_IN_PROGRESS (14), COORDINATOR_NOT_AVAILABLE (15) and
      NOT_COORDINATOR (16) are retried for 30 s
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import kraw  # noqa: E402

RETRIED = (14, 15, 16)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def rstr(data, p):
    (n,) = struct.unpack(">h", data[p:p + 2])
    p += 2
    if n < 0:
        return None, p
    return data[p:p + n].decode(), p + n


def rbytes(data, p):
    (n,) = struct.unpack(">i", data[p:p + 4])
    return p + 4 + max(n, 0)


def find_coordinator(broker, group):
    data = kraw.request(broker, 10, 0, kraw.string(group))
    err, node = struct.unpack(">hi", data[:6])
    return err, node


def describe(broker, groups):
    """{group: (error, state, members)}"""
    body = struct.pack(">i", len(groups)) + b"".join(kraw.string(g) for g in groups)
    data = kraw.request(broker, 15, 0, body)
    (n,) = struct.unpack(">i", data[:4])
    p, out = 4, {}
    for _ in range(n):
        (err,) = struct.unpack(">h", data[p:p + 2])
        p += 2
        gid, p = rstr(data, p)
        state, p = rstr(data, p)
        _, p = rstr(data, p)  # protocol type
        _, p = rstr(data, p)  # protocol
        (nm,) = struct.unpack(">i", data[p:p + 4])
        p += 4
        for _ in range(nm):
            for _ in range(3):
                _, p = rstr(data, p)
            p = rbytes(data, p)
            p = rbytes(data, p)
        out[gid] = (err, state, nm)
    return out


def list_groups(broker):
    data = kraw.request(broker, 16, 0, b"")
    err, n = struct.unpack(">hi", data[:6])
    p, out = 6, []
    for _ in range(n):
        gid, p = rstr(data, p)
        _, p = rstr(data, p)
        out.append(gid)
    return err, out


def commit(bootstrap, topic, groups):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    for g in groups:
        c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=g, enable_auto_commit=False)
        c.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, "")})
        c.close(autocommit=False)
    print("committed:", " ".join(groups))


def check(broker, me, want, groups):
    end = time.time() + 30
    last = None
    while True:
        try:
            coords = {g: find_coordinator(broker, g) for g in groups}
            if any(c != (0, me) for c in coords.values()):
                last = "coordinators %s" % coords
            else:
                desc = describe(broker, groups)
                err, listed = list_groups(broker)
                if any(d[0] in RETRIED for d in desc.values()) or err in RETRIED:
                    last = "describe %s, list error %d" % (desc, err)
                else:
                    break
        except (IOError, OSError) as e:
            last = "request failed: %s" % e
        if time.time() > end:
            fail("broker %d never coordinated all of %s: %s" % (me, groups, last))
        time.sleep(0.1)
    for g in groups:
        if desc.get(g) != (0, want, 0):
            fail("%s describes as %s, want (0, %r, 0 members); all: %s" % (g, desc.get(g), want, desc))
    if err:
        fail("ListGroups answered error %d" % err)
    expect = set(groups) if want == "Empty" else set()
    if set(listed) & set(groups) != expect:
        fail("ListGroups lists %s, want %s of %s" % (sorted(listed), sorted(expect), groups))
    print("broker %d: %s %s, listed %s" % (me, " ".join(groups), want, sorted(set(listed) & set(groups))))


step = sys.argv[1]
if step == "commit":
    commit(sys.argv[2], sys.argv[3], sys.argv[4:])
elif step == "check":
    check(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:])
else:
    fail("unknown step " + step)
