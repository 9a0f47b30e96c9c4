#!/usr/bin/env python3
"""api_versions_wire.py HOST:PORT — every API and every version kaasd
advertises, encoded here (kafka_messages.py, written from Kafka's message
definitions) and decoded by kaasd, and kaasd's answers decoded strictly
here (every byte, the tagged-field sections, the response header v0 or v1):
the wire check of issue 15 for the versions no packaged client speaks
(librdkafka 2.0 and kafka-python 2.0 stop below most flexible versions).

Exit 0 when every exchange decodes and says what it should; 1 otherwise,
with one FAIL line per problem."""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from kafka_schema import Reader, Short, decode, encode, uvarint, varint  # noqa: E402
from kafka_messages import API, NO_FLEX  # noqa: E402
import api_admin_wire as admin_wire  # noqa: E402

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, flush=True)


# ---------------------------------------------------------------- CRC32C
_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def record_batch(values, pid=-1, epoch=-1, seq=-1):
    """A RecordBatch v2 of the values (no keys, no headers), of producer
    pid at epoch from sequence seq (-1s: none)."""
    now = int(time.time() * 1000)
    recs = bytearray()
    for i, val in enumerate(values):
        body = b"\x00" + varint(0) + varint(i) + varint(-1) + varint(len(val)) + val + varint(0)
        recs += varint(len(body)) + body
    after_crc = struct.pack(">hiqqqhii", 0, len(values) - 1, now, now, pid, epoch, seq,
                            len(values)) + bytes(recs)
    head = struct.pack(">qii", 0, 4 + 1 + 4 + len(after_crc), -1) + b"\x02"
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


