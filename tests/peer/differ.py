#!/usr/bin/env python3
"""differ.py KAFKA_HOST:PORT KAAS_HOST:PORT DIFFERENCES.md [--only SCENARIO,...]
          [--sasl KAFKA_SASL_HOST:PORT,KAAS_SASL_HOST:PORT]

Differential conformance (issue 34): the same client session, request by
request, against Apache Kafka and against kaas, and the two normalized
answers compared.  Requests are encoded and answers decoded with the test
suite's own codec (tests/kafka/kafka_schema.py, kafka_messages.py).

Every scenario runs twice, at the "lo" level (each API at the lowest version
both brokers serve) and at the "hi" level (the highest both serve).  An
answer is normalized (what is the broker's own choice, such as a member id,
a producer id, a port, a path or an error message's wording, becomes a
placeholder; lists of named things become maps by name) and flattened to
paths such as

    groups.hi/heartbeat-wrong-generation/ErrorCode = 22

Each differing path must match a `peer: GLOB` entry of DIFFERENCES.md (the
user's list of where kaas answers differently, each with its reason);
entries under the heading "Known wrong answers, to fix" are kaas bugs,
reported as KNOWN-WRONG.  An unlisted difference fails the run.

Exit 0 when every difference is listed; 1 otherwise."""
import base64
import fnmatch
import gzip
import hashlib
import hmac
import os
import re
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
from kafka_schema import Reader, Short, varint, uvarint  # noqa: E402
from kafka_messages import API  # noqa: E402
from api_versions_wire import Conn, crc32c  # noqa: E402

# The records' timestamps: TS + their offset within the batch, the same in
# both brokers' runs.  Recent, so that no retention removes them (Kafka's
# time retention rolls and deletes even the active segment).
TS = int(time.time()) * 1000

# --------------------------------------------------------------- records


def batch(values, pid=-1, epoch=-1, seq=-1, txn=False, ts=TS, keys=None, gzip_records=False,
          raw_records=None, count=None, magic=2):
    """A RecordBatch v2 of the values, deterministic to the byte.
    gzip_records: the records gzip-compressed (attributes codec 1);
    raw_records: these bytes instead of the records (the CRC still right);
    count: a record count other than the records'; magic: the magic byte
    (after the CRC's start, so the CRC still matches)."""
    recs = bytearray()
    for i, val in enumerate(values):
        k = keys[i] if keys else None
        kb = varint(-1) if k is None else varint(len(k)) + k
        body = b"\x00" + varint(i) + varint(i) + kb + varint(len(val)) + val + varint(0)
        recs += varint(len(body)) + body
    attrs = 0x10 if txn else 0
    if gzip_records:
        recs = gzip.compress(bytes(recs), mtime=0)
        attrs |= 1
    if raw_records is not None:
        recs = raw_records
    n = len(values) if count is None else count
    after_crc = struct.pack(">hiqqqhii", attrs, len(values) - 1, ts, ts + len(values) - 1,
                            pid, epoch, seq, n) + bytes(recs)
    head = struct.pack(">qii", 0, 4 + 1 + 4 + len(after_crc), -1) + bytes([magic])
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def batches(raw):
    """The batches of a fetch's records, each as what a client sees of it."""
    out = []
    pos = 0
    raw = raw or b""
    while pos + 61 <= len(raw):
        base, blen, ple, magic, crc = struct.unpack(">qiibI", raw[pos:pos + 21])
        if pos + 12 + blen > len(raw):
            break  # a partial batch at the end of a size-bounded fetch
        body = raw[pos + 21:pos + 12 + blen]
        attrs, lod, fts, mts, pid, epoch, seq, n = struct.unpack(">hiqqqhii", body[:40])
        b = {"BaseOffset": base, "LastOffsetDelta": lod, "Attributes": attrs,
             "FirstTimestamp": fts, "MaxTimestamp": mts, "ProducerId": pid,
             "ProducerEpoch": epoch, "BaseSequence": seq, "Records": n,
             "CrcOk": crc == crc32c(body)}
        if attrs & 0x20:  # a control batch: its type
            r = Reader(body[40:])
            r.uvarint()
            b["Control"] = "marker"
        elif attrs & 7 not in (0, 1):
            b["Values"] = "compressed with codec %d" % (attrs & 7)
        else:
            vals = []
            r = Reader(body[40:] if not attrs & 7 else gzip.decompress(body[40:]))
            for _ in range(n):
                ln = (lambda u: (u >> 1) ^ -(u & 1))(r.uvarint())
                rec = Reader(r.take(ln))
                rec.take(1)
                for _f in range(2):
                    rec.uvarint()  # timestamp and offset deltas
                kl = (lambda u: (u >> 1) ^ -(u & 1))(rec.uvarint())
                if kl > 0:
                    rec.take(kl)
                vl = (lambda u: (u >> 1) ^ -(u & 1))(rec.uvarint())
                vals.append(rec.take(vl).decode("latin-1") if vl >= 0 else None)
            b["Values"] = vals
        out.append(b)
        pos += 12 + blen
    return out


# ------------------------------------------------------------ normalizing

ANY = "*"
KEYS = ("Name", "Topic", "TopicName", "GroupId", "TransactionalId", "PartitionIndex",
        "Partition", "ApiKey", "Key", "User", "Index", "ProducerId", "MemberId")
KEYNAME = {("ApiKey", k): n for n, (k, _f, _q, _r) in API.items()}
# Fields whose value is the broker's own choice: compared as a placeholder.
OPAQUE = {"ErrorMessage", "BatchIndexErrorMessage", "Documentation", "ClusterId", "Host",
          "Port", "ClientHost", "SessionLifetimeMs", "TotalBytes", "UsableBytes", "LogDir"}
UNORDERED = {"MatchingAcls", "Acls", "Resources"}  # lists whose order means nothing
TIMES = {"FirstTimestamp", "MaxTimestamp", "Timestamp", "LogAppendTimeMs", "LastTimestamp",
         "TransactionStartTimeMs"}


class Norm:
    """Per-broker mapping of the ids a broker chooses (member ids, producer
    ids) to stable tokens in order of appearance."""

    def __init__(self):
        self.ids = {}

    def token(self, kind, v):
        if v in ("", None, -1):
            return v
        k = (kind, v)
        if k not in self.ids:
            self.ids[k] = "%s%d" % (kind, sum(1 for x in self.ids if x[0] == kind) + 1)
        return self.ids[k]

    def __call__(self, x, field=None):
        if field == "ApiKeys" and isinstance(x, list):
            return {KEYNAME.get(("ApiKey", a["ApiKey"]), "key %d" % a["ApiKey"]):
                    "%d-%d" % (a["MinVersion"], a["MaxVersion"]) for a in x}
        if field == "Configs" and isinstance(x, list) and x and "ReadOnly" in x[0]:
            # One line per config (its value, source and flags), and one
            # for its synonyms.
            out = {}
            for c in x:
                out[c["Name"]] = " ".join(
                    ["value=%s" % c.get("Value"), "source=%s" % c.get("ConfigSource", "-"),
                     "ro=%d" % c["ReadOnly"], "sensitive=%d" % c["IsSensitive"]] +
                    (["default=%d" % c["IsDefault"]] if "IsDefault" in c else []) +
                    (["type=%d" % c["ConfigType"]] if "ConfigType" in c else []))
                if "Synonyms" in c:
                    out[c["Name"] + "/synonyms"] = "[%s]" % ", ".join(
                        "%s=%s@%d" % (y["Name"], y["Value"], y["Source"]) for y in c["Synonyms"])
            return out
        if isinstance(x, dict):
            d = {k: self(v, k) for k, v in x.items()}
            # An element with an error: its other numbers are undefined by
            # the protocol (Kafka sends -1 or 0, kaas what it knows).
            err = [k for k in ("ErrorCode", "PartitionErrorCode") if x.get(k)]
            if err:
                for k, v in x.items():
                    if isinstance(v, int) and not isinstance(v, bool) and k not in err \
                            and (k not in KEYS or k == "ProducerId"):
                        d[k] = ANY
            return d
        if isinstance(x, list) and field in UNORDERED:
            return sorted((self(e) for e in x), key=repr)
        if isinstance(x, list):
            if x and all(isinstance(e, dict) for e in x):
                for key in KEYS:
                    if all(key in e for e in x):
                        names = [e[key] for e in x]
                        if len(set(map(str, names))) == len(names):
                            return {KEYNAME.get((key, e[key]), str(self(e[key], key))):
                                    self(e, None) for e in x}
            return [self(e, field) for e in x]
        if field in OPAQUE:
            return ANY
        if field in ("MemberId", "Leader"):
            return self.token("member", x)
        if field == "ProducerId":
            return self.token("producer", x)
        if field in ("TopicId",):
            return "<zero>" if x == bytes(16) else "<uuid>"
        if field in TIMES and isinstance(x, int) and not isinstance(x, bool) and x >= TS:
            return "TS+%d" % (x - TS) if x - TS < 1000 else "<time>"
        if field == "SessionId":
            return "<session>" if x else 0
        if field == "Records" and isinstance(x, (bytes, bytearray)):
            return [self(b) for b in batches(x)]
        if field in ("MemberMetadata", "MemberAssignment", "Metadata", "Assignment",
                     "ProtocolData") and isinstance(x, (bytes, bytearray)):
            return x.hex()
        if isinstance(x, (bytes, bytearray)):
            return x.hex()
        return x


