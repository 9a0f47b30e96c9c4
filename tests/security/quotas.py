"""quotas.py — client quotas on the raw wire (issue 35): the APIs
(DescribeClientQuotas 48, AlterClientQuotas 49, versions 0 and 1), the
throttle of a quota'd producer and consumer, and a quota followed by a
second broker.

  quotas.py wire BROKER            alter / describe / remove / errors
  quotas.py rate BROKER QUOTA SECS a producer held to QUOTA bytes/s beside an
                                   unquota'd one (prints the figures)
  quotas.py fetch BROKER QUOTA     a consumer throttled, its connection muted
  quotas.py follow B1 B2 HB_MS     altered through B1, enforced by B2
"""
import socket
import struct
import sys
import threading
import time

NONE, INVALID_REQUEST, CLUSTER_AUTH = 0, 42, 31


# ------------------------------------------------------------- encoding

def i8(v): return struct.pack(">b", v)
def i16(v): return struct.pack(">h", v)
def i32(v): return struct.pack(">i", v)
def i64(v): return struct.pack(">q", v)
def f64(v): return struct.pack(">d", v)


def uvarint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def varint(n):
    return uvarint((n << 1) ^ (n >> 63))


def string(s, flex):
    if s is None:
        return uvarint(0) if flex else i16(-1)
    b = s.encode()
    return (uvarint(len(b) + 1) if flex else i16(len(b))) + b


def array(items, flex):
    return (uvarint(len(items) + 1) if flex else i32(len(items))) + b"".join(items)


def tags(flex):
    return b"\x00" if flex else b""


class Reader:
    def __init__(self, data, flex):
        self.d, self.p, self.flex = data, 0, flex

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.d, self.p)[0]
        self.p += struct.calcsize(fmt)
        return v

    def uvarint(self):
        n = shift = 0
        while True:
            b = self.d[self.p]
            self.p += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    def string(self):
        n = self.uvarint() - 1 if self.flex else self.take(">h")
        if n < 0:
            return None
        s = self.d[self.p:self.p + n].decode()
        self.p += n
        return s

    def array_len(self):
        return self.uvarint() - 1 if self.flex else self.take(">i")

    def tags(self):
        if self.flex:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.p += self.uvarint()


_CRC = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def record_batch(value):
    """A RecordBatch v2 of one record (the broker assigns the offset; the
    same bytes may be sent again and again)."""
    now = int(time.time() * 1000)
    rec = i8(0) + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value + varint(0)
    rec = varint(len(rec)) + rec
    after_crc = (i16(0) + i32(0) + i64(now) + i64(now) + i64(-1) + i16(-1) + i32(-1) +
                 i32(1) + rec)
    body = i32(-1) + i8(2) + struct.pack(">I", crc32c(after_crc)) + after_crc
    return i64(0) + i32(len(body)) + body


# ----------------------------------------------------------- connection

class Conn:
    """One connection; requests answered in order.  Header v1 (v2 for
    flexible versions)."""

    def __init__(self, broker, client_id, timeout=30):
        host, port = broker.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self.corr = 0

    def send(self, key, version, body, flex=False):
        self.corr += 1
        hdr = i16(key) + i16(version) + i32(self.corr) + string(self.client_id, False)
        if flex:
            hdr += b"\x00"
        self.s.sendall(i32(len(hdr) + len(body)) + hdr + body)
        return self.corr

    def recv(self, flex=False):
        size = struct.unpack(">i", self.exact(4))[0]
        data = self.exact(size)
        corr = struct.unpack(">i", data[:4])[0]
        if corr != self.corr:
            raise IOError("correlation %d, want %d" % (corr, self.corr))
        return data[5:] if flex else data[4:]

    def exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise IOError("connection closed by the broker")
            out += chunk
        return out

    def call(self, key, version, body, flex=False):
        self.send(key, version, body, flex)
        return self.recv(flex)

    def close(self):
        self.s.close()


# ---------------------------------------------------------- the quota APIs