# ---------------------------------------------------------------- the wire
class Conn:
    def __init__(self, hostport):
        host, port = hostport.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=20)
        self.corr = 0

    def call(self, name, v, values, answer_v=None):
        """Send request `name` v with values; the decoded answer (a dict),
        or None when the connection was closed.  answer_v: decode the
        answer as that (classic) version instead."""
        key, flex_from, req, resp = API[name]
        flex = v >= flex_from
        self.corr += 1
        hdr = struct.pack(">hhi", key, v, self.corr) + struct.pack(">h", 4) + b"wire"
        if flex:
            hdr += uvarint(0)
        body = encode(req, values, v, flex)
        if flex:
            body += uvarint(0)
        msg = hdr + bytes(body)
        dump = os.environ.get("KAAS_WIRE_DUMP")  # seeds for the request fuzzer
        if dump and (flex or os.environ.get("KAAS_WIRE_DUMP_CLASSIC")):
            with open(os.path.join(dump, "%s_v%d" % (name.lower(), v)), "wb") as fh:
                fh.write(msg)
        self.s.sendall(struct.pack(">i", len(msg)) + msg)
        try:
            size = struct.unpack(">i", self.recv(4))[0]
        except (ConnectionError, socket.timeout, struct.error):
            return None
        r = Reader(self.recv(size))
        if r.fixed("i") != self.corr:
            raise Short("correlation id")
        if answer_v is not None:
            v, flex = answer_v, False
        if flex and key != 18:  # response header v1, except ApiVersions (v0)
            r.tags()
        d = decode(resp, r, v, flex)
        if flex:
            r.tags()
        r.done()
        return d

    def recv(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise ConnectionError("closed")
            b += c
        return b


def fetch_request(topic, offset):
    """A Fetch of topic/0 from offset, up to 4 MiB, for any version."""
    return {"ReplicaId": -1, "MaxWaitMs": 100, "MinBytes": 1, "MaxBytes": 1 << 22,
            "SessionEpoch": -1, "ForgottenTopicsData": [], "RackId": "",
            "Topics": [{"Topic": topic, "Partitions": [
                {"Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": offset,
                 "LastFetchedEpoch": -1, "LogStartOffset": -1, "PartitionMaxBytes": 1 << 22}]}]}


def exchange(c, name, v, values, check):
    """One request: decode errors and failed checks are reported."""
    print("%s v%d" % (name, v), flush=True)
    try:
        d = c.call(name, v, values)
    except Short as e:
        fail("%s v%d: answer does not decode: %s" % (name, v, e))
        return None
    if d is None:
        fail("%s v%d: connection closed" % (name, v))
        return None
    why = check(d)
    if why:
        fail("%s v%d: %s (%r)" % (name, v, why, d))
    return d


def ok_if(cond, why):
    return None if cond else why


def main(hostport):
    c = Conn(hostport)
    d = c.call("ApiVersions", 3, {"ClientSoftwareName": "wire", "ClientSoftwareVersion": "1"})
    served = {a["ApiKey"]: (a["MinVersion"], a["MaxVersion"]) for a in d["ApiKeys"]}
    byname = {n: served.get(API[n][0]) for n in API}
    for key in served:
        if key not in [a[0] for a in API.values()]:
            fail("API %d is advertised but this test has no definition of it" % key)
    # Issue 15: every API from Kafka 3.9's lowest version (Produce and Fetch
    # from the RecordBatch v2 ones), and its flexible versions.
    for name, (key, flex_from, _, _) in API.items():
        want_min = {"Produce": 3, "Fetch": 4}.get(name, 0)
        r = byname[name]
        if not r or r[0] != want_min or (flex_from != NO_FLEX and r[1] < flex_from):
            fail("%s: serves %r, wants %d up to at least its first flexible version %d"
                 % (name, r, want_min, flex_from))

    def versions(name):
        r = byname[name]
        return range(r[0], r[1] + 1) if r else range(0)

    for v in versions("ApiVersions"):
        exchange(c, "ApiVersions", v, {"ClientSoftwareName": "wire", "ClientSoftwareVersion": "1"},
                 lambda d: ok_if(d["ErrorCode"] == 0 and len(d["ApiKeys"]) == len(served),
                                 "error or API count"))
    # Past the range: UNSUPPORTED_VERSION in the v0 format (KIP-511).
    hi = byname["ApiVersions"][1] + 1
    try:
        d = c.call("ApiVersions", hi, {"ClientSoftwareName": "wire", "ClientSoftwareVersion": "1"},
                   answer_v=0)
        if not d or d["ErrorCode"] != 35 or len(d["ApiKeys"]) != len(served):
            fail("ApiVersions v%d: not UNSUPPORTED_VERSION with the ranges: %r" % (hi, d))
    except Short as e:
        fail("ApiVersions v%d: answer does not decode as v0: %s" % (hi, e))

    # Topics: created with every CreateTopics version.
    for v in versions("CreateTopics"):
        exchange(c, "CreateTopics", v, {
            "Topics": [{"Name": "wc%d" % v, "NumPartitions": 2, "ReplicationFactor": -1,
                        "Assignments": [], "Configs": []}],
            "TimeoutMs": 5000, "ValidateOnly": False},
            lambda d: ok_if(d["Topics"][0]["ErrorCode"] == 0 and
                            d["Topics"][0].get("NumPartitions", 2) == 2, "create failed"))
    for v in versions("Metadata"):
        topics = [{"Name": "wc0"}] if v > 0 else [{"Name": "wc0"}]
        exchange(c, "Metadata", v, {"Topics": topics, "AllowAutoTopicCreation": True},
                 lambda d: ok_if(len(d["Brokers"]) >= 1 and d["Topics"][0]["ErrorCode"] == 0 and
                                 len(d["Topics"][0]["Partitions"]) == 2, "topic wc0"))
    # Produce with every version (to wp/0), then read it back.
    exchange(c, "Metadata", 1, {"Topics": [{"Name": "wp"}]}, lambda d: None)
    time.sleep(0.5)
    n = 0
    for v in versions("Produce"):
        def pcheck(d, n=n):
            p = d["Responses"][0]["PartitionResponses"][0]
            return ok_if(p["ErrorCode"] == 0 and p["BaseOffset"] == n, "produce at %d" % n)
        exchange(c, "Produce", v, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 5000,
                                   "TopicData": [{"Name": "wp", "PartitionData": [
                                       {"Index": 0, "Records": record_batch([b"v%d" % v])}]}]},
                 pcheck)
        n += 1
    for v in versions("Fetch"):
        def fcheck(d, v=v):
            p = d["Responses"][0]["Partitions"][0]
            recs = p["Records"] or b""
            return ok_if(p["ErrorCode"] == 0 and p["HighWatermark"] == n and len(recs) > 61 and
                         struct.unpack(">q", recs[:8])[0] == 1, "fetch from 1")
        exchange(c, "Fetch", v, fetch_request("wp", 1), fcheck)
    # A fetch large enough to go by sendfile (past --zero-copy-min-bytes,
    # 64 KiB): its records are spliced between the encoded fields, before
    # the partition's tagged fields in a flexible version.
    big = b"z" * 100000
    pv, fv = max(versions("Produce")), max(versions("Fetch"))
    exchange(c, "Produce", pv, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 5000,
                                "TopicData": [{"Name": "wbig", "PartitionData": [
                                    {"Index": 0, "Records": record_batch([big])}]}]},
             lambda d: None)
    time.sleep(0.5)
    for _ in range(2):  # the first may have auto-created the topic
        exchange(c, "Produce", pv, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 5000,
                                    "TopicData": [{"Name": "wbig", "PartitionData": [
                                        {"Index": 0, "Records": record_batch([big])}]}]},
                 lambda d: None)
    exchange(c, "Fetch", fv, fetch_request("wbig", 0),
             lambda d: ok_if(len(d["Responses"][0]["Partitions"][0]["Records"] or b"") > 100000,
                             "no large records"))
    for v in versions("ListOffsets"):
        def lcheck(d, v=v):
            p = d["Topics"][0]["Partitions"][0]
            off = p["OldStyleOffsets"][0] if v == 0 else p["Offset"]
            return ok_if(p["ErrorCode"] == 0 and off == n, "latest offset %d" % n)
        exchange(c, "ListOffsets", v, {"ReplicaId": -1, "Topics": [{"Name": "wp", "Partitions": [
            {"PartitionIndex": 0, "CurrentLeaderEpoch": -1, "Timestamp": -1,
             "MaxNumOffsets": 1}]}]}, lcheck)
    # The special times of later versions: -4 (earliest local, v8+) is the
    # log start; -5 (last tiered, v9+) is none; older versions refuse them.
    for v in versions("ListOffsets"):
        for ts, since, want in ((-4, 8, 0), (-5, 9, -1)):
            def scheck(d, v=v, since=since, want=want):
                p = d["Topics"][0]["Partitions"][0]
                if v < since:
                    return ok_if(p["ErrorCode"] == 35, "not UNSUPPORTED_VERSION")
                return ok_if(p["ErrorCode"] == 0 and p["Offset"] == want, "offset %d" % want)
            exchange(c, "ListOffsets", v, {"ReplicaId": -1, "Topics": [{
                "Name": "wp", "Partitions": [{"PartitionIndex": 0, "CurrentLeaderEpoch": -1,
                                              "Timestamp": ts, "MaxNumOffsets": 1}]}]}, scheck)
    for v in versions("InitProducerId"):
        exchange(c, "InitProducerId", v, {"TransactionalId": None, "TransactionTimeoutMs": 1000,
                                          "ProducerId": -1, "ProducerEpoch": -1},
                 lambda d: ok_if(d["ErrorCode"] == 0 and d["ProducerId"] >= 0, "no producer id"))
    for v in versions("FindCoordinator"):
        exchange(c, "FindCoordinator", v, {"Key": "wg", "KeyType": 0, "CoordinatorKeys": ["wg"]},
                 lambda d: ok_if(d.get("ErrorCode", 0) == 0 and
                                 all(x["ErrorCode"] == 0 for x in d.get("Coordinators", [])),
                                 "no coordinator"))
    groups(c, versions)
    # Offsets of an empty group, every version.
    for v in versions("OffsetCommit"):
        exchange(c, "OffsetCommit", v, {
            "GroupId": "wo", "GenerationId": -1, "MemberId": "", "GroupInstanceId": None,
            "RetentionTimeMs": -1, "Topics": [{"Name": "wp", "Partitions": [
                {"PartitionIndex": 0, "CommittedOffset": 10 + v, "CommittedLeaderEpoch": -1,
                 "CommitTimestamp": -1, "CommittedMetadata": "m%d" % v}]}]},
            lambda d: ok_if(d["Topics"][0]["Partitions"][0]["ErrorCode"] == 0, "commit"))
    last = 10 + byname["OffsetCommit"][1]
    for v in versions("OffsetFetch"):
        def ocheck(d, v=v):
            if v >= 8:  # two groups: the committed one, and one never committed
                g = d["Groups"]
                p, q = g[0]["Topics"][0]["Partitions"][0], g[1]["Topics"][0]["Partitions"][0]
                return ok_if(len(g) == 2 and g[0]["GroupId"] == "wo" and g[0]["ErrorCode"] == 0
                             and p["CommittedOffset"] == last and q["CommittedOffset"] == -1,
                             "committed %d and none" % last)
            p = d["Topics"][0]["Partitions"][0]
            return ok_if(p["ErrorCode"] == 0 and p["CommittedOffset"] == last and
                         d.get("ErrorCode", 0) == 0, "committed %d" % last)
        topics = [{"Name": "wp", "PartitionIndexes": [0]}]
        exchange(c, "OffsetFetch", v, {"GroupId": "wo", "Topics": topics, "RequireStable": False,
                                       "Groups": [{"GroupId": "wo", "Topics": topics},
                                                  {"GroupId": "wo-none", "Topics": topics}]},
                 ocheck)
    for v in versions("DescribeConfigs"):
        exchange(c, "DescribeConfigs", v, {"Resources": [
            {"ResourceType": 2, "ResourceName": "wp", "ConfigurationKeys": None}],
            "IncludeSynonyms": True, "IncludeDocumentation": True},
            lambda d: ok_if(d["Results"][0]["ErrorCode"] == 0 and d["Results"][0]["Configs"],
                            "no configs"))
    for v in versions("AlterConfigs"):
        exchange(c, "AlterConfigs", v, {"Resources": [
            {"ResourceType": 2, "ResourceName": "wp",
             "Configs": [{"Name": "retention.ms", "Value": str(100000 + v)}]}],
            "ValidateOnly": False},
            lambda d: ok_if(d["Responses"][0]["ErrorCode"] == 0 and
                            d["Responses"][0]["ResourceName"] == "wp", "alter"))
    for v in versions("IncrementalAlterConfigs"):
        exchange(c, "IncrementalAlterConfigs", v, {"Resources": [
            {"ResourceType": 2, "ResourceName": "wp",
             "Configs": [{"Name": "retention.bytes", "ConfigOperation": 0,
                          "Value": str(1 << (30 + v))}]}], "ValidateOnly": False},
            lambda d: ok_if(d["Responses"][0]["ErrorCode"] == 0, "incremental alter"))
    for v in versions("DeleteGroups"):
        exchange(c, "DeleteGroups", v, {"GroupsNames": ["wnone%d" % v]},
                 lambda d: ok_if(d["Results"][0]["ErrorCode"] == 69 and
                                 d["Results"][0]["GroupId"] == "wnone%d" % v,
                                 "GROUP_ID_NOT_FOUND"))
    for v in versions("OffsetDelete"):
        exchange(c, "OffsetDelete", v, {"GroupId": "wnone", "Topics": [
            {"Name": "wp", "Partitions": [{"PartitionIndex": 0}]}]},
            lambda d: ok_if(d["ErrorCode"] == 69, "GROUP_ID_NOT_FOUND"))
    for i, v in enumerate(versions("CreatePartitions")):
        exchange(c, "CreatePartitions", v, {"Topics": [
            {"Name": "wc0", "Count": 3 + i, "Assignments": None}], "TimeoutMs": 5000,
            "ValidateOnly": False},
            lambda d: ok_if(d["Results"][0]["ErrorCode"] == 0, "grow"))
    sasl(hostport, versions)
    for v in versions("DeleteTopics"):
        exchange(c, "DeleteTopics", v, {"TopicNames": ["wc%d" % v], "TimeoutMs": 5000},
                 lambda d: ok_if(d["Responses"][0]["ErrorCode"] == 0 and
                                 d["Responses"][0]["Name"] == "wc%d" % v, "delete"))
    admin_wire.main(c, versions, exchange, ok_if, fail, record_batch)
    acls(c, versions)
    client_quotas(c, versions)


