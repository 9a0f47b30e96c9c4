#!/bin/bash
# The partition admin APIs on two brokers (issue 15): DeleteRecords,
# OffsetForLeaderEpoch and DescribeProducers for a partition broker 1 leads
# are NOT_LEADER_OR_FOLLOWER at broker 0 and answered by broker 1;
# DescribeLogDirs lists a partition only at its leader; DescribeCluster
# lists both brokers at either.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
mb_start 0
mb_start 1
echo x | timeout 30 kcat -b "$(mb_bootstrap)" -P -t adm -p 0 2>/dev/null || true
timeout 60 python3 - "$(mb_bootstrap 0)" "$(mb_bootstrap 1)" "$KAAS_TOP_SRCDIR/tests/kafka" <<'PY' ||
import sys, time
sys.path.insert(0, sys.argv[3])
from api_versions_wire import Conn, record_batch
b0, b1 = Conn(sys.argv[1]), Conn(sys.argv[2])
fails = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    cond or fails.append(what)
d = b0.call("CreateTopics", 5, {"Topics": [{"Name": "adm2", "NumPartitions": 4,
    "ReplicationFactor": 1, "Assignments": [], "Configs": []}], "TimeoutMs": 5000,
    "ValidateOnly": False})
check(d["Topics"][0]["ErrorCode"] == 0, "create adm2")
part = None
for _ in range(100):  # a partition broker 1 leads, as both see it
    m0 = b0.call("Metadata", 7, {"Topics": [{"Name": "adm2"}], "AllowAutoTopicCreation": False})
    m1 = b1.call("Metadata", 7, {"Topics": [{"Name": "adm2"}], "AllowAutoTopicCreation": False})
    for p in range(4):
        if all(m["Topics"][0]["Partitions"][p]["LeaderId"] == 1 and
               m["Topics"][0]["Partitions"][p]["ErrorCode"] == 0 for m in (m0, m1)):
            part = p
            break
    if part is not None:
        break
    time.sleep(0.1)
check(part is not None, "broker 1 leads a partition of adm2")
epoch = m1["Topics"][0]["Partitions"][part]["LeaderEpoch"]
d = b1.call("InitProducerId", 0, {"TransactionalId": None, "TransactionTimeoutMs": 1000})
pid, pe = d["ProducerId"], d["ProducerEpoch"]
for seq in range(3):
    # Metadata answers from the assignment, before the leader's round has
    # opened the log: NOT_LEADER_OR_FOLLOWER (6) meanwhile, retried as a
    # client would (10 s at most; nothing was written)
    for _ in range(100):
        d = b1.call("Produce", 9, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 5000,
            "TopicData": [{"Name": "adm2", "PartitionData": [
                {"Index": part, "Records": record_batch([b"x"], pid, pe, seq)}]}]})
        if d["Responses"][0]["PartitionResponses"][0]["ErrorCode"] != 6:
            break
        time.sleep(0.1)
    check(d["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 0, "produce at broker 1")
def delete(c):
    return c.call("DeleteRecords", 2, {"Topics": [{"Name": "adm2", "Partitions": [
        {"PartitionIndex": part, "Offset": 2}]}], "TimeoutMs": 5000})["Topics"][0]["Partitions"][0]
def epoch_end(c):
    return c.call("OffsetForLeaderEpoch", 4, {"ReplicaId": -1, "Topics": [{"Topic": "adm2",
        "Partitions": [{"Partition": part, "CurrentLeaderEpoch": epoch,
                        "LeaderEpoch": epoch}]}]})["Topics"][0]["Partitions"][0]
def producers(c):
    return c.call("DescribeProducers", 0, {"Topics": [{"Name": "adm2",
        "PartitionIndexes": [part]}]})["Topics"][0]["Partitions"][0]
def dirs(c):
    d = c.call("DescribeLogDirs", 4, {"Topics": None})
    return {(t["Name"], p["PartitionIndex"]) for r in d["Results"] for t in r["Topics"]
            for p in t["Partitions"]}
check(delete(b0)["ErrorCode"] == 6, "DeleteRecords at broker 0: NOT_LEADER_OR_FOLLOWER")
check(epoch_end(b0)["ErrorCode"] == 6, "OffsetForLeaderEpoch at broker 0: NOT_LEADER_OR_FOLLOWER")
check(producers(b0)["ErrorCode"] == 6, "DescribeProducers at broker 0: NOT_LEADER_OR_FOLLOWER")
check(("adm2", part) not in dirs(b0) and ("adm2", part) in dirs(b1),
      "DescribeLogDirs lists adm2/%d at its leader only" % part)
r = delete(b1)
check(r["ErrorCode"] == 0 and r["LowWatermark"] == 2, "DeleteRecords at broker 1: %r" % r)
r = epoch_end(b1)
check(r["ErrorCode"] == 0 and r["EndOffset"] == 3 and r["LeaderEpoch"] == epoch,
      "OffsetForLeaderEpoch at broker 1: %r" % r)
r = producers(b1)
check(r["ErrorCode"] == 0 and [(x["ProducerId"], x["LastSequence"]) for x in
      r["ActiveProducers"]] == [(pid, 2)], "DescribeProducers at broker 1: %r" % r)
for c in (b0, b1):
    d = c.call("DescribeCluster", 1, {"IncludeClusterAuthorizedOperations": False,
                                      "EndpointType": 1})
    check(sorted(b["BrokerId"] for b in d["Brokers"]) == [0, 1], "DescribeCluster: both brokers")
sys.exit(1 if fails else 0)
PY
	kaas_fail "admin APIs on two brokers"
echo PASS
