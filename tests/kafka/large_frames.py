#!/usr/bin/env python3
"""large_frames.py HOST:PORT — requests of 256 KiB and more, which kaasd
reads straight into their own buffer once their head has arrived
(server/conn.c, BIG_FRAME), however they arrive: a frame whose size comes
alone and whose body trickles in small pieces, two large frames and a small
one in one send, a large frame in one send, then every record fetched back
byte for byte; and a connection that announces a large frame, sends part
of it and goes away, after which the broker still answers.

Exit 0 when all of it holds; 1 otherwise, with a FAIL line per problem."""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from kafka_schema import Reader, decode, encode  # noqa: E402
from kafka_messages import API  # noqa: E402
from api_versions_wire import record_batch, fetch_request  # noqa: E402

FAILS = []
TOPIC = "large-frames"
PRODUCE_V = 7  # classic: no tagged fields
FETCH_V = 11


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, flush=True)


def frame(name, v, values, corr):
    key, flex_from, req, _ = API[name]
    assert v < flex_from or name == "ApiVersions"
    msg = struct.pack(">hhi", key, v, corr) + struct.pack(">h", 5) + b"large" + bytes(
        encode(req, values, v, False))
    return struct.pack(">i", len(msg)) + msg


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionError("closed by the broker")
        b += c
    return b


def answer(s, name, v, corr):
    size = struct.unpack(">i", recv_exact(s, 4))[0]
    r = Reader(recv_exact(s, size))
    got = r.fixed("i")
    if got != corr:
        raise ConnectionError("correlation id %d, expected %d" % (got, corr))
    d = decode(API[name][3], r, v, False)
    r.done()
    return d


def values_of(seed, n, size):
    return [bytes([(seed + i + k) & 0xFF for k in range(256)]) * (size // 256) for i in range(n)]


def produce(values, corr):
    return frame("Produce", PRODUCE_V, {
        "TransactionalId": None, "Acks": -1, "TimeoutMs": 10000,
        "TopicData": [{"Name": TOPIC, "PartitionData": [
            {"Index": 0, "Records": record_batch(values)}]}]}, corr)


def base_offset(d):
    p = d["Responses"][0]["PartitionResponses"][0]
    if p["ErrorCode"] != 0:
        raise ValueError("produce error %d" % p["ErrorCode"])
    return p["BaseOffset"]


def zz(r):
    """A zigzag varint from Reader r."""
    n = r.uvarint()
    return (n >> 1) ^ -(n & 1)


def records_of(batches):
    """The values of every record of the record batches in `batches`."""
    out, at = [], 0
    while at + 61 <= len(batches):
        blen = struct.unpack(">i", batches[at + 8:at + 12])[0]
        b = batches[at:at + 12 + blen]
        if len(b) < 12 + blen:
            break
        n = struct.unpack(">i", b[57:61])[0]
        r = Reader(b[61:])
        for _ in range(n):
            zz(r)      # length
            r.take(1)  # attributes
            zz(r)      # timestamp delta
            zz(r)      # offset delta
            k = zz(r)
            if k > 0:
                r.take(k)
            out.append(bytes(r.take(zz(r))))
            for _ in range(zz(r)):  # headers
                r.take(zz(r))
                hv = zz(r)
                if hv > 0:
                    r.take(hv)
        at += 12 + blen
    return out


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    want = []

    s.sendall(frame("CreateTopics", 4, {"Topics": [{
        "Name": TOPIC, "NumPartitions": 1, "ReplicationFactor": 1, "Assignments": [],
        "Configs": []}], "TimeoutMs": 10000, "ValidateOnly": False}, 100))
    ct = answer(s, "CreateTopics", 4, 100)["Topics"][0]
    if ct["ErrorCode"] != 0:
        fail("CreateTopics: error %d" % ct["ErrorCode"])
        return 1

    # 1. The size alone, then 3 bytes, then the body in 7 KiB pieces (again
    # while the new partition's leader is not serving yet: errors 3 and 6).
    vals = values_of(1, 4, 255 * 1024)  # a batch just under max.message.bytes
    deadline = time.time() + 15
    while True:
        f = produce(vals, 1)
        s.sendall(f[:4])
        time.sleep(0.05)
        s.sendall(f[4:7])
        time.sleep(0.05)
        for at in range(7, len(f), 7 * 1024):
            s.sendall(f[at:at + 7 * 1024])
            if at % (70 * 1024) == 7:
                time.sleep(0.01)
        d = answer(s, "Produce", PRODUCE_V, 1)
        err = d["Responses"][0]["PartitionResponses"][0]["ErrorCode"]
        if err in (3, 6) and time.time() < deadline:
            time.sleep(0.2)
            continue
        break
    off = base_offset(d)
    if off != 0:
        fail("trickled frame: base offset %d, expected 0" % off)
    want += vals

    # 2. Two large frames and a small one in one send: three answers, in order.
    v2, v3 = values_of(2, 3, 128 * 1024), values_of(3, 5, 64 * 1024)
    small = frame("ApiVersions", 0, {}, 4)
    s.sendall(produce(v2, 2) + produce(v3, 3) + small)
    o2 = base_offset(answer(s, "Produce", PRODUCE_V, 2))
    o3 = base_offset(answer(s, "Produce", PRODUCE_V, 3))
    av = answer(s, "ApiVersions", 0, 4)
    if (o2, o3) != (4, 7):
        fail("pipelined frames: base offsets %d, %d, expected 4, 7" % (o2, o3))
    if av["ErrorCode"] != 0 or not av["ApiKeys"]:
        fail("the small frame behind two large ones: ApiVersions error %d" % av["ErrorCode"])
    want += v2 + v3

    # 3. A large frame in one send.
    v4 = values_of(4, 2, 400 * 1024)
    s.sendall(produce(v4, 5))
    if base_offset(answer(s, "Produce", PRODUCE_V, 5)) != 12:
        fail("large frame in one send: wrong base offset")
    want += v4

    # 4. Everything back, byte for byte.
    got, corr, offset = [], 10, 0
    while offset < len(want) and corr < 200:
        corr += 1
        s.sendall(frame("Fetch", FETCH_V, fetch_request(TOPIC, offset), corr))
        d = answer(s, "Fetch", FETCH_V, corr)
        p = d["Responses"][0]["Partitions"][0]
        if p["ErrorCode"] != 0:
            fail("fetch from %d: error %d" % (offset, p["ErrorCode"]))
            break
        recs = records_of(p["Records"] or b"")
        # a fetch answers whole batches from the one holding `offset`
        base = struct.unpack(">q", p["Records"][:8])[0] if recs else offset
        recs = recs[offset - base:]
        if not recs:
            break
        got += recs
        offset += len(recs)
    if got != want:
        fail("fetched %d records, %d equal to what was produced (of %d)" %
             (len(got), sum(1 for a, b in zip(got, want) if a == b), len(want)))
    s.close()

    # 5. A large frame announced, a part of it sent, the connection gone.
    t = socket.create_connection((host, int(port)), timeout=30)
    t.sendall(struct.pack(">i", 8 << 20) + b"\x00" * (100 * 1024))
    time.sleep(0.2)
    t.close()
    u = socket.create_connection((host, int(port)), timeout=30)
    u.sendall(frame("ApiVersions", 0, {}, 7))
    if answer(u, "ApiVersions", 0, 7)["ErrorCode"] != 0:
        fail("after a connection left in the middle of a large frame: ApiVersions failed")
    u.close()

    print("%d records of %d KiB in all, %d failures" %
          (len(want), sum(len(x) for x in want) >> 10, len(FAILS)), flush=True)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