def sasl(hostport, versions):
    """The SASL APIs on a PLAINTEXT listener (each on a fresh connection:
    kaasd answers ILLEGAL_SASL_STATE and closes it), and the SCRAM user
    APIs: a credential stored, described, deleted, then not found."""
    import hashlib
    for v in versions("SaslHandshake"):
        exchange(Conn(hostport), "SaslHandshake", v, {"Mechanism": "SCRAM-SHA-512"},
                 lambda d: ok_if(d["ErrorCode"] == 34, "ILLEGAL_SASL_STATE"))
    for v in versions("SaslAuthenticate"):
        exchange(Conn(hostport), "SaslAuthenticate", v, {"AuthBytes": b"n,,n=x,r=abc"},
                 lambda d: ok_if(d["ErrorCode"] == 34 and d["ErrorMessage"], "ILLEGAL_SASL_STATE"))
    c = Conn(hostport)
    salt = b"wire-salt-0123456789"
    salted = hashlib.pbkdf2_hmac("sha256", b"wire-pw", salt, 4096)
    for v in versions("AlterUserScramCredentials"):
        exchange(c, "AlterUserScramCredentials", v, {"Deletions": [], "Upsertions": [
            {"Name": "wire", "Mechanism": 1, "Iterations": 4096, "Salt": salt,
             "SaltedPassword": salted}]},
            lambda d: ok_if(d["Results"] == [{"User": "wire", "ErrorCode": 0,
                                              "ErrorMessage": None}], "upsert"))
    for v in versions("DescribeUserScramCredentials"):
        exchange(c, "DescribeUserScramCredentials", v, {"Users": [{"Name": "wire"}]},
                 lambda d: ok_if(d["ErrorCode"] == 0 and d["Results"][0]["CredentialInfos"] ==
                                 [{"Mechanism": 1, "Iterations": 4096}], "describe"))
        exchange(c, "DescribeUserScramCredentials", v, {"Users": None},
                 lambda d: ok_if([r["User"] for r in d["Results"]] == ["wire"], "describe all"))
    for v in versions("AlterUserScramCredentials"):
        exchange(c, "AlterUserScramCredentials", v, {"Deletions": [
            {"Name": "wire", "Mechanism": 1}], "Upsertions": [
            {"Name": "w2", "Mechanism": 2, "Iterations": 100, "Salt": salt,
             "SaltedPassword": bytes(64)}]},
            lambda d: ok_if([(r["User"], r["ErrorCode"]) for r in d["Results"]] ==
                            [("wire", 0), ("w2", 93)], "delete, UNACCEPTABLE_CREDENTIAL"))
    for v in versions("DescribeUserScramCredentials"):
        exchange(c, "DescribeUserScramCredentials", v, {"Users": [{"Name": "wire"}]},
                 lambda d: ok_if(d["Results"][0]["ErrorCode"] == 91, "RESOURCE_NOT_FOUND"))