def alter(c, entries, v=1, validate_only=False):
    """entries: [([(type, name)], [(key, value, remove)])] -> [(err, msg,
    [(type, name)])]"""
    flex = v >= 1
    body = array([array([string(t, flex) + string(n, flex) + tags(flex) for t, n in ent], flex) +
                  array([string(k, flex) + f64(val) + i8(1 if rm else 0) + tags(flex)
                         for k, val, rm in ops], flex) + tags(flex)
                  for ent, ops in entries], flex) + i8(1 if validate_only else 0) + tags(flex)
    r = Reader(c.call(49, v, body, flex), flex)
    throttle = r.take(">i")
    assert throttle == 0, throttle
    out = []
    for _ in range(r.array_len()):
        err, msg = r.take(">h"), r.string()
        ent = []
        for _ in range(r.array_len()):
            ent.append((r.string(), r.string()))
            r.tags()
        r.tags()
        out.append((err, msg, ent))
    r.tags()
    return out


def describe(c, components, strict=False, v=1):
    """components: [(type, match_type, match)] -> (err, msg, {entity: {key: value}})
    where entity is a tuple of sorted (type, name)."""
    flex = v >= 1
    body = array([string(t, flex) + i8(mt) + string(m, flex) + tags(flex)
                  for t, mt, m in components], flex) + i8(1 if strict else 0) + tags(flex)
    r = Reader(c.call(48, v, body, flex), flex)
    r.take(">i")
    err, msg = r.take(">h"), r.string()
    n = r.array_len()
    found = {}
    for _ in range(max(n, 0)):
        ent = []
        for _ in range(r.array_len()):
            ent.append((r.string(), r.string()))
            r.tags()
        vals = {}
        for _ in range(r.array_len()):
            k = r.string()
            vals[k] = r.take(">d")
            r.tags()
        r.tags()
        found[tuple(sorted(ent, key=lambda x: x[0]))] = vals
    r.tags()
    return err, msg, (found if n >= 0 else None)


def check(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)


