#!/usr/bin/env python3
"""acl_matrix.py HOST:PORT TLSDIR VOLUMEDIR... — the ACL matrix of issue 17.

Principals are TLS client certificates: User:CN=admin (a super user) sets
things up; User:CN=alice first has no binding at all and sends every API
kaasd serves (every key ApiVersions advertises must be in CALLS below):
each answers Kafka's authorization error and the volumes are unchanged
(every file's content, except the broker heartbeat documents).  Then admin
grants alice exactly what each API needs and every call works.  Last, the
decision rules: deny wins, prefixed patterns, implied DESCRIBE, a
wildcard principal, Metadata hiding topics.

Exit 0 when all hold; 1 with FAIL lines otherwise."""
import hashlib
import os
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kafka"))
from api_versions_wire import Conn, record_batch  # noqa: E402
from kafka_messages import API  # noqa: E402

FAILS = []
TOPIC_AUTH, GROUP_AUTH, CLUSTER_AUTH, TXN_AUTH = 29, 30, 31, 53
AUTH_ERRORS = (TOPIC_AUTH, GROUP_AUTH, CLUSTER_AUTH, TXN_AUTH)
ALICE = "User:CN=alice"


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, flush=True)


class TlsConn(Conn):
    def __init__(self, hostport, tls, who):
        host, port = hostport.rsplit(":", 1)
        ctx = ssl.create_default_context(cafile=os.path.join(tls, "ca.pem"))
        ctx.load_cert_chain(os.path.join(tls, who + ".pem"), os.path.join(tls, who + ".key"))
        raw = socket.create_connection((host, int(port)), timeout=20)
        self.s = ctx.wrap_socket(raw, server_hostname="localhost")
        self.corr = 0


def snapshot(dirs):
    """Path -> sha256 of every file (broker heartbeats and temps left out)."""
    out = {}
    for top in dirs:
        for root, _, files in os.walk(top):
            if os.sep + "brokers" in root[len(top):]:
                continue
            for f in files:
                if f.startswith(".tmp.") or f.startswith(".kaas-excl."):
                    continue
                p = os.path.join(root, f)
                try:
                    with open(p, "rb") as fh:
                        out[p] = hashlib.sha256(fh.read()).hexdigest()
                except OSError:
                    pass
    return out


# --------------------------------------------------------- the requests
def produce(t="mt", txn=None):
    return {"TransactionalId": txn, "Acks": -1, "TimeoutMs": 5000, "TopicData": [
        {"Name": t, "PartitionData": [{"Index": 0, "Records": record_batch([b"x"])}]}]}