def acls(c, versions):
    """Every version of the ACL APIs, on topics no other exchange uses
    (a binding on a topic restricts it for other principals)."""
    def acl(v, **kw):
        d = {"ResourceType": 2, "ResourceName": "wacl%d" % v, "ResourcePatternType": 3,
             "Principal": "User:wire", "Host": "*", "Operation": 3, "PermissionType": 3}
        d.update(kw)
        return d

    def flt(v):
        return {"ResourceTypeFilter": 2, "ResourceNameFilter": "wacl%d" % v,
                "PatternTypeFilter": 3, "PrincipalFilter": None, "HostFilter": None,
                "Operation": 1, "PermissionType": 1}
    for v in versions("CreateAcls"):
        exchange(c, "CreateAcls", v, {"Creations": [acl(v), acl(v, Operation=4)]},
                 lambda d: ok_if([x["ErrorCode"] for x in d["Results"]] == [0, 0], "create"))
    for v in versions("DescribeAcls"):
        exchange(c, "DescribeAcls", v, flt(v), lambda d: ok_if(
            d["ErrorCode"] == 0 and len(d["Resources"]) == 1 and
            sorted(a["Operation"] for a in d["Resources"][0]["Acls"]) == [3, 4], "describe"))
    for v in versions("DeleteAcls"):
        exchange(c, "DeleteAcls", v, {"Filters": [flt(v)]}, lambda d: ok_if(
            d["FilterResults"][0]["ErrorCode"] == 0 and
            len(d["FilterResults"][0]["MatchingAcls"]) == 2, "delete"))