def flatten(x, prefix, out):
    if isinstance(x, dict):
        if not x:
            out[prefix + "/{}"] = "{}"
        for k, v in x.items():
            flatten(v, prefix + "/" + str(k), out)
    elif isinstance(x, list):
        out[prefix + "/#"] = len(x)
        for i, v in enumerate(x):
            flatten(v, "%s/%d" % (prefix, i), out)
    else:
        out[prefix] = x
    return out


# ---------------------------------------------------------------- sessions

class Session:
    """One broker's run of the scenarios: its connection, its versions (the
    common range's lo or hi end for each API) and its observations."""

    def __init__(self, hostport, versions, level, sasl_hp=None):
        self.hp = hostport
        self.sasl_hp = sasl_hp
        self.c = Conn(hostport)
        self.versions = versions
        self.level = level
        self.norm = Norm()
        self.obs = {}
        self.scenario = ""
        self.retries = 0

    def v(self, name):
        lo, hi = self.versions[name]
        return lo if self.level == "lo" else hi

    def raw(self, name, values, v=None, conn=None):
        """The decoded answer, un-normalized (None: the connection closed).
        An answer with a retriable error (NOT_LEADER_OR_FOLLOWER, the
        coordinator loading or not available, CONCURRENT_TRANSACTIONS) is
        retried, as a client does, for 10 s at most: Kafka gives them for a
        moment after a topic's creation or a transaction's end."""
        v = self.v(name) if v is None else v
        c = conn or self.c
        end = time.time() + 10
        SENT.add((name, v))
        while True:
            d = c.call(name, v, values)
            if d is None:
                self.c = Conn(self.hp)  # the broker closed it: a fresh one for what follows
                return d
            if not (errors(d) & RETRIABLE) or time.time() > end:
                return d
            self.retries += 1
            time.sleep(0.1)

    def x(self, label, name, values, v=None, pick=None):
        """Send, record the normalized answer (or the part `pick` selects)
        under scenario.level/label, and return the raw answer."""
        v = self.v(name) if v is None else v
        try:
            d = self.raw(name, values, v)
        except (Short, OSError) as e:
            self.record(label, {"exception": type(e).__name__})
            self.c = Conn(self.hp)
            return None
        if d is None:
            self.record(label, {"closed": True})
            return None
        self.record(label, pick(d) if pick else d)
        return d

    def record(self, label, d):
        key = "%s.%s/%s" % (self.scenario, self.level, label)
        flatten(self.norm(d), key, self.obs)

    def wait_topic(self, topic, parts=1, secs=15):
        """Until Metadata shows topic with every partition led (not recorded)."""
        end = time.time() + secs
        while time.time() < end:
            d = self.raw("Metadata", {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False},
                         v=self.versions["Metadata"][1])
            t = d and d["Topics"][0]
            if t and t["ErrorCode"] == 0 and len(t["Partitions"]) == parts and \
                    all(p["ErrorCode"] == 0 and p["LeaderId"] >= 0 for p in t["Partitions"]):
                return True
            time.sleep(0.1)
        raise RuntimeError("topic %s not ready in %d s on %s" % (topic, secs, self.hp))

    def create(self, topic, parts=1, configs=None):
        """Create (at the highest common version) and wait for it (not recorded)."""
        d = self.raw("CreateTopics", {
            "Topics": [{"Name": topic, "NumPartitions": parts, "ReplicationFactor": 1,
                        "Assignments": [], "Configs": [{"Name": k, "Value": v}
                                                       for k, v in (configs or {}).items()]}],
            "TimeoutMs": 10000, "ValidateOnly": False}, v=self.versions["CreateTopics"][1])
        if d["Topics"][0]["ErrorCode"] not in (0, 36):
            raise RuntimeError("create %s: error %d" % (topic, d["Topics"][0]["ErrorCode"]))
        self.wait_topic(topic, parts)

    def produce(self, topic, part, records, acks=-1, txn_id=None, v=None):
        return self.raw("Produce", produce_req(topic, part, records, acks, txn_id), v=v)


RETRIABLE = {6, 14, 15, 51}
SENT = set()  # (API, version) pairs sent


def errors(x):
    """Every error code in an answer."""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("ErrorCode", "PartitionErrorCode") and isinstance(v, int):
                out.add(v)
            else:
                out |= errors(v)
    elif isinstance(x, list):
        for e in x:
            out |= errors(e)
    return out


def probe_batch():
    """A batch with a wrong CRC: a Produce of it is authorized first (29 when
    refused) and then refused CORRUPT_MESSAGE, so polling with it writes
    nothing whichever broker sees a binding first."""
    b = bytearray(batch(vals("probe")))
    b[17] ^= 0xFF
    return bytes(b)


def produce_req(topic, part, records, acks=-1, txn_id=None):
    return {"TransactionalId": txn_id, "Acks": acks, "TimeoutMs": 10000,
            "TopicData": [{"Name": topic, "PartitionData": [{"Index": part, "Records": records}]}]}


def fetch_req(topic, part, offset, iso=0, wait=0, max_bytes=1 << 20):
    return {"ReplicaId": -1, "MaxWaitMs": wait, "MinBytes": 0, "MaxBytes": max_bytes,
            "IsolationLevel": iso, "SessionId": 0, "SessionEpoch": -1,
            "ForgottenTopicsData": [], "RackId": "",
            "Topics": [{"Topic": topic, "Partitions": [
                {"Partition": part, "CurrentLeaderEpoch": -1, "FetchOffset": offset,
                 "LastFetchedEpoch": -1, "LogStartOffset": -1,
                 "PartitionMaxBytes": max_bytes}]}]}


def list_offsets_req(topic, part, ts, iso=0):
    return {"ReplicaId": -1, "IsolationLevel": iso, "Topics": [{"Name": topic, "Partitions": [
        {"PartitionIndex": part, "CurrentLeaderEpoch": -1, "Timestamp": ts, "MaxNumOffsets": 1}]}]}


def vals(*xs):
    return [x.encode() for x in xs]


# --------------------------------------------------------------- scenarios
SCENARIOS = []


def scenario(f):
    SCENARIOS.append(f)
    return f


@scenario
def apiversions(s):
    for v in sorted(set(s.versions["ApiVersions"])):
        s.x("v%d" % v, "ApiVersions", {"ClientSoftwareName": "kaas-peer",
                                       "ClientSoftwareVersion": "1"}, v=v)
    # KIP-511: a version past the range is answered in the v0 format.
    hi = s.versions["ApiVersions"][1] + 1
    try:
        d = s.c.call("ApiVersions", hi, {"ClientSoftwareName": "kaas-peer",
                                         "ClientSoftwareVersion": "1"}, answer_v=0)
        s.record("unsupported-version", {"ErrorCode": d["ErrorCode"],
                                         "ApiVersions": [a for a in d["ApiKeys"]
                                                         if a["ApiKey"] == 18]})
    except (Short, OSError) as e:
        s.record("unsupported-version", {"exception": type(e).__name__})
        s.c = Conn(s.hp)