def wire(broker):
    c = Conn(broker, "quota-admin")
    U, C = "user", "client-id"
    for v in (0, 1):
        # Set: a user, a client id, both, and the defaults.
        res = alter(c, [([(U, "alice")], [("producer_byte_rate", 1048576, False),
                                          ("consumer_byte_rate", 2097152, False)]),
                        ([(C, "app")], [("request_percentage", 12.5, False)]),
                        ([(U, "alice"), (C, "app")], [("producer_byte_rate", 4096, False)]),
                        ([(U, None)], [("consumer_byte_rate", 100000, False)]),
                        ([(U, None), (C, None)], [("controller_mutation_rate", 3.5, False)]),
                        ([(C, None)], [("producer_byte_rate", 65536, False)])], v=v)
        check([e for e, _, _ in res] == [0] * 6, "v%d alter: %r" % (v, res))
        check(res[2][2] == [(U, "alice"), (C, "app")] and res[3][2] == [(U, None)],
              "v%d alter echoes the entities: %r" % (v, res))
        err, _, found = describe(c, [], v=v)
        check(err == 0, "v%d describe all: error %d" % (v, err))
        want = {((U, "alice"),): {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 2097152.0},
                ((C, "app"),): {"request_percentage": 12.5},
                ((C, "app"), (U, "alice")): {"producer_byte_rate": 4096.0},
                ((U, None),): {"consumer_byte_rate": 100000.0},
                ((C, None), (U, None)): {"controller_mutation_rate": 3.5},
                ((C, None),): {"producer_byte_rate": 65536.0}}
        check(found == want, "v%d describe all: %r" % (v, found))
        # Filters: exact, default, specified; strict.
        _, _, f = describe(c, [(U, 0, "alice")], v=v)
        check(set(f) == {((U, "alice"),), ((C, "app"), (U, "alice"))}, "exact user: %r" % f)
        _, _, f = describe(c, [(U, 0, "alice")], strict=True, v=v)
        check(set(f) == {((U, "alice"),)}, "exact user, strict: %r" % f)
        _, _, f = describe(c, [(U, 1, None)], v=v)
        check(set(f) == {((U, None),), ((C, None), (U, None))}, "default user: %r" % f)
        _, _, f = describe(c, [(C, 2, None)], strict=True, v=v)
        check(set(f) == {((C, "app"),), ((C, None),)}, "specified client, strict: %r" % f)
        _, _, f = describe(c, [(U, 2, None), (C, 1, None)], v=v)
        check(set(f) == {((C, None), (U, None))}, "specified user + default client: %r" % f)
        # Remove one key, then every key of an entity (the entity goes).
        res = alter(c, [([(U, "alice")], [("consumer_byte_rate", 0, True)]),
                        ([(C, "app")], [("request_percentage", 0, True)])], v=v)
        check([e for e, _, _ in res] == [0, 0], "v%d remove: %r" % (v, res))
        _, _, f = describe(c, [], v=v)
        check(f.get(((U, "alice"),)) == {"producer_byte_rate": 1048576.0} and
              ((C, "app"),) not in f, "v%d after removal: %r" % (v, f))
        # Removing what is not there is no error (Kafka's answer too).
        res = alter(c, [([(C, "nobody")], [("producer_byte_rate", 0, True)])], v=v)
        check(res[0][0] == 0, "removing an absent quota: %r" % res)
        # validate_only writes nothing.
        res = alter(c, [([(U, "bob")], [("producer_byte_rate", 5000, False)])], v=v,
                    validate_only=True)
        check(res[0][0] == 0, "validate only: %r" % res)
        _, _, f = describe(c, [(U, 0, "bob")], v=v)
        check(f == {}, "validate_only wrote: %r" % f)
        # Errors, entry by entry (the others still applied).
        res = alter(c, [([("group", "g")], [("producer_byte_rate", 1, False)]),
                        ([(U, "bob")], [("no_such_rate", 1, False)]),
                        ([(U, "bob")], [("producer_byte_rate", 1.5, False)]),
                        ([(U, "bob")], [("producer_byte_rate", -5, False)]),
                        ([(U, "bob"), (U, "carol")], [("producer_byte_rate", 1, False)]),
                        ([], [("producer_byte_rate", 1, False)]),
                        ([("ip", "10.0.0.1")], [("connection_creation_rate", 5, False)]),
                        ([(U, "")], [("producer_byte_rate", 1, False)]),
                        ([(U, "dave")], [("producer_byte_rate", 777, False)])], v=v)
        errs = [e for e, _, _ in res]
        check(errs == [INVALID_REQUEST] * 8 + [0], "v%d bad entries: %r" % (v, res))
        check(all(m for _, m, _ in res[:8]) and res[8][1] is None, "messages: %r" % res)
        err, msg, f = describe(c, [("group", 0, "g")], v=v)
        check(err == INVALID_REQUEST and f is None and msg, "bad filter type: %r" % ((err, msg),))
        err, _, _ = describe(c, [(U, 0, None)], v=v)
        check(err == INVALID_REQUEST, "exact match without a name: %d" % err)
        err, _, _ = describe(c, [(U, 0, "a"), (U, 1, None)], v=v)
        check(err == INVALID_REQUEST, "a type twice: %d" % err)
        err, _, _ = describe(c, [(U, 7, None)], v=v)
        check(err == INVALID_REQUEST, "bad match type: %d" % err)
        err, _, f = describe(c, [(U, 0, "dave")], v=v)
        check(err == 0 and f == {((U, "dave"),): {"producer_byte_rate": 777.0}}, "dave: %r" % f)
        # Clean up for the next version.
        _, _, f = describe(c, [], v=v)
        res = alter(c, [([(t, n) for t, n in ent], [(k, 0, True) for k in vals])
                        for ent, vals in f.items()], v=v)
        check(all(e == 0 for e, _, _ in res), "clean up: %r" % res)
        _, _, f = describe(c, [], v=v)
        check(f == {}, "v%d: left after removing all: %r" % (v, f))
        print("v%d: alter, describe, filters, removal and errors as Kafka" % v)
    c.close()


# ------------------------------------------------------------- throttling