def client_quotas(c, versions):
    """Every version of the client quota APIs: set, describe, remove."""
    for v in versions("AlterClientQuotas"):
        ent = [{"EntityType": "user", "EntityName": "wq%d" % v},
               {"EntityType": "client-id", "EntityName": None}]
        exchange(c, "AlterClientQuotas", v, {"Entries": [{"Entity": ent, "Ops": [
            {"Key": "producer_byte_rate", "Value": 1e6, "Remove": False}]}],
            "ValidateOnly": False},
            lambda d: ok_if(d["Entries"][0]["ErrorCode"] == 0 and
                            d["Entries"][0]["Entity"] == ent, "alter"))
    for v in versions("DescribeClientQuotas"):
        exchange(c, "DescribeClientQuotas", v, {"Components": [
            {"EntityType": "user", "MatchType": 0, "Match": "wq%d" % v}], "Strict": False},
            lambda d: ok_if(d["ErrorCode"] == 0 and len(d["Entries"]) == 1 and
                            d["Entries"][0]["Values"] == [{"Key": "producer_byte_rate",
                                                           "Value": 1e6}], "describe"))
    for v in versions("AlterClientQuotas"):
        ent = [{"EntityType": "user", "EntityName": "wq%d" % v},
               {"EntityType": "client-id", "EntityName": None}]
        exchange(c, "AlterClientQuotas", v, {"Entries": [{"Entity": ent, "Ops": [
            {"Key": "producer_byte_rate", "Value": 0, "Remove": True}]}], "ValidateOnly": False},
            lambda d: ok_if(d["Entries"][0]["ErrorCode"] == 0, "remove"))


