#!/usr/bin/env python3
"""produce_verify.py HOST:PORT — a transactional batch that would open a
transaction on a partition is checked with the coordinator's record first
(KIP-890 part 1, transaction.partition.verification.enable; see
src/broker/txn/verify.h):

- a batch to a partition never added to the transaction: INVALID_TXN_STATE
  (48), nothing written;
- after InitProducerId bumped the epoch, a batch of the old epoch to a
  partition with no transaction open (one that never saw the producer, and
  one that did): INVALID_PRODUCER_EPOCH (47), nothing written;
- a transactional id with no state: INVALID_PRODUCER_ID_MAPPING (49);
- the batches of an added partition, the first and the next ones, are
  appended; the new epoch's transaction goes on; and no partition's last
  stable offset is left behind its end (no hanging transaction)."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peer"))
sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
from differ import batch, list_offsets_req, produce_req, vals  # noqa: E402
from api_versions_wire import Conn  # noqa: E402

T, TID = "verify", "vtx"
failures = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        failures.append(msg)


def offset(c, part, iso):
    d = c.call("ListOffsets", 5, list_offsets_req(T, part, -1, iso=iso))
    return d["Topics"][0]["Partitions"][0]["Offset"]


def produce(c, part, pid, ep, seq, value, tid=TID):
    d = c.call("Produce", 8, produce_req(T, part, batch(vals(value), pid, ep, seq, txn=True),
                                         txn_id=tid))
    return d["Responses"][0]["PartitionResponses"][0]["ErrorCode"]


def init(c):
    for _ in range(100):
        d = c.call("InitProducerId", 4, {"TransactionalId": TID, "TransactionTimeoutMs": 60000,
                                         "ProducerId": -1, "ProducerEpoch": -1})
        if d["ErrorCode"] not in (14, 15, 51):  # loading, not available, concurrent
            break
        time.sleep(0.1)
    if d["ErrorCode"]:
        fail("InitProducerId: %r" % d)
    return d["ProducerId"], d["ProducerEpoch"]


def add(c, pid, ep, part):
    d = c.call("AddPartitionsToTxn", 3, {"TransactionalId": TID, "ProducerId": pid,
                                         "ProducerEpoch": ep,
                                         "Topics": [{"Name": T, "Partitions": [part]}]})
    e = d["Results"][0]["Results"][0]["PartitionErrorCode"]
    if e:
        fail("AddPartitionsToTxn %d: %d" % (part, e))


def commit(c, pid, ep):
    d = c.call("EndTxn", 3, {"TransactionalId": TID, "ProducerId": pid, "ProducerEpoch": ep,
                             "Committed": True})
    if d["ErrorCode"]:
        fail("EndTxn: %r" % d)
    end = time.time() + 15
    while time.time() < end:
        d = c.call("DescribeTransactions", 0, {"TransactionalIds": [TID]})
        if d["TransactionStates"][0]["TransactionState"] == "CompleteCommit":
            return
        time.sleep(0.05)
    fail("the commit did not complete")


def main(hostport):
    c = Conn(hostport)
    d = c.call("CreateTopics", 5, {"Topics": [{"Name": T, "NumPartitions": 2,
                                               "ReplicationFactor": -1, "Assignments": [],
                                               "Configs": []}],
                                   "TimeoutMs": 10000, "ValidateOnly": False})
    if d["Topics"][0]["ErrorCode"] not in (0, 36):
        fail("CreateTopics: %r" % d)
    pid, ep = init(c)
    add(c, pid, ep, 0)
    check(produce(c, 0, pid, ep, 0, "a1") == 0, "the first batch of an added partition refused")
    check(produce(c, 0, pid, ep, 1, "a2") == 0, "the next batch of an added partition refused")
    e = produce(c, 1, pid, ep, 0, "x1")
    check(e == 48, "a batch to a partition never added: error %d, want 48 INVALID_TXN_STATE" % e)
    commit(c, pid, ep)

    pid2, ep2 = init(c)  # the same producer id, the epoch bumped: the old one is fenced
    if pid2 != pid or ep2 != ep + 1:
        fail("InitProducerId again: %d/%d after %d/%d" % (pid2, ep2, pid, ep))
    e = produce(c, 1, pid, ep, 0, "fenced1")
    check(e == 47, "the fenced epoch's batch to a partition it never wrote: error %d, want 47 "
          "INVALID_PRODUCER_EPOCH" % e)
    e = produce(c, 0, pid, ep, 2, "fenced0")
    check(e == 47, "the fenced epoch's batch to a partition with its committed transaction: "
          "error %d, want 47 INVALID_PRODUCER_EPOCH" % e)
    e = produce(c, 1, pid, ep, 0, "x", tid="vtx-nosuch")
    check(e == 49, "a transactional id with no state: error %d, want 49 "
          "INVALID_PRODUCER_ID_MAPPING" % e)

    for part in (0, 1):
        lso, end = offset(c, part, 1), offset(c, part, 0)
        check(lso == end, "%s/%d: last stable offset %d, end %d: a transaction hangs"
              % (T, part, lso, end))
    check(offset(c, 1, 0) == 0, "%s/1 holds %d records, want none" % (T, offset(c, 1, 0)))

    # The new epoch's transaction goes on, on both partitions.
    add(c, pid, ep2, 1)
    add(c, pid, ep2, 0)
    check(produce(c, 1, pid, ep2, 0, "b1") == 0, "the new epoch's batch to p1 refused")
    check(produce(c, 0, pid, ep2, 0, "b0") == 0, "the new epoch's batch to p0 refused")
    commit(c, pid, ep2)
    time.sleep(0.3)
    for part in (0, 1):
        lso, end = offset(c, part, 1), offset(c, part, 0)
        check(lso == end, "%s/%d after the new epoch's commit: last stable offset %d, end %d"
              % (T, part, lso, end))
    if failures:
        sys.exit(1)
    print("verified: unadded partition 48, fenced epoch 47, unknown id 49; no hanging transaction")


if __name__ == "__main__":
    main(sys.argv[1])
