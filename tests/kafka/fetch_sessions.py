#!/usr/bin/env python3
"""fetch_sessions.py HOST:PORT [noslots] — KIP-227 fetch sessions on the
raw wire (Fetch v12, kafka_messages.py's codec): a full fetch at epoch 0
opens a session; incremental fetches leave out partitions with nothing
new, carry the ones with new records, honour forgotten partitions and
partitions added later; a stale epoch is INVALID_FETCH_SESSION_EPOCH (71),
an unknown session FETCH_SESSION_ID_NOT_FOUND (70); epoch -1 closes a
session.  Also: pipelined fetches on one connection (a long poll first, an
immediate one after it) are answered in request order.  With `noslots`
(kaasd --fetch-session-slots 0) a full fetch gets session id 0; with
`oneslot` (--fetch-session-slots 1) the eviction rule.

Exit 0 when every step holds; 1 otherwise, with FAIL lines."""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from api_versions_wire import Conn, record_batch  # noqa: E402
from kafka_schema import encode, uvarint  # noqa: E402
from kafka_messages import API  # noqa: E402

FAILS = []
T = "fs"
V = 12


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def fetch(c, sid, epoch, parts, forgotten=(), wait=0, min_bytes=0, max_bytes=1 << 20):
    """Fetch v12 of (partition, offset) pairs of T; forgotten: partitions."""
    d = c.call("Fetch", V, {
        "ReplicaId": -1, "MaxWaitMs": wait, "MinBytes": min_bytes, "MaxBytes": max_bytes,
        "IsolationLevel": 0, "SessionId": sid, "SessionEpoch": epoch, "RackId": "",
        "Topics": [{"Topic": T, "Partitions": [
            {"Partition": p, "CurrentLeaderEpoch": -1, "FetchOffset": o, "LastFetchedEpoch": -1,
             "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20} for p, o in parts]}]
        if parts else [],
        "ForgottenTopicsData": [{"Topic": T, "Partitions": list(forgotten)}] if forgotten else []})
    if d is None:
        raise SystemExit("FAIL: connection closed on a fetch")
    return d


def parts_of(d):
    """{partition: (error, high watermark, record bytes)} of T in answer d."""
    out = {}
    for t in d["Responses"]:
        check(t["Topic"] == T, "answer names topic %r" % t["Topic"])
        for p in t["Partitions"]:
            out[p["PartitionIndex"]] = (p["ErrorCode"], p["HighWatermark"], p["Records"] or b"")
    return out


def produce(c, part, value):
    d = c.call("Produce", 9, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 5000,
                              "TopicData": [{"Name": T, "PartitionData": [
                                  {"Index": part, "Records": record_batch([value])}]}]})
    p = d["Responses"][0]["PartitionResponses"][0]
    if not check(p["ErrorCode"] == 0, "produce to %d: error %d" % (part, p["ErrorCode"])):
        raise SystemExit(1)


def setup(c):
    d = c.call("CreateTopics", 5, {
        "Topics": [{"Name": T, "NumPartitions": 3, "ReplicationFactor": -1,
                    "Assignments": [], "Configs": []}], "TimeoutMs": 5000, "ValidateOnly": False})
    check(d["Topics"][0]["ErrorCode"] == 0, "create %s: %r" % (T, d))
    deadline = time.time() + 60
    while True:  # until every partition is led
        d = c.call("Metadata", 12, {"Topics": [{"TopicId": bytes(16), "Name": T}],
                                    "AllowAutoTopicCreation": False,
                                    "IncludeTopicAuthorizedOperations": False})
        ps = d["Topics"][0]["Partitions"]
        if len(ps) == 3 and all(p["ErrorCode"] == 0 and p["LeaderId"] >= 0 for p in ps):
            break
        if time.time() > deadline:
            raise SystemExit("FAIL: %s not led after 60 s" % T)
        time.sleep(0.2)
    for p in range(3):
        produce(c, p, b"first-%d" % p)


def sessions(c):
    # A full fetch at epoch 0 opens a session and answers every partition.
    d = fetch(c, 0, 0, [(0, 0), (1, 0), (2, 0)])
    ps = parts_of(d)
    sid = d["SessionId"]
    check(d["ErrorCode"] == 0, "full fetch: error %d" % d["ErrorCode"])
    if not check(sid != 0, "full fetch at epoch 0: no session (session id 0)"):
        return
    check(sorted(ps) == [0, 1, 2] and all(e == 0 and hw == 1 and len(r) > 61
                                          for e, hw, r in ps.values()),
          "full fetch: every partition with its record: %r" % ps)

    # Incremental, positions moved past the records: nothing new, no partitions.
    d = fetch(c, sid, 1, [(0, 1), (1, 1), (2, 1)])
    check(d["ErrorCode"] == 0 and d["SessionId"] == sid, "epoch 1: %r" % d)
    check(parts_of(d) == {}, "epoch 1: unchanged partitions answered: %r" % parts_of(d))

    # New data on partition 1 only: only it comes back, without naming it.
    produce(c, 1, b"second-1")
    d = fetch(c, sid, 2, [], wait=2000, min_bytes=1)
    ps = parts_of(d)
    check(d["ErrorCode"] == 0 and d["SessionId"] == sid, "epoch 2: %r" % d)
    check(list(ps) == [1] and ps[1][1] == 2 and len(ps[1][2]) > 61 and
          struct.unpack(">q", ps[1][2][:8])[0] == 1,
          "epoch 2: partition 1's new record alone: %r" % ps)

    # The same epoch again: INVALID_FETCH_SESSION_EPOCH, no partitions.
    d = fetch(c, sid, 2, [(1, 2)])
    check(d["ErrorCode"] == 71 and d["Responses"] == [] and d["SessionId"] == 0,
          "stale epoch 2: want error 71: %r" % d)
    # A session nobody opened: FETCH_SESSION_ID_NOT_FOUND.
    other = sid + 1 if sid < 0x7fffffff else 1
    d = fetch(c, other, 1, [(0, 1)])
    check(d["ErrorCode"] == 70 and d["Responses"] == [], "unknown session: want 70: %r" % d)

    # Forget partition 1 (data arrives on it and on 0): only 0 is answered.
    d = fetch(c, sid, 3, [(1, 2)], forgotten=[1])
    check(d["ErrorCode"] == 0 and parts_of(d) == {}, "epoch 3 (forget 1): %r" % d)
    produce(c, 1, b"third-1")
    produce(c, 0, b"second-0")
    d = fetch(c, sid, 4, [])
    ps = parts_of(d)
    check(list(ps) == [0] and ps[0][1] == 2 and len(ps[0][2]) > 61,
          "epoch 4: forgotten partition 1 answered, or 0 missing: %r" % ps)
    # Partition 1 named again: it is back, answered at once (new to the session).
    d = fetch(c, sid, 5, [(0, 2), (1, 2)])
    ps = parts_of(d)
    check(list(ps) == [1] and ps[1][1] == 3 and len(ps[1][2]) > 61 and
          struct.unpack(">q", ps[1][2][:8])[0] == 2,
          "epoch 5: re-added partition 1, its record at 2: %r" % ps)

    # Fairness: a partition that returned records moves to the end of the
    # session, so with room for one batch the next one gets its turn
    # (session order now 2, 0, 1; both 0 and 1 have more than a batch).
    produce(c, 0, b"third-0")
    produce(c, 0, b"fourth-0")
    produce(c, 1, b"fourth-1")
    d = fetch(c, sid, 6, [(1, 3)], max_bytes=1)
    ps = parts_of(d)
    check(sorted(ps) == [0, 1] and len(ps[0][2]) > 61 and ps[1][2] == b"" and
          struct.unpack(">q", ps[0][2][:8])[0] == 2,
          "epoch 6: partition 0's batch at 2 alone: %r" % ps)
    d = fetch(c, sid, 7, [(0, 3)], max_bytes=1)
    ps = parts_of(d)
    check(list(ps) == [1] and len(ps[1][2]) > 61 and struct.unpack(">q", ps[1][2][:8])[0] == 3,
          "epoch 7: partition 1 (after 0 moved to the end) first: %r" % ps)

    # Epoch -1 closes the session: a full sessionless answer, then 70.
    d = fetch(c, sid, -1, [(2, 1)])
    check(d["ErrorCode"] == 0 and d["SessionId"] == 0 and list(parts_of(d)) == [2],
          "close (epoch -1): %r" % d)
    d = fetch(c, sid, 8, [])
    check(d["ErrorCode"] == 70, "closed session still answers: %r" % d)


def eviction(c):
    """One slot (kaasd --fetch-session-slots 1): a session of more
    partitions takes the slot of one with fewer; a busy session of more
    partitions keeps its slot against one with fewer."""
    small = fetch(c, 0, 0, [(0, 0)])["SessionId"]
    check(small != 0, "one slot: no first session")
    big = fetch(c, 0, 0, [(0, 0), (1, 0), (2, 0)])["SessionId"]
    check(big != 0 and big != small, "one slot: the larger session not made")
    check(fetch(c, small, 1, [])["ErrorCode"] == 70, "one slot: the evicted session still answers")
    d = fetch(c, big, 1, [(0, 1), (1, 1), (2, 1)])
    check(d["ErrorCode"] == 0 and d["SessionId"] == big and parts_of(d) == {},
          "one slot: the larger session lost: %r" % d)
    d = fetch(c, 0, 0, [(0, 0)])
    check(d["ErrorCode"] == 0 and d["SessionId"] == 0 and list(parts_of(d)) == [0],
          "one slot: a smaller session evicted a larger busy one: %r" % d)
    check(fetch(c, big, 2, [])["ErrorCode"] == 0, "one slot: the larger session gone")


def pipeline(c):
    """A long poll (nothing to read at the end of partition 2) then an
    immediate fetch, in one write: the answers keep request order."""
    key, flex_from, req, _ = API["Fetch"]
    frames = b""
    for corr, wait in ((9001, 1500), (9002, 0)):
        hdr = struct.pack(">hhih", key, V, corr, 4) + b"pipe" + uvarint(0)
        body = encode(req, {
            "ReplicaId": -1, "MaxWaitMs": wait, "MinBytes": 1, "MaxBytes": 1 << 20,
            "IsolationLevel": 0, "SessionId": 0, "SessionEpoch": -1, "RackId": "",
            "Topics": [{"Topic": T, "Partitions": [
                {"Partition": 2, "CurrentLeaderEpoch": -1, "FetchOffset": 1,
                 "LastFetchedEpoch": -1, "LogStartOffset": -1, "PartitionMaxBytes": 1024}]}],
            "ForgottenTopicsData": []}, V, True) + uvarint(0)
        msg = hdr + bytes(body)
        frames += struct.pack(">i", len(msg)) + msg
    t0 = time.time()
    c.s.sendall(frames)
    got = []
    for _ in range(2):
        size = struct.unpack(">i", c.recv(4))[0]
        got.append(struct.unpack(">i", c.recv(size)[:4])[0])
    check(got == [9001, 9002], "pipelined fetches answered out of order: %r" % got)
    check(time.time() - t0 >= 1.0, "the long poll did not wait")


def main():
    c = Conn(sys.argv[1])
    setup(c)
    if len(sys.argv) > 2 and sys.argv[2] == "noslots":
        d = fetch(c, 0, 0, [(0, 0)])
        check(d["ErrorCode"] == 0 and d["SessionId"] == 0 and list(parts_of(d)) == [0],
              "no slots: %r" % d)
        d = fetch(c, 12345, 1, [])
        check(d["ErrorCode"] == 70, "no slots, incremental: want 70: %r" % d)
    elif len(sys.argv) > 2 and sys.argv[2] == "oneslot":
        eviction(c)
    else:
        sessions(c)
        pipeline(c)
    print("FAIL" if FAILS else "ok", flush=True)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