@scenario
def retention_start(s):
    """A topic whose records all pass retention.ms (2 s) while the other
    scenarios run; retention_end looks at what is left."""
    t = "rt-%s" % s.level
    s.create(t, 1, {"retention.ms": "2000"})
    s.x("produce", "Produce", produce_req(t, 0, batch(vals("a", "b", "c"))))
    RETENTION_T0[(s.hp, s.level)] = time.time()


RETENTION_T0 = {}


@scenario
def topics(s):
    L = s.level

    def create(label, name, parts=2, rf=1, configs=None, validate=False):
        s.x(label, "CreateTopics", {
            "Topics": [{"Name": name, "NumPartitions": parts, "ReplicationFactor": rf,
                        "Assignments": [], "Configs": [{"Name": k, "Value": v}
                                                       for k, v in (configs or {}).items()]}],
            "TimeoutMs": 10000, "ValidateOnly": validate})

    create("create", "ct-%s" % L, configs={"retention.ms": "3600000"})
    s.wait_topic("ct-%s" % L, 2)
    create("create-again", "ct-%s" % L)
    create("invalid-config-value", "ct-bad1-%s" % L, configs={"retention.ms": "abc"})
    create("unknown-config", "ct-bad2-%s" % L, configs={"no.such.config": "1"})
    create("zero-partitions", "ct-bad3-%s" % L, parts=0)
    create("invalid-name", "bad/name-%s" % L)
    create("replication-factor-3", "ct-rf3-%s" % L, rf=3)
    create("default-partitions", "ct-def-%s" % L, parts=-1, rf=-1)
    create("log-append-time", "ct-lat-%s" % L, configs={"message.timestamp.type": "LogAppendTime"})
    create("compression-gzip", "ct-gz-%s" % L, configs={"compression.type": "gzip"})
    if s.v("CreateTopics") >= 1:
        create("validate-only", "ct-vo-%s" % L, validate=True)
    s.wait_topic("ct-def-%s" % L, 1)
    s.x("metadata-after", "Metadata", {"Topics": [{"Name": "ct-vo-%s" % L}, {"Name": "ct-%s" % L},
                                                  {"Name": "ct-def-%s" % L}],
                                       "AllowAutoTopicCreation": False},
        v=s.versions["Metadata"][1])
    s.x("delete", "DeleteTopics", {"TopicNames": ["ct-%s" % L], "TimeoutMs": 10000})
    s.x("delete-unknown", "DeleteTopics", {"TopicNames": ["ct-nosuch-%s" % L], "TimeoutMs": 10000})


@scenario
def metadata(s):
    L = s.level
    s.create("md-%s" % L, 3)
    req = {"Topics": [{"Name": "md-%s" % L}], "AllowAutoTopicCreation": False,
           "IncludeClusterAuthorizedOperations": False, "IncludeTopicAuthorizedOperations": False}
    s.x("topic", "Metadata", req)
    if s.v("Metadata") >= 4:
        s.x("unknown", "Metadata", dict(req, Topics=[{"Name": "md-nosuch-%s" % L}]))
        s.x("invalid-name", "Metadata", dict(req, Topics=[{"Name": "bad/name"}]))
        d = s.x("auto-create", "Metadata", dict(req, Topics=[{"Name": "md-auto-%s" % L}],
                                                 AllowAutoTopicCreation=True),
                pick=lambda d: {"Topics": [{"Name": t["Name"], "Created": True}
                                           for t in d["Topics"]]})
        s.wait_topic("md-auto-%s" % L, 1)
        s.x("auto-created", "Metadata", dict(req, Topics=[{"Name": "md-auto-%s" % L}]))
    s.x("describe-cluster", "DescribeCluster", {"IncludeClusterAuthorizedOperations": False,
                                                "EndpointType": 1})
    s.x("describe-topic-partitions", "DescribeTopicPartitions", {
        "Topics": [{"Name": "md-%s" % L}, {"Name": "md-nosuch-%s" % L}],
        "ResponsePartitionLimit": 2, "Cursor": None})


@scenario
def produce_fetch(s):
    L = s.level
    t = "pf-%s" % L
    s.create(t, 2)
    s.create("pf-big-%s" % L, 1, {"max.message.bytes": "1000"})
    s.x("produce", "Produce", produce_req(t, 0, batch(vals("a", "b", "c"))))
    s.x("produce-second", "Produce", produce_req(t, 0, batch(vals("d", "e"), ts=TS + 3)))
    s.x("produce-acks-1", "Produce", produce_req(t, 1, batch(vals("x")), acks=1))
    s.x("produce-invalid-acks", "Produce", produce_req(t, 0, batch(vals("y")), acks=2))
    s.x("produce-unknown-partition", "Produce", produce_req(t, 9, batch(vals("y"))))
    s.x("produce-unknown-topic", "Produce", produce_req("pf-nosuch-%s" % L, 0, batch(vals("y"))))
    md = {"Topics": [{"Name": "pf-nosuch-%s" % L}], "AllowAutoTopicCreation": False,
          "IncludeTopicAuthorizedOperations": False}
    end = time.time() + 1
    while time.time() < end:  # kaas creates it (KAFKA-DIFFERENCES.md): a moment
        d = s.raw("Metadata", md)
        if d["Topics"][0]["ErrorCode"] == 0:
            break
        time.sleep(0.1)
    s.x("metadata-after-produce-unknown-topic", "Metadata", md,
        pick=lambda d: {"ErrorCode": d["Topics"][0]["ErrorCode"]})
    bad = bytearray(batch(vals("y")))
    bad[17] ^= 0xFF  # a byte of the CRC
    s.x("produce-bad-crc", "Produce", produce_req(t, 0, bytes(bad)))
    s.x("produce-oversized", "Produce", produce_req("pf-big-%s" % L, 0, batch([b"z" * 2000])))
    s.x("produce-fits", "Produce", produce_req("pf-big-%s" % L, 0, batch([b"z" * 100])))
    # Compressed, and batches whose CRC is right but whose content is not.
    g = "pf-gz-%s" % L
    s.create(g, 1)
    s.x("produce-gzip", "Produce", produce_req(g, 0, batch(vals("g1", "g2"), gzip_records=True)))
    s.x("produce-gzip-garbage", "Produce", produce_req(g, 0, batch(
        vals("g3"), gzip_records=True, raw_records=b"\x1f\x8b\x08\x00garbage-not-deflate")))
    s.x("produce-count-mismatch", "Produce", produce_req(g, 0, batch(vals("c1", "c2"), count=3)))
    s.x("produce-record-garbage", "Produce", produce_req(g, 0, batch(
        vals("r1"), raw_records=b"\x7f" * 12)))
    s.x("produce-magic-1", "Produce", produce_req(g, 0, batch(vals("m1"), magic=1)))
    s.x("produce-empty-records", "Produce", produce_req(g, 0, b""))
    s.x("fetch-gzip", "Fetch", fetch_req(g, 0, 0))
    s.x("fetch", "Fetch", fetch_req(t, 0, 0))
    s.x("fetch-middle", "Fetch", fetch_req(t, 0, 4))
    s.x("fetch-at-end", "Fetch", fetch_req(t, 0, 5, wait=50))
    s.x("fetch-out-of-range", "Fetch", fetch_req(t, 0, 99))
    s.x("fetch-unknown-partition", "Fetch", fetch_req(t, 9, 0))
    s.x("fetch-unknown-topic", "Fetch", fetch_req("pf-nosuch2-%s" % L, 0, 0))
    for label, ts in (("earliest", -2), ("latest", -1), ("by-time", TS + 1),
                      ("by-time-second-batch", TS + 3), ("after-all", TS + 10**6),
                      ("max-timestamp", -3)):
        if ts == -3 and s.v("ListOffsets") < 7:
            continue
        s.x("list-offsets-" + label, "ListOffsets", list_offsets_req(t, 0, ts))
    s.x("list-offsets-unknown-partition", "ListOffsets", list_offsets_req(t, 9, -1))
    # The epoch each broker itself names (kaas's first is 1, Kafka's 0).
    md = s.raw("Metadata", {"Topics": [{"Name": t}], "AllowAutoTopicCreation": False},
               v=s.versions["Metadata"][1])
    epoch = md["Topics"][0]["Partitions"][0]["LeaderEpoch"]
    s.x("offset-for-leader-epoch", "OffsetForLeaderEpoch", {
        "ReplicaId": -1, "Topics": [{"Topic": t, "Partitions": [
            {"Partition": 0, "CurrentLeaderEpoch": -1, "LeaderEpoch": epoch},
            {"Partition": 9, "CurrentLeaderEpoch": -1, "LeaderEpoch": epoch}]}]})
    s.x("describe-log-dirs", "DescribeLogDirs", {"Topics": [{"Topic": t, "Partitions": [0, 1]}]})
    s.x("describe-producers", "DescribeProducers", {"Topics": [{"Name": t,
                                                                "PartitionIndexes": [0, 9]}]})