def create_topic(broker, topic, parts=1):
    c = Conn(broker, "quota-admin")
    body = array([string(topic, False) + i32(parts) + i16(1) + i32(0) + i32(0)], False) + i32(10000)
    r = Reader(c.call(19, 0, body), False)
    r.array_len()
    r.string()
    err = r.take(">h")
    c.close()
    check(err in (0, 36), "CreateTopics %s: error %d" % (topic, err))


def produce(c, topic, batch, part=0):
    """One Produce v3 (acks 1): (error, throttle_ms)."""
    body = (string(None, False) + i16(1) + i32(30000) +
            array([string(topic, False) + array([i32(part) + i32(len(batch)) + batch], False)],
                  False))
    r = Reader(c.call(0, 3, body), False)
    r.array_len()
    r.string()
    r.array_len()
    r.take(">i")
    err = r.take(">h")
    r.take(">q")
    r.take(">q")
    return err, r.take(">i")


class Producer(threading.Thread):
    """Produce batch after batch for secs (paced to `pace` bytes/s, or as
    fast as answered); log (time, bytes acked so far)."""

    def __init__(self, broker, client_id, topic, batch, secs, pace=None):
        super().__init__(daemon=True)
        self.c = Conn(broker, client_id)
        self.topic, self.batch, self.secs, self.pace = topic, batch, secs, pace
        self.log, self.throttles, self.errors = [], [], []

    def run(self):
        try:
            start = time.monotonic()
            acked = 0
            while time.monotonic() - start < self.secs:
                if self.pace:
                    due = start + acked / self.pace
                    if due > time.monotonic():
                        time.sleep(due - time.monotonic())
                sent = time.monotonic()
                err, thr = produce(self.c, self.topic, self.batch)
                if err:
                    self.errors.append(err)
                    continue
                acked += len(self.batch)
                self.throttles.append((sent, thr))
                self.log.append((time.monotonic(), acked))
        except Exception as e:  # reported by the main thread
            self.errors.append(repr(e))

    def acked_at(self, t):
        last = 0
        for when, acked in self.log:
            if when > t:
                break
            last = acked
        return last


def rate(broker, quota, secs):
    quota, secs = float(quota), float(secs)
    topic = "quota-rate"
    create_topic(broker, topic)
    admin = Conn(broker, "quota-admin")
    res = alter(admin, [([("client-id", "slow")], [("producer_byte_rate", quota, False)])])
    check(res[0][0] == 0, "alter: %r" % res)
    batch = record_batch(b"q" * 16000)
    # The unquota'd producer asks for eight times the quota (paced, so as
    # not to fill the disk): it must get all of it, never throttled.
    pace = 8 * quota
    slow = Producer(broker, "slow", topic, batch, secs)
    fast = Producer(broker, "fast", topic, batch, secs, pace)
    slow.start()
    fast.start()
    slow.join(secs + 60)
    fast.join(secs + 60)
    check(not slow.errors and not fast.errors, "errors: %r %r" % (slow.errors, fast.errors))
    t0 = slow.throttles[0][0]
    # Kafka's rate (quota.window.num 11 x 1 s) lets the first burst in
    # whole: up to ten windows' worth before the first throttle.  After it
    # the quota holds over every span of the eleven windows: measured over
    # one such span, from the middle of one sample period to the middle of
    # the next (the bytes freed when a sample leaves the window arrive at
    # once, at its start).
    span = 11.0
    a, b = t0 + 5.5, t0 + 5.5 + span
    check(slow.log[-1][0] >= b, "the producer stopped before the measured span")
    held = (slow.acked_at(b) - slow.acked_at(a)) / span
    whole = slow.log[-1][1] / (slow.log[-1][0] - t0)
    fast_rate = fast.log[-1][1] / (fast.log[-1][0] - fast.throttles[0][0] + len(batch) / pace)
    throttled = [t for _, t in slow.throttles if t > 0]
    print("quota %.0f B/s: held %.0f B/s over %.0f s (%.1f%%), whole run %.0f B/s (the first "
          "burst included); %d of %d answers throttled (max %d ms); unquota'd %.0f B/s "
          "(asked %.0f), %d answers, none throttled: %s"
          % (quota, held, span, 100.0 * (held - quota) / quota, whole, len(throttled),
             len(slow.throttles), max(throttled or [0]), fast_rate, pace, len(fast.throttles),
             all(t == 0 for _, t in fast.throttles)))
    check(abs(held - quota) <= 0.10 * quota, "held rate %.0f is not within 10%% of %.0f"
          % (held, quota))
    check(throttled, "no throttle time was ever answered")
    check(all(t == 0 for _, t in fast.throttles), "the unquota'd producer was throttled")
    check(fast_rate >= 0.9 * pace, "the unquota'd producer got %.0f B/s of the %.0f it asked"
          % (fast_rate, pace))
    alter(admin, [([("client-id", "slow")], [("producer_byte_rate", 0, True)])])
    admin.close()