def groups(c, versions):
    """A one-member group through every version of the membership APIs."""
    for v in versions("JoinGroup"):
        g = "wg%d" % v
        join = {"GroupId": g, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
                "MemberId": "", "GroupInstanceId": None, "ProtocolType": "consumer",
                "Protocols": [{"Name": "range", "Metadata": b"\x00\x01"}], "Reason": None}
        d = exchange(c, "JoinGroup", v, join, lambda d: ok_if(
            d["ErrorCode"] in (0, 79), "join"))
        if d and d["ErrorCode"] == 79:  # MEMBER_ID_REQUIRED (v4+): join again with it
            join["MemberId"] = d["MemberId"]
            d = exchange(c, "JoinGroup", v, join, lambda d: ok_if(d["ErrorCode"] == 0, "rejoin"))
        if not d or d["ErrorCode"] != 0:
            continue
        if v >= 7 and d["ProtocolType"] != "consumer":
            fail("JoinGroup v%d: protocol type %r" % (v, d["ProtocolType"]))
        me, gen = d["MemberId"], d["GenerationId"]
        sv = min(v, byname_max(versions, "SyncGroup"))
        exchange(c, "SyncGroup", sv, {
            "GroupId": g, "GenerationId": gen, "MemberId": me, "GroupInstanceId": None,
            "ProtocolType": "consumer", "ProtocolName": "range",
            "Assignments": [{"MemberId": me, "Assignment": b"\x00\x07"}]},
            lambda d: ok_if(d["ErrorCode"] == 0 and d["Assignment"] == b"\x00\x07", "sync"))
        hv = min(v, byname_max(versions, "Heartbeat"))
        exchange(c, "Heartbeat", hv, {"GroupId": g, "GenerationId": gen, "MemberId": me,
                                      "GroupInstanceId": None},
                 lambda d: ok_if(d["ErrorCode"] == 0, "heartbeat"))
        dv = min(v, byname_max(versions, "DescribeGroups"))
        exchange(c, "DescribeGroups", dv, {"Groups": [g], "IncludeAuthorizedOperations": False},
                 lambda d: ok_if(d["Groups"][0]["ErrorCode"] == 0 and
                                 d["Groups"][0]["GroupState"] == "Stable" and
                                 d["Groups"][0]["Members"][0]["MemberId"] == me, "describe"))
        lv = min(v, byname_max(versions, "ListGroups"))
        exchange(c, "ListGroups", lv, {"StatesFilter": [], "TypesFilter": []}, lambda d: ok_if(
            d["ErrorCode"] == 0 and g in [x["GroupId"] for x in d["Groups"]] and
            all(x.get("GroupState", "Stable") == "Stable" and x.get("GroupType", "classic") ==
                "classic" for x in d["Groups"] if x["GroupId"] == g), "list"))
        list_filters(c, versions, g)
        qv = min(v, byname_max(versions, "LeaveGroup"))
        exchange(c, "LeaveGroup", qv, {"GroupId": g, "MemberId": me, "Members": [
            {"MemberId": me, "GroupInstanceId": None, "Reason": "done"}]},
            lambda d: ok_if(d["ErrorCode"] == 0 and
                            all(m["ErrorCode"] == 0 for m in d.get("Members", [])), "leave"))


def list_filters(c, versions, g):
    """ListGroups v4+ (states filter) and v5+ (types filter), case-blind,
    while group g is Stable."""
    for v in [x for x in versions("ListGroups") if x >= 4]:
        for states, types, want in ((["stable"], [], True), (["Empty", "Dead"], [], False),
                                    ([], ["Classic"], True), ([], ["consumer"], False)):
            if types and v < 5:
                continue
            exchange(c, "ListGroups", v, {"StatesFilter": states, "TypesFilter": types},
                     lambda d, want=want: ok_if(
                         (g in [x["GroupId"] for x in d["Groups"]]) == want,
                         "filter %r %r: listed %s" % (states, types, not want)))


def byname_max(versions, name):
    return max(versions(name))


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(1 if FAILS else 0)