@scenario
def delete_records(s):
    L = s.level
    t = "dr-%s" % L
    s.create(t, 1)
    s.produce(t, 0, batch(vals("a", "b")))
    s.produce(t, 0, batch(vals("c", "d", "e")))

    def dr(label, off, part=0):
        s.x(label, "DeleteRecords", {"Topics": [{"Name": t, "Partitions": [
            {"PartitionIndex": part, "Offset": off}]}], "TimeoutMs": 10000})
    dr("delete-to-2", 2)
    s.x("list-earliest", "ListOffsets", list_offsets_req(t, 0, -2))
    s.x("fetch-before-start", "Fetch", fetch_req(t, 0, 0))
    s.x("fetch-from-start", "Fetch", fetch_req(t, 0, 2))
    dr("delete-backwards", 1)
    dr("delete-past-end", 99)
    dr("delete-to-end", -1)
    dr("delete-unknown-partition", 1, part=5)
    s.x("list-earliest-after", "ListOffsets", list_offsets_req(t, 0, -2))


@scenario
def configs(s):
    L = s.level
    t = "cf-%s" % L
    s.create(t, 1, {"max.message.bytes": "5000", "cleanup.policy": "delete"})
    keys = ["max.message.bytes", "retention.ms", "cleanup.policy", "segment.bytes",
            "min.insync.replicas", "message.timestamp.type"]

    def describe(label, name=t, typ=2, ks=keys):
        s.x(label, "DescribeConfigs", {"Resources": [{"ResourceType": typ, "ResourceName": name,
                                                      "ConfigurationKeys": ks}],
                                       "IncludeSynonyms": True, "IncludeDocumentation": False})

    describe("describe")
    describe("describe-unknown-topic", name="cf-nosuch-%s" % L)
    describe("describe-broker", name="0", typ=4,
             ks=["message.max.bytes", "log.retention.hours", "log.segment.bytes"])

    def inc(label, ops, name=t, validate=False):
        s.x(label, "IncrementalAlterConfigs", {"Resources": [{
            "ResourceType": 2, "ResourceName": name,
            "Configs": [{"Name": k, "ConfigOperation": op, "Value": v} for k, op, v in ops]}],
            "ValidateOnly": validate})
    def settle(key, pred, secs=10):
        """Until DescribeConfigs shows the change (not recorded): Kafka's
        broker answers from its metadata cache, which follows the
        controller's commit by a moment."""
        end = time.time() + secs
        while time.time() < end:
            d = s.raw("DescribeConfigs", {"Resources": [{"ResourceType": 2, "ResourceName": t,
                                                         "ConfigurationKeys": [key]}],
                                          "IncludeSynonyms": False,
                                          "IncludeDocumentation": False})
            c = d["Results"][0]["Configs"]
            if c and pred(c[0]):
                return
            time.sleep(0.05)

    inc("inc-set", [("retention.ms", 0, "100000")])
    inc("inc-append", [("cleanup.policy", 2, "compact")])
    settle("retention.ms", lambda c: c["Value"] == "100000")
    settle("cleanup.policy", lambda c: "compact" in (c["Value"] or ""))
    describe("after-inc")
    inc("inc-delete", [("retention.ms", 1, None)])
    inc("inc-invalid-value", [("retention.ms", 0, "x")])
    inc("inc-unknown-key", [("no.such.config", 0, "1")])
    inc("inc-unknown-topic", [("retention.ms", 0, "1000")], name="cf-nosuch-%s" % L)
    inc("inc-validate-only", [("retention.ms", 0, "2000")], validate=True)
    settle("retention.ms", lambda c: c["Value"] != "100000")
    describe("after-inc-delete")
    s.x("alter", "AlterConfigs", {"Resources": [{"ResourceType": 2, "ResourceName": t,
                                                 "Configs": [{"Name": "segment.bytes",
                                                              "Value": "1048576"}]}],
                                  "ValidateOnly": False})
    s.x("alter-invalid", "AlterConfigs", {"Resources": [{"ResourceType": 2, "ResourceName": t,
                                                         "Configs": [{"Name": "segment.bytes",
                                                                      "Value": "-5"}]}],
                                          "ValidateOnly": False})
    settle("segment.bytes", lambda c: c["Value"] == "1048576")
    settle("max.message.bytes", lambda c: c["Value"] != "5000")
    describe("after-alter")


def consumer_subscription(topic):
    return struct.pack(">hih", 0, 1, len(topic)) + topic.encode() + struct.pack(">i", -1)


def consumer_assignment(topic, parts):
    return (struct.pack(">hih", 0, 1, len(topic)) + topic.encode() +
            struct.pack(">i", len(parts)) + b"".join(struct.pack(">i", p) for p in parts) +
            struct.pack(">i", -1))


@scenario
def groups(s):
    L = s.level
    g, t = "g-%s" % L, "gt-%s" % L
    s.create(t, 2)
    if s.v("FindCoordinator") >= 4:
        s.x("find-coordinator", "FindCoordinator", {"KeyType": 0, "CoordinatorKeys": [g]})
    else:
        s.x("find-coordinator", "FindCoordinator", {"Key": g, "KeyType": 0})
    join = {"GroupId": g, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000, "MemberId": "",
            "GroupInstanceId": None, "ProtocolType": "consumer", "Reason": None,
            "Protocols": [{"Name": "range", "Metadata": consumer_subscription(t)}]}
    s.x("join-bad-session-timeout", "JoinGroup", dict(join, SessionTimeoutMs=1))
    d = s.x("join", "JoinGroup", join)
    if d and d["ErrorCode"] == 79:  # MEMBER_ID_REQUIRED
        d = s.x("join-with-member-id", "JoinGroup", dict(join, MemberId=d["MemberId"]))
    if not d or d["ErrorCode"]:
        return
    me, gen = d["MemberId"], d["GenerationId"]
    sync = {"GroupId": g, "GenerationId": gen, "MemberId": me, "GroupInstanceId": None,
            "ProtocolType": "consumer", "ProtocolName": "range",
            "Assignments": [{"MemberId": me, "Assignment": consumer_assignment(t, [0, 1])}]}
    s.x("sync-wrong-generation", "SyncGroup", dict(sync, GenerationId=gen + 5))
    s.x("sync", "SyncGroup", sync)
    hb = {"GroupId": g, "GenerationId": gen, "MemberId": me, "GroupInstanceId": None}
    s.x("heartbeat", "Heartbeat", hb)
    s.x("heartbeat-wrong-generation", "Heartbeat", dict(hb, GenerationId=gen + 1))
    s.x("heartbeat-unknown-member", "Heartbeat", dict(hb, MemberId="nobody"))
    s.x("heartbeat-unknown-group", "Heartbeat", dict(hb, GroupId="g-nosuch-%s" % L))

    def commit(label, off, generation=gen, member=me, parts=(0,)):
        s.x(label, "OffsetCommit", {
            "GroupId": g, "GenerationId": generation, "MemberId": member,
            "GroupInstanceId": None, "RetentionTimeMs": -1,
            "Topics": [{"Name": t, "Partitions": [
                {"PartitionIndex": p, "CommittedOffset": off, "CommittedLeaderEpoch": -1,
                 "CommitTimestamp": -1, "CommittedMetadata": "meta"} for p in parts]}]})
    commit("commit", 3)
    commit("commit-wrong-generation", 4, generation=gen + 1)
    commit("commit-unknown-member", 4, member="nobody")
    commit("commit-unknown-partition", 4, parts=(7,))

    def fetch(label, group=g, parts=(0, 1, 7)):
        if s.v("OffsetFetch") >= 8:
            req = {"Groups": [{"GroupId": group, "Topics": [{"Name": t,
                                                              "PartitionIndexes": list(parts)}]}],
                   "RequireStable": True}
        else:
            req = {"GroupId": group, "Topics": [{"Name": t, "PartitionIndexes": list(parts)}],
                   "RequireStable": True}
        s.x(label, "OffsetFetch", req)
    fetch("offset-fetch")
    fetch("offset-fetch-unknown-group", group="g-nosuch-%s" % L)
    s.x("describe", "DescribeGroups", {"Groups": [g, "g-nosuch-%s" % L],
                                       "IncludeAuthorizedOperations": False})
    s.x("list", "ListGroups", {"StatesFilter": [], "TypesFilter": []},
        pick=lambda d: {"ErrorCode": d["ErrorCode"],
                        "Groups": [x for x in d["Groups"] if x["GroupId"] == g]})
    s.x("delete-non-empty", "DeleteGroups", {"GroupsNames": [g]})
    s.x("offset-delete-subscribed", "OffsetDelete", {"GroupId": g, "Topics": [
        {"Name": t, "Partitions": [{"PartitionIndex": 0}]}]})
    leave = {"GroupId": g, "MemberId": me,
             "Members": [{"MemberId": me, "GroupInstanceId": None, "Reason": None}]}
    s.x("leave", "LeaveGroup", leave)
    s.x("leave-again", "LeaveGroup", leave)
    s.x("describe-empty", "DescribeGroups", {"Groups": [g], "IncludeAuthorizedOperations": False})
    commit("commit-empty-group-as-outsider", 5, generation=-1, member="")
    s.x("offset-delete", "OffsetDelete", {"GroupId": g, "Topics": [
        {"Name": t, "Partitions": [{"PartitionIndex": 0}]}]})
    fetch("offset-fetch-after-delete")
    s.x("delete", "DeleteGroups", {"GroupsNames": [g, "g-nosuch-%s" % L]})
    s.x("describe-deleted", "DescribeGroups", {"Groups": [g],
                                               "IncludeAuthorizedOperations": False})