def fetch_once(c, topic, max_bytes):
    """One Fetch v4 of topic/0 from offset 0: (throttle_ms, topics answered,
    response bytes, seconds waited)."""
    body = (i32(-1) + i32(0) + i32(0) + i32(max_bytes) + i8(0) +
            array([string(topic, False) + array([i32(0) + i64(0) + i32(max_bytes)], False)], False))
    t = time.monotonic()
    data = c.call(1, 4, body)
    thr, ntopics = struct.unpack(">ii", data[:8])
    return thr, ntopics, len(data), time.monotonic() - t


def fetch(broker, quota):
    """A consumer over its consumer_byte_rate is answered, as Kafka, with no
    partitions and the throttle time (the bytes not counted), and its
    connection is muted for that time; another client id is neither
    throttled nor slowed; and under a quota one response holds at most the
    quota's window less a sample (Kafka's bound on max_bytes)."""
    quota = float(quota)
    topic = "quota-fetch"
    create_topic(broker, topic)
    p = Conn(broker, "filler")
    batch = record_batch(b"f" * 60000)
    for _ in range(20):
        check(produce(p, topic, batch)[0] == 0, "filling")
    p.close()
    admin = Conn(broker, "quota-admin")
    check(alter(admin, [([("client-id", "slowc")], [("consumer_byte_rate", quota, False)]),
                        ([("client-id", "tinyc")], [("consumer_byte_rate", 10000, False)])])
          == [(0, None, [("client-id", "slowc")]), (0, None, [("client-id", "tinyc")])],
          "alter")
    c, other = Conn(broker, "slowc"), Conn(broker, "fastc")
    served = 0
    for i in range(60):
        thr, ntopics, size, _ = fetch_once(c, topic, 1 << 20)
        if thr:
            break
        check(ntopics == 1, "an unthrottled fetch answered %d topics" % ntopics)
        served += size
    check(thr > 0, "no throttle after %d fetches" % (i + 1))
    check(ntopics == 0, "a throttled fetch answered %d topics (Kafka: none)" % ntopics)
    t_other = fetch_once(other, topic, 1 << 20)
    check(t_other[0] == 0 and t_other[1] == 1, "the other client id: %r" % (t_other,))
    thr2, n2, size2, waited = fetch_once(c, topic, 1 << 20)
    print("consumer at %.0f B/s: %d fetches (%d bytes) served, then throttled %d ms with no "
          "partitions; its next fetch answered after %.0f ms (muted; throttle %d, %d topics); "
          "the other client id in %.0f ms, not throttled"
          % (quota, i, served, thr, waited * 1000, thr2, n2, t_other[3] * 1000))
    check(waited * 1000 >= thr * 0.9, "the connection was not muted (%.0f ms < %d ms)"
          % (waited * 1000, thr))
    check(served >= 9 * quota, "only %d bytes before the first throttle" % served)
    tiny = Conn(broker, "tinyc")
    thr, ntopics, size, _ = fetch_once(tiny, topic, 1 << 20)
    print("consumer at 10000 B/s asking 1 MiB: answered %d bytes (the window less a sample: "
          "100000), throttle %d" % (size, thr))
    check(ntopics == 1 and 60000 < size <= 100000 + 200, "the quota did not bound max_bytes")
    alter(admin, [([("client-id", "slowc")], [("consumer_byte_rate", 0, True)]),
                  ([("client-id", "tinyc")], [("consumer_byte_rate", 0, True)])])
    admin.close()