def fetch(t="mt"):
    return {"ReplicaId": -1, "MaxWaitMs": 10, "MinBytes": 1, "MaxBytes": 1 << 20,
            "IsolationLevel": 0, "SessionId": 0, "SessionEpoch": -1, "RackId": "",
            "ForgottenTopicsData": [], "Topics": [{"Topic": t, "Partitions": [
                {"Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0,
                 "LastFetchedEpoch": -1, "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20}]}]}


def commit(g="mg", t="mt", gen=-1, member=""):
    return {"GroupId": g, "GenerationId": gen, "MemberId": member, "GroupInstanceId": None,
            "Topics": [{"Name": t, "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 1,
                                                   "CommittedLeaderEpoch": -1,
                                                   "CommittedMetadata": ""}]}]}


def join(g="mg", member=""):
    return {"GroupId": g, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
            "MemberId": member, "GroupInstanceId": None, "ProtocolType": "consumer",
            "Protocols": [{"Name": "range", "Metadata": b"\x00\x01"}], "Reason": None}


def acl(rt, name, op, perm=3, pattern=3, who=ALICE):
    return {"ResourceType": rt, "ResourceName": name, "ResourcePatternType": pattern,
            "Principal": who, "Host": "*", "Operation": op, "PermissionType": perm}


def acl_filter(rt=1, name=None, pattern=1):
    return {"ResourceTypeFilter": rt, "ResourceNameFilter": name, "PatternTypeFilter": pattern,
            "PrincipalFilter": None, "HostFilter": None, "Operation": 1, "PermissionType": 1}


def p0(d, key="Responses", parts="PartitionResponses"):
    return d[key][0][parts][0]["ErrorCode"]


# (API, version, request, error of the answer).  Each runs as alice: first
# with no binding (the error must be `want`), then with GRANTS (the error
# must not be an authorization error).
STATE = {}


def calls():
    m = STATE.get("member", "")
    gen = STATE.get("gen", -1)
    return [
        ("ApiVersions", 3, {"ClientSoftwareName": "acl", "ClientSoftwareVersion": "1"},
         lambda d: d["ErrorCode"], 0),
        ("Produce", 8, produce(), lambda d: p0(d), TOPIC_AUTH),
        ("Fetch", 11, fetch(), lambda d: p0(d, "Responses", "Partitions"), TOPIC_AUTH),
        ("ListOffsets", 5, {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [
            {"Name": "mt", "Partitions": [{"PartitionIndex": 0, "CurrentLeaderEpoch": -1,
                                           "Timestamp": -1}]}]},
         lambda d: p0(d, "Topics", "Partitions"), TOPIC_AUTH),
        ("Metadata", 9, {"Topics": [{"Name": "mt"}], "AllowAutoTopicCreation": False,
                         "IncludeTopicAuthorizedOperations": False},
         lambda d: d["Topics"][0]["ErrorCode"], TOPIC_AUTH),
        ("FindCoordinator", 3, {"Key": "mg", "KeyType": 0}, lambda d: d["ErrorCode"], GROUP_AUTH),
        ("JoinGroup", 7, join(member=m), lambda d: d["ErrorCode"], GROUP_AUTH),
        ("SyncGroup", 5, {"GroupId": "mg", "GenerationId": gen, "MemberId": m,
                          "GroupInstanceId": None, "ProtocolType": "consumer",
                          "ProtocolName": "range",
                          "Assignments": [{"MemberId": m, "Assignment": b""}]},
         lambda d: d["ErrorCode"], GROUP_AUTH),
        ("Heartbeat", 4, {"GroupId": "mg", "GenerationId": gen, "MemberId": m,
                          "GroupInstanceId": None}, lambda d: d["ErrorCode"], GROUP_AUTH),
        ("OffsetCommit", 8, commit(gen=gen, member=m), lambda d: p0(d, "Topics", "Partitions"),
         GROUP_AUTH),
        ("OffsetFetch", 7, {"GroupId": "mg", "Topics": [{"Name": "mt", "PartitionIndexes": [0]}],
                            "RequireStable": False}, lambda d: d["ErrorCode"], GROUP_AUTH),
        ("DescribeGroups", 5, {"Groups": ["mg"], "IncludeAuthorizedOperations": False},
         lambda d: d["Groups"][0]["ErrorCode"], GROUP_AUTH),
        ("ListGroups", 3, {}, lambda d: (d["ErrorCode"] or
                                         (0 if "mg" in [g["GroupId"] for g in d["Groups"]]
                                          else GROUP_AUTH)), GROUP_AUTH),
        ("LeaveGroup", 4, {"GroupId": "mg", "Members": [
            {"MemberId": m, "GroupInstanceId": None}]}, lambda d: d["ErrorCode"], GROUP_AUTH),
        ("DescribeConfigs", 4, {"Resources": [{"ResourceType": 2, "ResourceName": "mt",
                                               "ConfigurationKeys": None},
                                              {"ResourceType": 4, "ResourceName": "0",
                                               "ConfigurationKeys": None}],
                                "IncludeSynonyms": False, "IncludeDocumentation": False},
         lambda d: [r["ErrorCode"] for r in d["Results"]], [TOPIC_AUTH, CLUSTER_AUTH]),
        ("AlterConfigs", 2, {"Resources": [{"ResourceType": 2, "ResourceName": "mt", "Configs": [
            {"Name": "retention.ms", "Value": "86400000"}]}], "ValidateOnly": False},
         lambda d: d["Responses"][0]["ErrorCode"], TOPIC_AUTH),
        ("IncrementalAlterConfigs", 1, {"Resources": [{"ResourceType": 2, "ResourceName": "mt",
                                                       "Configs": [{"Name": "retention.bytes",
                                                                    "ConfigOperation": 0,
                                                                    "Value": "1073741824"}]}],
                                        "ValidateOnly": False},
         lambda d: d["Responses"][0]["ErrorCode"], TOPIC_AUTH),
        ("CreatePartitions", 2, {"Topics": [{"Name": "mt", "Count": STATE.get("parts", 2),
                                             "Assignments": None}],
                                 "TimeoutMs": 5000, "ValidateOnly": False},
         lambda d: d["Results"][0]["ErrorCode"], TOPIC_AUTH),
        ("CreateTopics", 5, {"Topics": [{"Name": "mt2", "NumPartitions": 1,
                                         "ReplicationFactor": -1, "Assignments": [],
                                         "Configs": []}], "TimeoutMs": 5000,
                             "ValidateOnly": False},
         lambda d: d["Topics"][0]["ErrorCode"], TOPIC_AUTH),
        ("DeleteTopics", 4, {"TopicNames": ["mt2"], "TimeoutMs": 5000},
         lambda d: d["Responses"][0]["ErrorCode"], TOPIC_AUTH),
        ("InitProducerId", 4, {"TransactionalId": None, "TransactionTimeoutMs": 1000,
                               "ProducerId": -1, "ProducerEpoch": -1},
         lambda d: d["ErrorCode"], CLUSTER_AUTH),
        ("OffsetDelete", 0, {"GroupId": "mg", "Topics": [
            {"Name": "mt", "Partitions": [{"PartitionIndex": 0}]}]},
         lambda d: d["ErrorCode"], GROUP_AUTH),
        ("DeleteGroups", 2, {"GroupsNames": ["mg"]}, lambda d: d["Results"][0]["ErrorCode"],
         GROUP_AUTH),
        ("CreateAcls", 3, {"Creations": [acl(2, "zz", 3)]},
         lambda d: d["Results"][0]["ErrorCode"], CLUSTER_AUTH),
        ("DescribeAcls", 3, acl_filter(), lambda d: d["ErrorCode"], CLUSTER_AUTH),
        ("DeleteAcls", 3, {"Filters": [acl_filter(2, "zz", 3)]},
         lambda d: d["FilterResults"][0]["ErrorCode"], CLUSTER_AUTH),
        # The admin APIs of issue 15.
        ("DeleteRecords", 2, {"Topics": [{"Name": "mt", "Partitions": [
            {"PartitionIndex": 0, "Offset": 0}]}], "TimeoutMs": 5000},
         lambda d: p0(d, "Topics", "Partitions"), TOPIC_AUTH),
        ("OffsetForLeaderEpoch", 4, {"ReplicaId": -1, "Topics": [{"Topic": "mt", "Partitions": [
            {"Partition": 0, "CurrentLeaderEpoch": -1, "LeaderEpoch": 0}]}]},
         lambda d: p0(d, "Topics", "Partitions"), TOPIC_AUTH),
        ("DescribeLogDirs", 4, {"Topics": None}, lambda d: d["ErrorCode"], CLUSTER_AUTH),
        # DescribeCluster: Kafka demands nothing (issue 35).
        ("DescribeCluster", 1, {"IncludeClusterAuthorizedOperations": False, "EndpointType": 1},
         lambda d: d["ErrorCode"], 0),
        ("DescribeProducers", 0, {"Topics": [{"Name": "mt", "PartitionIndexes": [0]}]},
         lambda d: p0(d, "Topics", "Partitions"), TOPIC_AUTH),
        ("DescribeTopicPartitions", 0, {"Topics": [{"Name": "mt"}],
                                        "ResponsePartitionLimit": 100, "Cursor": None},
         lambda d: d["Topics"][0]["ErrorCode"], TOPIC_AUTH),
        # Transactions (issue 16): the transactional id mtx (nothing of it
        # exists; with its bindings the coordinator answers a non-ACL error).
        ("AddPartitionsToTxn", 3, {"TransactionalId": "mtx", "ProducerId": 0, "ProducerEpoch": 0,
                                   "Topics": [{"Name": "mt", "Partitions": [0]}]},
         lambda d: d["Results"][0]["Results"][0]["PartitionErrorCode"], TXN_AUTH),
        ("AddOffsetsToTxn", 3, {"TransactionalId": "mtx", "ProducerId": 0, "ProducerEpoch": 0,
                                "GroupId": "mg"}, lambda d: d["ErrorCode"], TXN_AUTH),
        ("EndTxn", 3, {"TransactionalId": "mtx", "ProducerId": 0, "ProducerEpoch": 0,
                       "Committed": False}, lambda d: d["ErrorCode"], TXN_AUTH),
        ("TxnOffsetCommit", 3, {"TransactionalId": "mtx", "GroupId": "mg", "ProducerId": 0,
                                "ProducerEpoch": 0, "GenerationId": -1, "MemberId": "",
                                "GroupInstanceId": None, "Topics": [{"Name": "mt", "Partitions": [
                                    {"PartitionIndex": 0, "CommittedOffset": 1,
                                     "CommittedLeaderEpoch": -1, "CommittedMetadata": ""}]}]},
         lambda d: p0(d, "Topics", "Partitions"), TXN_AUTH),
        ("DescribeTransactions", 0, {"TransactionalIds": ["mtx"]},
         lambda d: d["TransactionStates"][0]["ErrorCode"], TXN_AUTH),
        ("ListTransactions", 0, {"StateFilters": [], "ProducerIdFilters": []},
         lambda d: d["ErrorCode"], 0),
        # The admin abort of a hanging transaction (KIP-664): CLUSTER_ACTION.
        ("WriteTxnMarkers", 1, {"Markers": [{"ProducerId": 0, "ProducerEpoch": 0,
                                             "TransactionResult": False, "CoordinatorEpoch": 0,
                                             "Topics": [{"Name": "mt", "PartitionIndexes": [0]}]}]},
         lambda d: p0(d["Markers"][0], "Topics", "Partitions"), CLUSTER_AUTH),
        # SCRAM credentials (issue 17).
        ("DescribeUserScramCredentials", 0, {"Users": [{"Name": "nobody"}]},
         lambda d: d["ErrorCode"], CLUSTER_AUTH),
        ("AlterUserScramCredentials", 0, {"Deletions": [{"Name": "nobody", "Mechanism": 1}],
                                          "Upsertions": []},
         lambda d: d["Results"][0]["ErrorCode"], CLUSTER_AUTH),
        # Client quotas (issue 35): DESCRIBE_CONFIGS / ALTER_CONFIGS on the
        # cluster (the alteration removes what is not there: no throttling).
        ("DescribeClientQuotas", 1, {"Components": [], "Strict": False},
         lambda d: d["ErrorCode"], CLUSTER_AUTH),
        ("AlterClientQuotas", 1, {"Entries": [{"Entity": [{"EntityType": "user",
                                                           "EntityName": "nobody"}],
                                               "Ops": [{"Key": "producer_byte_rate", "Value": 0,
                                                        "Remove": True}]}],
                                  "ValidateOnly": False},
         lambda d: d["Entries"][0]["ErrorCode"], CLUSTER_AUTH),
    ]


# Served APIs that need no binding and are not in the matrix: the SASL
# exchange (on this SSL listener kaasd answers ILLEGAL_SASL_STATE and closes
# the connection; tests/security/sasl_wire.sh covers it).
NO_ACL = {"SaslHandshake", "SaslAuthenticate"}


# What alice is granted for the second pass (topic 2, group 3, cluster 4;
# READ 3 WRITE 4 CREATE 5 DELETE 6 ALTER 7 CLUSTER_ACTION 9 DESCRIBE_CONFIGS 10
# ALTER_CONFIGS 11).
GRANTS = [acl(2, "mt", 4), acl(2, "mt", 3), acl(2, "mt", 6), acl(2, "mt", 7), acl(2, "mt", 11),
          acl(2, "mt2", 5), acl(2, "mt2", 6), acl(3, "mg", 3), acl(3, "mg", 6),
          acl(4, "kafka-cluster", 7), acl(4, "kafka-cluster", 9), acl(4, "kafka-cluster", 10),
          acl(4, "kafka-cluster", 11), acl(5, "mtx", 4)]


def call(c, name, v, req):
    try:
        return c.call(name, v, req)
    except Exception as e:  # noqa: BLE001 — reported
        fail("%s v%d: %s" % (name, v, e))
        return None


def admin_ok(c, name, v, req, check):
    d = call(c, name, v, req)
    if d is None or not check(d):
        fail("admin %s: %r" % (name, d))
    return d


def main(hostport, tls, dirs):
    admin = TlsConn(hostport, tls, "admin")
    d = admin.call("ApiVersions", 3, {"ClientSoftwareName": "acl", "ClientSoftwareVersion": "1"})
    served = {a["ApiKey"] for a in d["ApiKeys"]}
    names = {n for (n, _, _, _, _) in calls()}
    for key in served:
        name = [n for n, x in API.items() if x[0] == key]
        if not name or (name[0] not in names and name[0] not in NO_ACL):
            fail("API %d (%s) is served but not in the ACL matrix" % (key, name))
    # Set up as the super user: topic mt with a record, group mg with an offset.
    admin_ok(admin, "CreateTopics", 5, {"Topics": [{"Name": "mt", "NumPartitions": 1,
                                                    "ReplicationFactor": -1, "Assignments": [],
                                                    "Configs": []}],
                                        "TimeoutMs": 5000, "ValidateOnly": False},
             lambda d: d["Topics"][0]["ErrorCode"] == 0)
    admin_ok(admin, "Produce", 8, produce(), lambda d: p0(d) == 0)
    admin_ok(admin, "OffsetCommit", 8, commit(), lambda d: p0(d, "Topics", "Partitions") == 0)
    admin_ok(admin, "DescribeAcls", 3, acl_filter(), lambda d: d["ErrorCode"] == 0 and
             not d["Resources"])
    time.sleep(0.3)

    # 1. No binding: every API refused, nothing on the volumes changes.
    alice = TlsConn(hostport, tls, "alice")
    before = snapshot(dirs)
    for name, v, req, err, want in calls():
        d = call(alice, name, v, req)
        if d is not None and err(d) != want:
            fail("%s v%d without a binding: answered %r, want %r (%r)" % (name, v, err(d),
                                                                          want, d))
    d = call(alice, "Metadata", 9, {"Topics": None, "AllowAutoTopicCreation": False,
                                    "IncludeTopicAuthorizedOperations": False})
    if d is None or d["Topics"]:
        fail("Metadata of all topics shows alice %r" % (d and d["Topics"]))
    d = call(alice, "Metadata", 9, {"Topics": [{"Name": "auto1"}], "AllowAutoTopicCreation": True,
                                    "IncludeTopicAuthorizedOperations": False})
    if d is None or d["Topics"][0]["ErrorCode"] != TOPIC_AUTH:
        fail("Metadata auto-creating without CREATE: %r" % d)
    d = call(alice, "InitProducerId", 4, {"TransactionalId": "tx", "TransactionTimeoutMs": 1000,
                                          "ProducerId": -1, "ProducerEpoch": -1})
    if d is None or d["ErrorCode"] != TXN_AUTH:
        fail("InitProducerId with a transactional id: %r" % d)
    d = call(alice, "Produce", 8, produce(txn="tx"))
    if d is None or p0(d) != TXN_AUTH:
        fail("transactional Produce: %r" % d)
    time.sleep(0.3)
    after = snapshot(dirs)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if changed:
        fail("the volume changed under refused requests: %s" % changed[:10])

    # 2. With the bindings each API needs, every call works.
    admin_ok(admin, "CreateAcls", 3, {"Creations": GRANTS},
             lambda d: all(r["ErrorCode"] == 0 for r in d["Results"]))
    d = call(alice, "JoinGroup", 7, join())
    if d and d["ErrorCode"] == 79:
        d = call(alice, "JoinGroup", 7, join(member=d["MemberId"]))
    if not d or d["ErrorCode"] != 0:
        fail("JoinGroup with READ on the group: %r" % d)
    else:
        STATE.update(member=d["MemberId"], gen=d["GenerationId"], parts=3)
    for name, v, req, err, _ in calls():
        if name == "DeleteAcls":
            continue  # would remove alice's bindings: below
        d = call(alice, name, v, req)
        for _ in range(20):  # a coordinator moving after the topic changes: retriable
            if d is None or err(d) not in (14, 15, 16):
                break
            time.sleep(0.25)
            d = call(alice, name, v, req)
        if d is None:
            continue
        e = err(d)
        if set(e if isinstance(e, list) else [e]) & set(AUTH_ERRORS):
            fail("%s v%d with its bindings: answered %r (%r)" % (name, v, e, d))
        else:
            print("%s v%d with its bindings: %r" % (name, v, e), flush=True)
    d = call(alice, "DeleteAcls", 3, {"Filters": [acl_filter(2, "zz", 3)]})
    if not d or d["FilterResults"][0]["ErrorCode"] or len(d["FilterResults"][0]["MatchingAcls"]) != 1:
        fail("DeleteAcls with ALTER on the cluster: %r" % d)
    d = call(alice, "Metadata", 9, {"Topics": None, "AllowAutoTopicCreation": False,
                                    "IncludeTopicAuthorizedOperations": False})
    if not d or [t["Name"] for t in d["Topics"]] != ["mt"]:
        fail("Metadata of all topics with DESCRIBE (implied by READ) on mt: %r" %
             (d and [t["Name"] for t in d["Topics"]]))

    # 3. The rules: deny wins; prefixed patterns; a wildcard principal.
    admin_ok(admin, "CreateAcls", 3, {"Creations": [acl(2, "mt", 3, perm=2)]},
             lambda d: d["Results"][0]["ErrorCode"] == 0)
    d = call(alice, "Fetch", 11, fetch())
    if not d or p0(d, "Responses", "Partitions") != TOPIC_AUTH:
        fail("Fetch with ALLOW and DENY READ: %r" % d)
    d = call(alice, "Produce", 8, produce())
    if not d or p0(d) != 0:
        fail("Produce with WRITE while READ is denied: %r" % d)
    admin_ok(admin, "CreateAcls", 3, {"Creations": [acl(2, "pre.", 4, pattern=4),
                                                    acl(2, "pre.", 5, pattern=4),
                                                    acl(2, "*", 8, who="User:*")]},
             lambda d: all(r["ErrorCode"] == 0 for r in d["Results"]))
    d = call(alice, "Metadata", 9, {"Topics": [{"Name": "pre.x"}], "AllowAutoTopicCreation": True,
                                    "IncludeTopicAuthorizedOperations": False})
    if not d or d["Topics"][0]["ErrorCode"] not in (0, 5):
        fail("Metadata auto-creating pre.x with prefixed CREATE: %r" % d)
    d = call(alice, "CreateTopics", 5, {"Topics": [{"Name": "other", "NumPartitions": 1,
                                                    "ReplicationFactor": -1, "Assignments": [],
                                                    "Configs": []}], "TimeoutMs": 5000,
                                        "ValidateOnly": False})
    if not d or d["Topics"][0]["ErrorCode"] != TOPIC_AUTH:
        fail("CreateTopics outside the prefix: %r" % d)
    d = admin_ok(admin, "DescribeAcls", 1, acl_filter(2, "pre.abc", 2),
                 lambda d: d["ErrorCode"] == 0)
    got = sorted((r["ResourceName"], r["PatternType"]) for r in (d or {"Resources": []})["Resources"])
    if got != [("*", 3), ("pre.", 4)]:
        fail("DescribeAcls MATCH pre.abc: %r" % got)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
    sys.exit(1 if FAILS else 0)