def in_thread(s, name, values):
    """Send a request that blocks (a JoinGroup or SyncGroup waiting for the
    others) on a connection of its own; .join() gives its answer."""
    out = {}

    def run():
        try:
            out["d"] = s.raw(name, values, conn=Conn(s.hp))
        except Exception as e:  # noqa: BLE001 — recorded as the answer
            out["d"] = {"exception": type(e).__name__}
    th = threading.Thread(target=run, daemon=True)
    th.start()

    def join(secs=30):
        th.join(secs)
        return out.get("d", {"exception": "no answer in %d s" % secs})
    return join


@scenario
def rebalance(s):
    """Two members: the second's join makes the first rejoin (heartbeat
    REBALANCE_IN_PROGRESS), the leader assigns both, the second leaves;
    and a static member (group.instance.id) rejoining under a new member id
    fences its old one."""
    L = s.level
    g, t = "rb-%s" % L, "rbt-%s" % L
    s.create(t, 2)
    s.raw("FindCoordinator", {"Key": g, "KeyType": 0, "CoordinatorKeys": [g]})
    join = {"GroupId": g, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 15000, "MemberId": "",
            "GroupInstanceId": None, "ProtocolType": "consumer", "Reason": None,
            "Protocols": [{"Name": "range", "Metadata": consumer_subscription(t)}]}

    def joined(values):
        d = s.raw("JoinGroup", values)
        if d and d["ErrorCode"] == 79:
            d = s.raw("JoinGroup", dict(values, MemberId=d["MemberId"]))
        return d
    a = joined(join)
    s.record("a-join", a)
    if not a or a["ErrorCode"]:
        return
    ma = a["MemberId"]
    sync = {"GroupId": g, "GenerationId": a["GenerationId"], "MemberId": ma,
            "GroupInstanceId": None, "ProtocolType": "consumer", "ProtocolName": "range",
            "Assignments": [{"MemberId": ma, "Assignment": consumer_assignment(t, [0, 1])}]}
    s.x("a-sync", "SyncGroup", sync)
    # B joins (v4+: after MEMBER_ID_REQUIRED); its join waits for A's.
    bjoin = join
    if s.v("JoinGroup") >= 4:
        b0 = s.raw("JoinGroup", join, conn=Conn(s.hp))
        bjoin = dict(join, MemberId=b0["MemberId"] if b0["ErrorCode"] == 79 else "")
    b_wait = in_thread(s, "JoinGroup", bjoin)
    hb = {"GroupId": g, "GenerationId": a["GenerationId"], "MemberId": ma, "GroupInstanceId": None}
    end = time.time() + 15
    while time.time() < end:
        h = s.raw("Heartbeat", hb)
        if h["ErrorCode"] != 0:
            break
        time.sleep(0.1)
    s.record("a-heartbeat-during-rebalance", h)
    a2 = s.raw("JoinGroup", dict(join, MemberId=ma))
    b2 = b_wait()
    s.record("a-rejoin", a2)
    s.record("b-join", b2)
    if a2.get("ErrorCode") or b2.get("ErrorCode") or "MemberId" not in b2:
        return
    mb, gen = b2["MemberId"], a2["GenerationId"]
    leader_is_a = a2["Leader"] == ma
    lead, follow = (ma, mb) if leader_is_a else (mb, ma)
    s.record("leader", {"LeaderIs": "a" if leader_is_a else "b"})
    f_wait = in_thread(s, "SyncGroup", dict(sync, GenerationId=gen, MemberId=follow,
                                            Assignments=[]))
    time.sleep(0.2)
    s.x("leader-sync", "SyncGroup", dict(sync, GenerationId=gen, MemberId=lead, Assignments=[
        {"MemberId": lead, "Assignment": consumer_assignment(t, [0])},
        {"MemberId": follow, "Assignment": consumer_assignment(t, [1])}]))
    s.record("follower-sync", f_wait())
    s.x("describe-two", "DescribeGroups", {"Groups": [g], "IncludeAuthorizedOperations": False})
    s.x("b-leave", "LeaveGroup", {"GroupId": g, "MemberId": mb, "Members": [
        {"MemberId": mb, "GroupInstanceId": None, "Reason": None}]})
    s.x("a-heartbeat-after-leave", "Heartbeat", dict(hb, GenerationId=gen))
    a3 = s.raw("JoinGroup", dict(join, MemberId=ma))
    s.record("a-rejoin-alone", a3)
    s.x("a-leave", "LeaveGroup", {"GroupId": g, "MemberId": ma, "Members": [
        {"MemberId": ma, "GroupInstanceId": None, "Reason": None}]})
    # A static member: its rejoin under a new member id fences the old id.
    if s.v("JoinGroup") >= 5:
        sg = "rbs-%s" % L
        s.raw("FindCoordinator", {"Key": sg, "KeyType": 0, "CoordinatorKeys": [sg]})
        sj = dict(join, GroupId=sg, GroupInstanceId="static-1")
        d1 = s.x("static-join", "JoinGroup", sj)
        if not d1 or d1["ErrorCode"]:
            return
        m1 = d1["MemberId"]
        s.x("static-sync", "SyncGroup", dict(sync, GroupId=sg, GenerationId=d1["GenerationId"],
                                             MemberId=m1, GroupInstanceId="static-1",
                                             Assignments=[{"MemberId": m1, "Assignment":
                                                           consumer_assignment(t, [0, 1])}]))
        d2 = s.x("static-rejoin", "JoinGroup", sj)
        s.x("static-old-heartbeat", "Heartbeat", {"GroupId": sg,
                                                  "GenerationId": d1["GenerationId"],
                                                  "MemberId": m1, "GroupInstanceId": "static-1"})
        if d2 and not d2["ErrorCode"]:
            s.x("static-leave", "LeaveGroup", {"GroupId": sg, "MemberId": "", "Members": [
                {"MemberId": d2["MemberId"], "GroupInstanceId": "static-1", "Reason": None}]})


def txn_state(s, tid, want, secs=10):
    """Poll DescribeTransactions until the state is one of want (not recorded)."""
    end = time.time() + secs
    while True:
        d = s.raw("DescribeTransactions", {"TransactionalIds": [tid]})
        st = d["TransactionStates"][0]["TransactionState"]
        if st in want or time.time() > end:
            return st
        time.sleep(0.05)


