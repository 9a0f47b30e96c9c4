#!/usr/bin/env python3
"""hanging_abort.py HOST:PORT — a hanging transaction and its way out
(issue 33, KIP-664), on the raw wire.

A transactional producer commits a transaction on hang/0, then a batch of
it arrives after the commit marker (a late retry: a transactional Produce
with no AddPartitionsToTxn).  The partition holds an open transaction that
its coordinator knows nothing of: the last stable offset stays at the late
batch.  It is found as `kafka-transactions.sh find-hanging` finds one:
DescribeProducers shows the producer with an open transaction,
ListTransactions (filtered by its producer id) and DescribeTransactions show
its transactional id not in a transaction over the partition.  It is then
aborted as `kafka-transactions.sh abort` does: WriteTxnMarkers (abort) to
the partition's leader with the producer id, producer epoch and
coordinator epoch DescribeProducers answered.  A lower coordinator epoch is
TRANSACTION_COORDINATOR_FENCED, a lower producer epoch
INVALID_PRODUCER_EPOCH, an unknown partition UNKNOWN_TOPIC_OR_PARTITION,
and nothing is written for them.  After the abort the LSO is the high
watermark, read_committed skips the late batch, and the producer's next
transaction commits.  Exit 0 on success.

hanging_abort.py HOST:PORT make TOPIC: only make a hanging transaction on
TOPIC/0 (transactional id TOPIC-tx), for another tool to find and abort;
hanging_abort.py HOST:PORT check TOPIC: TOPIC/0's hanging transaction was
aborted (the LSO is the end, read_committed reads the committed record
only)."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peer"))
sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
from differ import batch, batches, fetch_req, list_offsets_req, produce_req, vals  # noqa: E402
from api_versions_wire import Conn  # noqa: E402

T, TID = "hang", "htx"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def p0(d, key="Responses", parts="PartitionResponses"):
    return d[key][0][parts][0]


def lso(c):
    d = c.call("ListOffsets", 5, list_offsets_req(T, 0, -1, iso=1))
    return p0(d, "Topics", "Partitions")["Offset"]


def hwm(c):
    d = c.call("ListOffsets", 5, list_offsets_req(T, 0, -1, iso=0))
    return p0(d, "Topics", "Partitions")["Offset"]


def producers(c):
    d = c.call("DescribeProducers", 0, {"Topics": [{"Name": T, "PartitionIndexes": [0]}]})
    p = p0(d, "Topics", "Partitions")
    if p["ErrorCode"]:
        fail("DescribeProducers: %r" % p)
    return p["ActiveProducers"]


def committed_values(c):
    d = c.call("Fetch", 11, fetch_req(T, 0, 0, iso=1))
    p = p0(d, "Responses", "Partitions")
    aborted = {(a["ProducerId"], a["FirstOffset"]) for a in (p["AbortedTransactions"] or [])}
    out = []
    for b in batches(p["Records"]):
        if "Control" in b or (b["ProducerId"], b["BaseOffset"]) in aborted:
            continue
        out += b["Values"]
    return out, aborted


def state(c, want, secs=15):
    end = time.time() + secs
    while True:
        d = c.call("DescribeTransactions", 0, {"TransactionalIds": [TID]})
        s = d["TransactionStates"][0]
        if s["TransactionState"] in want or time.time() > end:
            return s
        time.sleep(0.05)


def txn(c, pid, ep, seq, value):
    """One transaction of value on hang/0, committed."""
    idp = {"TransactionalId": TID, "ProducerId": pid, "ProducerEpoch": ep}
    d = c.call("AddPartitionsToTxn", 3, dict(idp, Topics=[{"Name": T, "Partitions": [0]}]))
    e = d["Results"][0]["Results"][0]["PartitionErrorCode"]
    if e:
        fail("AddPartitionsToTxn: %d" % e)
    d = c.call("Produce", 8, produce_req(T, 0, batch(vals(value), pid, ep, seq, txn=True),
                                         txn_id=TID))
    if p0(d)["ErrorCode"]:
        fail("Produce %s: %r" % (value, p0(d)))
    d = c.call("EndTxn", 3, dict(idp, Committed=True))
    if d["ErrorCode"]:
        fail("EndTxn: %r" % d)
    if state(c, ("CompleteCommit",))["TransactionState"] != "CompleteCommit":
        fail("transaction of %s not complete" % value)


def markers(c, pid, ep, coord, topic=T, part=0, commit=False):
    d = c.call("WriteTxnMarkers", 1, {"Markers": [{
        "ProducerId": pid, "ProducerEpoch": ep, "TransactionResult": commit,
        "CoordinatorEpoch": coord, "Topics": [{"Name": topic, "PartitionIndexes": [part]}]}]})
    if d is None:
        fail("WriteTxnMarkers: the connection was closed (not served?)")
    m = d["Markers"][0]
    if m["ProducerId"] != pid or m["Topics"][0]["Name"] != topic:
        fail("WriteTxnMarkers answered another marker: %r" % d)
    return m["Topics"][0]["Partitions"][0]["ErrorCode"]


def hang(c):
    """A committed transaction, then a late batch of it: (pid, epoch, the late
    batch's offset)."""
    d = c.call("CreateTopics", 5, {"Topics": [{"Name": T, "NumPartitions": 1,
                                               "ReplicationFactor": -1, "Assignments": [],
                                               "Configs": []}],
                                   "TimeoutMs": 10000, "ValidateOnly": False})
    if d["Topics"][0]["ErrorCode"] not in (0, 36):
        fail("CreateTopics: %r" % d)
    for _ in range(2):  # twice: epoch 1, so that a lower one can be sent
        for _ in range(100):
            d = c.call("InitProducerId", 4, {"TransactionalId": TID,
                                             "TransactionTimeoutMs": 60000,
                                             "ProducerId": -1, "ProducerEpoch": -1})
            if d["ErrorCode"] not in (14, 15, 51):  # loading, not available, concurrent
                break
            time.sleep(0.1)
        if d["ErrorCode"]:
            fail("InitProducerId: %r" % d)
    pid, ep = d["ProducerId"], d["ProducerEpoch"]
    txn(c, pid, ep, 0, "a1")
    end = hwm(c)
    if lso(c) != end:
        fail("LSO %d below the end %d after the commit" % (lso(c), end))
    # The late batch: after the marker, no AddPartitionsToTxn.
    d = c.call("Produce", 8, produce_req(T, 0, batch(vals("late"), pid, ep, 1, txn=True),
                                         txn_id=TID))
    if p0(d)["ErrorCode"]:
        fail("the late transactional batch was refused (%r): no hanging transaction to make"
             % p0(d))
    late = p0(d)["BaseOffset"]
    time.sleep(0.3)
    if lso(c) != late:
        fail("LSO %d, want %d: the late batch holds it" % (lso(c), late))
    return pid, ep, late


def main(hostport):
    c = Conn(hostport)
    pid, ep, late = hang(c)

    # find-hanging: a producer with an open transaction on the partition ...
    open_ = [p for p in producers(c) if p["CurrentTxnStartOffset"] >= 0]
    if len(open_) != 1 or open_[0]["ProducerId"] != pid or \
            open_[0]["CurrentTxnStartOffset"] != late:
        fail("DescribeProducers: %r" % producers(c))
    prod = open_[0]
    if prod["CoordinatorEpoch"] < 0:
        fail("DescribeProducers: no coordinator epoch after a marker: %r" % prod)
    # ... whose transactional id is not in a transaction over it.
    d = c.call("ListTransactions", 0, {"StateFilters": [], "ProducerIdFilters": [pid]})
    ids = [x for x in d["TransactionStates"] if x["ProducerId"] == pid]
    if d["ErrorCode"] or [x["TransactionalId"] for x in ids] != [TID]:
        fail("ListTransactions by producer id: %r" % d)
    # (Kafka lists a transaction's partitions only while it is under way;
    # find-hanging takes a listed partition for one whose marker is to come.)
    s = state(c, ())
    parts = [(t["Topic"], p) for t in s["Topics"] for p in t["Partitions"]]
    if s["TransactionState"] != "CompleteCommit" or parts:
        fail("DescribeTransactions of the complete transaction: %r" % s)

    # abort, refused first: a lower coordinator epoch, a lower producer
    # epoch (when there is one), an unknown partition.
    end = hwm(c)
    if prod["CoordinatorEpoch"] > 0:
        e = markers(c, pid, prod["ProducerEpoch"], prod["CoordinatorEpoch"] - 1)
        if e != 52:
            fail("a marker from a lower coordinator epoch: error %d, want 52" % e)
    if prod["ProducerEpoch"] > 0:
        e = markers(c, pid, prod["ProducerEpoch"] - 1, prod["CoordinatorEpoch"])
        if e != 47:
            fail("a marker of a lower producer epoch: error %d, want 47" % e)
    e = markers(c, pid, prod["ProducerEpoch"], prod["CoordinatorEpoch"], topic="nosuch-hang")
    if e != 3:
        fail("a marker on an unknown topic: error %d, want 3" % e)
    e = markers(c, pid, prod["ProducerEpoch"], prod["CoordinatorEpoch"], part=7)
    if e != 3:
        fail("a marker on an unknown partition: error %d, want 3" % e)
    if hwm(c) != end or lso(c) != late:
        fail("a refused marker wrote something: end %d -> %d, LSO %d" % (end, hwm(c), lso(c)))
    # The abort.
    e = markers(c, pid, prod["ProducerEpoch"], prod["CoordinatorEpoch"])
    if e:
        fail("WriteTxnMarkers abort: error %d" % e)
    end = hwm(c)
    if lso(c) != end or end != late + 2:
        fail("after the abort: LSO %d, end %d (late batch at %d)" % (lso(c), end, late))
    if [p for p in producers(c) if p["CurrentTxnStartOffset"] >= 0]:
        fail("still an open transaction: %r" % producers(c))
    got, aborted = committed_values(c)
    if got != ["a1"] or (pid, late) not in aborted:
        fail("read_committed after the abort: %r (aborted %r)" % (got, aborted))
    # The producer goes on.
    txn(c, pid, ep, 2, "a2")
    got, _ = committed_values(c)
    if got != ["a1", "a2"]:
        fail("read_committed after the next transaction: %r" % got)
    print("hanging transaction at offset %d of producer %d (epoch %d, coordinator epoch %d) "
          "aborted" % (late, pid, prod["ProducerEpoch"], prod["CoordinatorEpoch"]))


if __name__ == "__main__":
    if len(sys.argv) == 4:
        T, TID = sys.argv[3], sys.argv[3] + "-tx"
        c = Conn(sys.argv[1])
        if sys.argv[2] == "make":
            print("hanging transaction on %s/0 at offset %d" % (T, hang(c)[2]))
        else:
            got, aborted = committed_values(c)
            if lso(c) != hwm(c) or got != ["a1"] or not aborted:
                fail("%s/0: LSO %d, end %d, read_committed %r, aborted %r"
                     % (T, lso(c), hwm(c), got, aborted))
    else:
        main(sys.argv[1])