# ----------------------------------------------------------------- follow

def leaders(broker, topic):
    """{partition: leader id} from a Metadata v1 of one topic."""
    c = Conn(broker, "quota-admin")
    r = Reader(c.call(3, 1, array([string(topic, False)], False)), False)
    c.close()
    for _ in range(r.array_len()):
        r.take(">i"), r.string(), r.take(">i"), r.string()
    r.take(">i")
    out = {}
    for _ in range(r.array_len()):
        r.take(">h"), r.string(), r.take(">b")
        for _ in range(r.array_len()):
            r.take(">h")
            part, leader = r.take(">i"), r.take(">i")
            for _ in range(2):
                for _ in range(r.array_len()):
                    r.take(">i")
            out[part] = leader
    return out


def part_led_by(broker, topic, broker_id):
    """A partition of topic whose leader is broker_id (waits for one)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for part, leader in sorted(leaders(broker, topic).items()):
            if leader == broker_id:
                return part
        time.sleep(0.1)
    check(False, "no partition of %s is led by broker %d" % (topic, broker_id))

def follow(b1, b2, hb_ms):
    """A quota altered through b1 throttles on b2 within a heartbeat (plus
    the time to notice); its removal likewise."""
    hb = float(hb_ms) / 1000
    topic = "quota-follow"
    create_topic(b2, topic, parts=4)
    part = part_led_by(b2, topic, 2)
    batch = record_batch(b"w" * 16000)
    p = Conn(b2, "followed")
    for _ in range(5):
        err, thr = produce(p, topic, batch, part)
        check(err == 0 and thr == 0, "before the quota: %r" % ((err, thr),))
    admin = Conn(b1, "quota-admin")
    t = time.monotonic()
    check(alter(admin, [([("client-id", "followed")], [("producer_byte_rate", 1000, False)])])[0][0]
          == 0, "alter through broker 1")
    seen = None
    while time.monotonic() - t < 30:
        err, thr = produce(p, topic, batch, part)
        check(err == 0, "produce error %d" % err)
        if thr > 0:
            seen = time.monotonic() - t
            break
        time.sleep(0.005)
    check(seen is not None, "broker 2 never throttled")
    d = Conn(b2, "quota-admin")
    _, _, f = describe(d, [("client-id", 0, "followed")])
    check(f == {(("client-id", "followed"),): {"producer_byte_rate": 1000.0}},
          "broker 2 describes %r" % f)
    t = time.monotonic()
    check(alter(admin, [([("client-id", "followed")], [("producer_byte_rate", 0, True)])])[0][0]
          == 0, "removal through broker 1")
    gone = None
    while time.monotonic() - t < 30:
        # A fresh connection each time: a throttled one stays muted a while.
        p2 = Conn(b2, "followed")
        err, thr = produce(p2, topic, batch, part)
        p2.close()
        check(err == 0, "produce error %d" % err)
        if thr == 0:
            gone = time.monotonic() - t
            break
        time.sleep(0.01)
    check(gone is not None, "broker 2 kept throttling after the removal")
    print("broker 2 throttled %.0f ms after the alter through broker 1, stopped %.0f ms after "
          "the removal (heartbeat %.0f ms)" % (seen * 1000, gone * 1000, hb * 1000))
    check(seen <= 2 * hb + 1.0 and gone <= 2 * hb + 1.0, "slower than a heartbeat")


def main():
    cmd = sys.argv[1]
    if cmd == "wire":
        wire(sys.argv[2])
    elif cmd == "rate":
        rate(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "fetch":
        fetch(sys.argv[2], sys.argv[3])
    elif cmd == "follow":
        follow(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: see the top of quotas.py")


if __name__ == "__main__":
    main()