@scenario
def transactions(s):
    L = s.level
    tid, t, g = "tx-%s" % L, "txt-%s" % L, "txg-%s" % L
    s.create(t, 1)
    s.x("init-bad-timeout", "InitProducerId", {"TransactionalId": tid,
                                               "TransactionTimeoutMs": 2**31 - 1,
                                               "ProducerId": -1, "ProducerEpoch": -1})
    d = s.x("init", "InitProducerId", {"TransactionalId": tid, "TransactionTimeoutMs": 60000,
                                       "ProducerId": -1, "ProducerEpoch": -1})
    pid, ep = d["ProducerId"], d["ProducerEpoch"]
    idp = {"TransactionalId": tid, "ProducerId": pid, "ProducerEpoch": ep}
    s.x("add-partitions", "AddPartitionsToTxn", dict(idp, Topics=[{"Name": t, "Partitions": [0]}]))
    s.x("produce", "Produce", produce_req(t, 0, batch(vals("t1", "t2"), pid, ep, 0, txn=True),
                                          txn_id=tid))
    s.x("describe-ongoing", "DescribeTransactions", {"TransactionalIds": [tid, "tx-nosuch"]})
    s.x("list", "ListTransactions", {"StateFilters": ["Ongoing"], "ProducerIdFilters": []},
        pick=lambda d: {"ErrorCode": d["ErrorCode"],
                        "TransactionStates": [x for x in d["TransactionStates"]
                                              if x["TransactionalId"] == tid]})
    s.x("fetch-read-committed-open", "Fetch", fetch_req(t, 0, 0, iso=1))
    s.x("list-offsets-read-committed-open", "ListOffsets", list_offsets_req(t, 0, -1, iso=1))
    s.raw("FindCoordinator", {"Key": g, "KeyType": 0, "CoordinatorKeys": [g]})
    s.x("add-offsets", "AddOffsetsToTxn", dict(idp, GroupId=g))
    s.x("txn-offset-commit", "TxnOffsetCommit", dict(
        idp, GroupId=g, GenerationId=-1, MemberId="", GroupInstanceId=None,
        Topics=[{"Name": t, "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 2,
                                            "CommittedLeaderEpoch": -1,
                                            "CommittedMetadata": ""}]}]))
    s.x("end-commit", "EndTxn", dict(idp, Committed=True))
    s.record("state-after-commit", {"State": txn_state(s, tid, ("CompleteCommit",))})
    s.x("fetch-committed", "Fetch", fetch_req(t, 0, 0, iso=1))
    s.x("offset-fetch-committed", "OffsetFetch", {
        "GroupId": g, "Topics": [{"Name": t, "PartitionIndexes": [0]}], "RequireStable": True,
        "Groups": [{"GroupId": g, "Topics": [{"Name": t, "PartitionIndexes": [0]}]}]})
    # A second transaction, aborted.
    s.x("add-partitions-2", "AddPartitionsToTxn", dict(idp, Topics=[{"Name": t, "Partitions": [0]}]))
    s.x("produce-2", "Produce", produce_req(t, 0, batch(vals("t3"), pid, ep, 2, txn=True),
                                            txn_id=tid))
    s.x("end-abort", "EndTxn", dict(idp, Committed=False))
    s.record("state-after-abort", {"State": txn_state(s, tid, ("CompleteAbort",))})
    s.x("fetch-after-abort", "Fetch", fetch_req(t, 0, 0, iso=1))
    s.x("end-nothing-open", "EndTxn", dict(idp, Committed=True))
    s.x("describe-producers", "DescribeProducers", {"Topics": [{"Name": t,
                                                                "PartitionIndexes": [0]}]})
    # Fenced: a new InitProducerId bumps the epoch; the old epoch is refused.
    s.x("init-again", "InitProducerId", {"TransactionalId": tid, "TransactionTimeoutMs": 60000,
                                         "ProducerId": -1, "ProducerEpoch": -1})
    s.x("add-partitions-fenced", "AddPartitionsToTxn",
        dict(idp, Topics=[{"Name": t, "Partitions": [0]}]))
    s.x("produce-fenced", "Produce", produce_req(t, 0, batch(vals("t4"), pid, ep, 3, txn=True),
                                                 txn_id=tid))
    s.x("end-fenced", "EndTxn", dict(idp, Committed=True))
    s.x("end-unknown-txn-id", "EndTxn", {"TransactionalId": "tx-nosuch-%s" % L,
                                         "ProducerId": pid, "ProducerEpoch": ep,
                                         "Committed": True})
    # Last: a partition that does not exist, in a transaction of its own
    # (after AddPartitionsToTxn v3 with an unknown partition, Kafka 4.1
    # refuses the next transactional Produce v11 to that topic, of any
    # producer, with NOT_LEADER_OR_FOLLOWER).
    d2 = s.raw("InitProducerId", {"TransactionalId": tid + "-bad", "TransactionTimeoutMs": 60000,
                                  "ProducerId": -1, "ProducerEpoch": -1})
    s.x("add-unknown-partition", "AddPartitionsToTxn", {
        "TransactionalId": tid + "-bad", "ProducerId": d2["ProducerId"],
        "ProducerEpoch": d2["ProducerEpoch"], "Topics": [{"Name": t, "Partitions": [0, 9]}]})


@scenario
def idempotence(s):
    L = s.level
    t = "id-%s" % L
    s.create(t, 1)
    d = s.x("init", "InitProducerId", {"TransactionalId": None, "TransactionTimeoutMs": -1,
                                       "ProducerId": -1, "ProducerEpoch": -1})
    pid, ep = d["ProducerId"], d["ProducerEpoch"]
    b0 = batch(vals("a", "b", "c"), pid, ep, 0)
    s.x("produce", "Produce", produce_req(t, 0, b0))
    s.x("produce-duplicate", "Produce", produce_req(t, 0, b0))
    s.x("produce-sequence-gap", "Produce", produce_req(t, 0, batch(vals("d"), pid, ep, 5)))
    s.x("produce-next", "Produce", produce_req(t, 0, batch(vals("d"), pid, ep, 3)))
    s.x("produce-wrong-epoch", "Produce", produce_req(t, 0, batch(vals("e"), pid, ep + 3, 4)))
    s.x("produce-unknown-producer-seq0", "Produce",
        produce_req(t, 0, batch(vals("f"), pid + 1000, 0, 0)))
    s.x("describe-producers", "DescribeProducers", {"Topics": [{"Name": t,
                                                                "PartitionIndexes": [0]}]})
    s.x("fetch", "Fetch", fetch_req(t, 0, 0))
    # Last: Kafka appends it, kaas does not (KAFKA-DIFFERENCES.md).
    s.x("produce-unknown-producer-seq7", "Produce",
        produce_req(t, 0, batch(vals("g"), pid + 1001, 0, 7)))


@scenario
def partitions(s):
    L = s.level
    t = "cp-%s" % L

    def cp(label, name, count, validate=False):
        s.x(label, "CreatePartitions", {"Topics": [{"Name": name, "Count": count,
                                                    "Assignments": None}],
                                        "TimeoutMs": 10000, "ValidateOnly": validate})
    s.create(t, 1)
    cp("validate-only", t, 4, validate=True)
    cp("grow", t, 3)
    s.wait_topic(t, 3)
    cp("same-count", t, 3)
    cp("shrink", t, 2)
    cp("unknown-topic", "cp-nosuch-%s" % L, 2)
    s.x("metadata", "Metadata", {"Topics": [{"Name": t}], "AllowAutoTopicCreation": False,
                                 "IncludeTopicAuthorizedOperations": False})


def acl_filter(rtype=1, name=None, pattern=1, principal=None):
    return {"ResourceTypeFilter": rtype, "ResourceNameFilter": name, "PatternTypeFilter": pattern,
            "PrincipalFilter": principal, "HostFilter": None, "Operation": 1, "PermissionType": 1}


@scenario
def acls(s):
    """ACL decisions: both brokers with an authorizer that allows what no
    binding names (kaas's default on a PLAINTEXT-only broker; the peer is
    started with StandardAuthorizer and allow.everyone.if.no.acl.found)."""
    L = s.level
    t = "acl-%s" % L
    s.create(t, 1)
    s.x("produce-before", "Produce", produce_req(t, 0, batch(vals("a"))))
    s.x("create", "CreateAcls", {"Creations": [
        {"ResourceType": 2, "ResourceName": t, "ResourcePatternType": 3,
         "Principal": "User:ANONYMOUS", "Host": "*", "Operation": 4, "PermissionType": 2},
        {"ResourceType": 2, "ResourceName": "acl-", "ResourcePatternType": 4,
         "Principal": "User:alice", "Host": "*", "Operation": 3, "PermissionType": 3}]})
    s.x("create-invalid", "CreateAcls", {"Creations": [
        {"ResourceType": 2, "ResourceName": t, "ResourcePatternType": 3,
         "Principal": "alice-without-type", "Host": "*", "Operation": 4, "PermissionType": 3}]})

    def until(code, secs=15):
        """Until a probe's answer is code: TOPIC_AUTHORIZATION_FAILED (29)
        or, allowed, CORRUPT_MESSAGE (2) (nothing is written either way)."""
        end = time.time() + secs
        while True:
            d = s.raw("Produce", produce_req(t, 0, probe_batch()))
            if d["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == code or time.time() > end:
                return
            time.sleep(0.1)
    until(29)
    s.x("produce-denied", "Produce", produce_req(t, 0, batch(vals("b"))))
    s.x("fetch-no-allow", "Fetch", fetch_req(t, 0, 0))
    s.x("metadata-no-allow", "Metadata", {"Topics": [{"Name": t}], "AllowAutoTopicCreation": False,
                                          "IncludeTopicAuthorizedOperations": True})
    s.x("list-offsets-no-allow", "ListOffsets", list_offsets_req(t, 0, -1))
    s.x("describe-topic", "DescribeAcls", acl_filter(2, t, 1))
    s.x("describe-prefixed", "DescribeAcls", acl_filter(2, "acl-", 4))
    s.x("describe-alice", "DescribeAcls", acl_filter(principal="User:alice"))
    s.x("delete", "DeleteAcls", {"Filters": [acl_filter(2, t, 3), acl_filter(2, "acl-", 4)]})
    s.x("describe-after", "DescribeAcls", acl_filter(2, t, 1))
    until(2)
    s.x("produce-after", "Produce", produce_req(t, 0, batch(vals("c"))))


@scenario
def security_plain(s):
    """The SASL and SCRAM APIs on a PLAINTEXT listener."""
    L = s.level
    c2 = Conn(s.hp)
    try:
        d = s.raw("SaslHandshake", {"Mechanism": "PLAIN"}, conn=c2)
        s.record("sasl-handshake", d if d else {"closed": True})
    except (Short, OSError) as e:
        s.record("sasl-handshake", {"exception": type(e).__name__})
    c3 = Conn(s.hp)
    try:
        d = s.raw("SaslAuthenticate", {"AuthBytes": b"\0alice\0secret"}, conn=c3)
        s.record("sasl-authenticate-without-handshake", d if d else {"closed": True})
    except (Short, OSError) as e:
        s.record("sasl-authenticate-without-handshake", {"exception": type(e).__name__})
    user = "u-%s" % L
    s.x("scram-upsert", "AlterUserScramCredentials", {"Deletions": [], "Upsertions": [{
        "Name": user, "Mechanism": 1, "Iterations": 8192, "Salt": b"s" * 16,
        "SaltedPassword": b"p" * 32}]})
    s.x("scram-upsert-few-iterations", "AlterUserScramCredentials", {"Deletions": [],
                                                                      "Upsertions": [{
        "Name": user + "x", "Mechanism": 1, "Iterations": 10, "Salt": b"s" * 16,
        "SaltedPassword": b"p" * 32}]})
    end = time.time() + 10
    while time.time() < end:  # Kafka: until its metadata cache has the credential
        d = s.raw("DescribeUserScramCredentials", {"Users": [{"Name": user}]})
        if d["Results"] and d["Results"][0]["ErrorCode"] == 0:
            break
        time.sleep(0.05)
    s.x("scram-describe", "DescribeUserScramCredentials", {"Users": [{"Name": user},
                                                                     {"Name": "nobody"}]})
    s.x("scram-delete-unknown", "AlterUserScramCredentials", {
        "Deletions": [{"Name": "nobody", "Mechanism": 1}], "Upsertions": []})
    s.x("scram-delete", "AlterUserScramCredentials", {
        "Deletions": [{"Name": user, "Mechanism": 1}], "Upsertions": []})


@scenario
def retention_end(s):
    t = "rt-%s" % s.level
    # Kafka's retention check runs every 5 s: 12 s after the produce at most.
    end = RETENTION_T0.get((s.hp, s.level), 0) + 12
    while time.time() < end:
        d = s.raw("ListOffsets", list_offsets_req(t, 0, -2))
        if d["Topics"][0]["Partitions"][0]["Offset"] == 3:
            break
        time.sleep(0.2)
    s.x("list-earliest", "ListOffsets", list_offsets_req(t, 0, -2))
    s.x("fetch", "Fetch", fetch_req(t, 0, 0))


def scram_login(s, user, pw, mech="SCRAM-SHA-256"):
    """A SCRAM-SHA-256 exchange on a new connection to the SASL listener:
    (the connection, what each step answered)."""
    c = Conn(s.sasl_hp)
    steps = {}
    # v1: SaslAuthenticate carries the exchange (v0 sends it unframed)
    d = c.call("SaslHandshake", 1, {"Mechanism": mech})
    steps["handshake"] = d
    if not d or d["ErrorCode"]:
        return c, steps
    cnonce = base64.b64encode(os.urandom(18)).decode()
    bare = "n=%s,r=%s" % (user, cnonce)
    v = s.v("SaslAuthenticate")
    d = c.call("SaslAuthenticate", v, {"AuthBytes": ("n,," + bare).encode()})
    steps["first"] = {"ErrorCode": d["ErrorCode"]} if d else {"closed": True}
    if not d or d["ErrorCode"]:
        return c, steps
    first = d["AuthBytes"].decode()
    a = dict(x.split("=", 1) for x in first.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", pw.encode(), base64.b64decode(a["s"]), int(a["i"]))
    ckey = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    final = "c=biws,r=" + a["r"]
    msg = (bare + "," + first + "," + final).encode()
    sig = hmac.new(hashlib.sha256(ckey).digest(), msg, hashlib.sha256).digest()
    proof = bytes(x ^ y for x, y in zip(ckey, sig))
    d = c.call("SaslAuthenticate", v, {"AuthBytes": (final + ",p=" +
                                                     base64.b64encode(proof).decode()).encode()})
    if d and d["ErrorCode"] == 0:
        skey = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
        d = dict(d, AuthBytes=d["AuthBytes"] == b"v=" + base64.b64encode(
            hmac.new(skey, msg, hashlib.sha256).digest()))  # the server's signature, checked
    steps["final"] = d if d else {"closed": True}
    return c, steps


@scenario
def sasl(s):
    """On a SASL_PLAINTEXT listener (SCRAM-SHA-256): a user made with
    AlterUserScramCredentials logs in; a wrong password, an unknown user, an
    unoffered mechanism and a request before authentication are refused;
    then ACL decisions for the authenticated principal and for ANONYMOUS."""
    if not s.sasl_hp:
        return
    L = s.level
    user, pw, salt = "sa-%s" % L, "pw-%s-9x" % L, b"salt-%s-0123456" % L.encode()
    s.x("upsert", "AlterUserScramCredentials", {"Deletions": [], "Upsertions": [{
        "Name": user, "Mechanism": 1, "Iterations": 4096, "Salt": salt,
        "SaltedPassword": hashlib.pbkdf2_hmac("sha256", pw.encode(), salt, 4096)}]})
    end = time.time() + 10
    while time.time() < end:  # until the broker's credential cache has it
        c, st = scram_login(s, user, pw)
        if st.get("final", {}).get("ErrorCode") == 0:
            break
        time.sleep(0.1)
    c, st = scram_login(s, user, pw)
    s.record("login", st)
    s.record("login-wrong-password", scram_login(s, user, "not-" + pw)[1])
    s.record("login-unknown-user", scram_login(s, "nobody-%s" % L, pw)[1])
    s.record("handshake-plain", scram_login(s, user, pw, mech="PLAIN")[1])
    c2 = Conn(s.sasl_hp)
    try:
        d = c2.call("Metadata", s.v("Metadata"), {"Topics": [], "AllowAutoTopicCreation": False})
        s.record("metadata-before-authentication", {"closed": True} if d is None else
                 {"answered": True})
    except (Short, OSError) as e:
        s.record("metadata-before-authentication", {"closed": type(e).__name__})
    # ACL decisions: a DENY WRITE for the user takes the topic out of
    # allow.everyone.if.no.acl.found for every principal.
    t = "sat-%s" % L
    s.create(t, 1)

    def as_user(label, name, values):
        try:
            end = time.time() + 10
            while True:  # retriable errors retried, as in Session.raw
                d = c.call(name, s.v(name), values)
                if d is None or not (errors(d) & RETRIABLE) or time.time() > end:
                    break
                time.sleep(0.1)
            s.record(label, d if d is not None else {"closed": True})
        except (Short, OSError) as e:
            s.record(label, {"exception": type(e).__name__})
    as_user("user-produce-before", "Produce", produce_req(t, 0, batch(vals("u1"))))
    s.x("acl-create", "CreateAcls", {"Creations": [
        {"ResourceType": 2, "ResourceName": t, "ResourcePatternType": 3,
         "Principal": "User:" + user, "Host": "*", "Operation": 4, "PermissionType": 2},
        {"ResourceType": 2, "ResourceName": t, "ResourcePatternType": 3,
         "Principal": "User:" + user, "Host": "*", "Operation": 3, "PermissionType": 3}]})
    try:
        end = time.time() + 15
        while time.time() < end:
            d = c.call("Produce", s.v("Produce"), produce_req(t, 0, probe_batch()))
            if d["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 29:
                break
            time.sleep(0.1)
        as_user("user-produce-denied", "Produce", produce_req(t, 0, batch(vals("u2"))))
        as_user("user-fetch-allowed", "Fetch", fetch_req(t, 0, 0))
        s.x("anonymous-produce", "Produce", produce_req(t, 0, batch(vals("a1"))))
        s.x("anonymous-fetch", "Fetch", fetch_req(t, 0, 0))
    finally:  # the bindings go whatever happened: the later scenarios are ANONYMOUS's
        s.x("acl-delete", "DeleteAcls", {"Filters": [acl_filter(2, t, 3)]})


# ------------------------------------------------------------- differences

def listed(path):
    """The DIFFERENCES.md entries: [(glob, known_wrong, heading)]."""
    out = []
    wrong = False
    heading = ""
    with open(path) as fh:
        for line in fh:
            if line.startswith("#"):
                heading = line.strip("# \n")
                wrong = "known wrong answers" in line.lower()
            for glob in re.findall(r"`peer: ([^`]+)`", line):
                out.append((glob.strip(), wrong, heading))
    return out


def common_versions(a, b):
    va = {x["ApiKey"]: (x["MinVersion"], x["MaxVersion"]) for x in
          Conn(a).call("ApiVersions", 0, {})["ApiKeys"]}
    vb = {x["ApiKey"]: (x["MinVersion"], x["MaxVersion"]) for x in
          Conn(b).call("ApiVersions", 0, {})["ApiKeys"]}
    out = {}
    for name, (key, _f, _q, _r) in API.items():
        if key in va and key in vb:
            lo, hi = max(va[key][0], vb[key][0]), min(va[key][1], vb[key][1])
            if lo <= hi:
                out[name] = (lo, hi)
    return out


def warm_up(hp, versions):
    """Until the broker has its group and transaction coordinators (Kafka
    creates __consumer_offsets and __transaction_state at the first
    FindCoordinator): what a client retries, not compared."""
    c = Conn(hp)
    v = versions["FindCoordinator"][1]
    end = time.time() + 60
    for kind in (0, 1):
        while True:
            d = c.call("FindCoordinator", v, {"Key": "warm-up", "KeyType": kind,
                                               "CoordinatorKeys": ["warm-up"]})
            err = d["Coordinators"][0]["ErrorCode"] if v >= 4 else d["ErrorCode"]
            if err == 0:
                break
            if time.time() > end:
                raise RuntimeError("%s: no coordinator (key type %d) in 60 s: error %d"
                                   % (hp, kind, err))
            time.sleep(0.2)
    # An idempotent producer id, which needs the transaction coordinator loaded.
    while True:
        d = c.call("InitProducerId", versions["InitProducerId"][1], {
            "TransactionalId": None, "TransactionTimeoutMs": -1,
            "ProducerId": -1, "ProducerEpoch": -1})
        if d["ErrorCode"] == 0:
            break
        if time.time() > end:
            raise RuntimeError("%s: InitProducerId still error %d after 60 s" % (hp, d["ErrorCode"]))
        time.sleep(0.2)


def main():
    kafka, kaas, diffs_md = sys.argv[1:4]
    only = None
    sasl = {}
    args = sys.argv[4:]
    while len(args) >= 2:
        if args[0] == "--only":
            only = set(args[1].split(","))
        elif args[0] == "--sasl":  # KAFKA_SASL_HOST:PORT,KAAS_SASL_HOST:PORT
            sasl = dict(zip((kafka, kaas), args[1].split(",")))
        args = args[2:]
    versions = common_versions(kafka, kaas)
    # ApiVersions' entries by name for the APIs both serve; "key N" for one
    # only one serves (what the schema knows of does not matter).
    KEYNAME.clear()
    KEYNAME.update({("ApiKey", API[n][0]): n for n in versions})
    print("versions served by both (lo-hi): " +
          ", ".join("%s %d-%d" % (n, lo, hi) for n, (lo, hi) in sorted(versions.items())),
          flush=True)
    t0 = time.time()
    for hp in (kafka, kaas):
        warm_up(hp, versions)
    print("coordinators ready in %.1f s" % (time.time() - t0), flush=True)
    obs = {}
    for sc in SCENARIOS:
        if only and sc.__name__ not in only:
            continue
        for level in ("lo", "hi"):
            for who, hp in (("kafka", kafka), ("kaas", kaas)):
                s = Session(hp, versions, level, sasl.get(hp))
                s.scenario = sc.__name__
                t1 = time.time()
                try:
                    sc(s)
                except Exception as e:  # a scenario that cannot go on: its reason is a difference
                    s.record("aborted", {"exception": "%s: %s" % (type(e).__name__, e)})
                obs.setdefault(who, {}).update(s.obs)
                print("  %-14s %-3s %-6s %3d answers in %.1f s%s" % (
                    sc.__name__, level, who, len(s.obs), time.time() - t1,
                    " (%d retried)" % s.retries if s.retries else ""), flush=True)
    ends = [(n, v) for n, (lo, hi) in sorted(versions.items()) for v in sorted({lo, hi})]
    missed = [x for x in ends if x not in SENT]
    if not only:
        print("%d APIs served by both, each sent at its lowest and highest common version%s"
              % (len(versions), (": not sent: " + ", ".join("%s v%d" % x for x in missed))
                 if missed else ""))
    dump = os.environ.get("KAAS_PEER_DUMP")  # every compared answer, for a reader
    if dump:
        import json
        with open(dump, "w") as fh:
            json.dump(obs, fh, indent=1, sort_keys=True, default=str)
    entries = listed(diffs_md)
    used = set()
    bad = known = fine = 0
    ka, kb = obs.get("kafka", {}), obs.get("kaas", {})
    missing = object()
    for path in sorted(set(ka) | set(kb)):
        a, b = ka.get(path, missing), kb.get(path, missing)
        if a == b or (ANY in (a, b) and missing not in (a, b)):
            continue  # the same, or undefined beside an error code (compared itself)
        show = "%s: kafka %s, kaas %s" % (path, "(absent)" if a is missing else repr(a),
                                           "(absent)" if b is missing else repr(b))
        hit = [e for e in entries if fnmatch.fnmatchcase(path, e[0])]
        if not hit:
            bad += 1
            print("DIFF " + show, flush=True)
        elif hit[0][1]:
            known += 1
            used.add(hit[0][0])
            print("KNOWN-WRONG " + show + "  [" + hit[0][2] + "]")
        else:
            fine += 1
            used.add(hit[0][0])
            if os.environ.get("KAAS_PEER_VERBOSE"):
                print("listed " + show + "  [" + hit[0][2] + "]")
    for glob, wrong, heading in entries:
        if glob not in used and not only:
            print("note: `peer: %s` (%s) matched no difference%s" % (
                glob, heading, ": fixed?" if wrong else ""))
    print("%d answers compared in %.0f s: %d unlisted differences, %d known wrong answers, "
          "%d listed differences" % (len(set(ka) | set(kb)), time.time() - t0, bad, known, fine))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
