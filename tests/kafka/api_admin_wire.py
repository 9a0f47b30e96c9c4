"""api_admin_wire.py — the admin APIs of issue 15 through every version
kaasd serves, for api_versions_wire.py (same connection and decoder):
CreateTopics' configs (v5+), DescribeCluster, DescribeLogDirs,
OffsetForLeaderEpoch, DescribeProducers, DeleteRecords and
DescribeTopicPartitions with its cursor, each checked for what it says and
for the Kafka error codes of bad input."""

UNKNOWN_TOPIC, OUT_OF_RANGE, INVALID_REQUEST = 3, 1, 42
FENCED_EPOCH, UNKNOWN_EPOCH, MISMATCHED_ENDPOINT = 74, 75, 114


def main(c, versions, exchange, ok_if, fail, record_batch):
    def top(v):
        return max(versions(v))

    # A topic with a config: CreateTopics v5+ answers its configs.
    exchange(c, "CreateTopics", top("CreateTopics"), {
        "Topics": [{"Name": "wadm", "NumPartitions": 1, "ReplicationFactor": -1,
                    "Assignments": [], "Configs": [{"Name": "retention.ms", "Value": "123456"}]}],
        "TimeoutMs": 5000, "ValidateOnly": False}, lambda d: created_configs(d, ok_if))
    d = exchange(c, "InitProducerId", 0, {"TransactionalId": None, "TransactionTimeoutMs": 1000},
                 lambda d: ok_if(d["ErrorCode"] == 0, "producer id"))
    pid, pepoch = (d["ProducerId"], d["ProducerEpoch"]) if d else (-1, -1)
    for seq in range(3):
        exchange(c, "Produce", top("Produce"), {
            "TransactionalId": None, "Acks": -1, "TimeoutMs": 5000,
            "TopicData": [{"Name": "wadm", "PartitionData": [
                {"Index": 0, "Records": record_batch([b"a%d" % seq], pid, pepoch, seq)}]}]},
            lambda d, seq=seq: ok_if(
                d["Responses"][0]["PartitionResponses"][0]["BaseOffset"] == seq, "produce"))

    for v in versions("DescribeCluster"):
        exchange(c, "DescribeCluster", v, {"IncludeClusterAuthorizedOperations": False,
                                           "EndpointType": 1},
                 lambda d: ok_if(d["ErrorCode"] == 0 and d["ClusterId"] and
                                 d["ControllerId"] >= 0 and len(d["Brokers"]) >= 1 and
                                 d["Brokers"][0]["Port"] > 0, "cluster"))
        if v >= 1:
            exchange(c, "DescribeCluster", v, {"IncludeClusterAuthorizedOperations": False,
                                               "EndpointType": 2},
                     lambda d: ok_if(d["ErrorCode"] == MISMATCHED_ENDPOINT and
                                     d["ErrorMessage"], "controllers: MISMATCHED_ENDPOINT_TYPE"))

    for v in versions("DescribeLogDirs"):
        exchange(c, "DescribeLogDirs", v, {"Topics": None},
                 lambda d, v=v: log_dir(d, v, ok_if, [0]))
        exchange(c, "DescribeLogDirs", v, {"Topics": [{"Topic": "wadm", "Partitions": [0, 7]},
                                                      {"Topic": "wnosuch", "Partitions": [0]}]},
                 lambda d, v=v: log_dir(d, v, ok_if, [0], only=True))

    d = exchange(c, "Metadata", 7, {"Topics": [{"Name": "wadm"}], "AllowAutoTopicCreation": False},
                 lambda d: None)
    epoch = d["Topics"][0]["Partitions"][0]["LeaderEpoch"] if d else 0
    for v in versions("OffsetForLeaderEpoch"):
        def ask(cur, want_epoch, topic="wadm"):
            return {"ReplicaId": -1, "Topics": [{"Topic": topic, "Partitions": [
                {"Partition": 0, "CurrentLeaderEpoch": cur, "LeaderEpoch": want_epoch}]}]}

        def part(d):
            return d["Topics"][0]["Partitions"][0]
        exchange(c, "OffsetForLeaderEpoch", v, ask(-1, epoch), lambda d, v=v: ok_if(
            part(d)["ErrorCode"] == 0 and part(d)["EndOffset"] == 3 and
            part(d).get("LeaderEpoch", epoch) == epoch, "epoch %d ends at 3" % epoch))
        exchange(c, "OffsetForLeaderEpoch", v, ask(-1, epoch + 7), lambda d: ok_if(
            part(d)["ErrorCode"] == 0 and part(d)["EndOffset"] == -1, "a later epoch: -1"))
        exchange(c, "OffsetForLeaderEpoch", v, ask(-1, epoch, "wnosuch"), lambda d: ok_if(
            part(d)["ErrorCode"] == UNKNOWN_TOPIC, "UNKNOWN_TOPIC_OR_PARTITION"))
        if v >= 2:
            exchange(c, "OffsetForLeaderEpoch", v, ask(epoch + 1, epoch), lambda d: ok_if(
                part(d)["ErrorCode"] == UNKNOWN_EPOCH, "UNKNOWN_LEADER_EPOCH"))
            if epoch > 0:
                exchange(c, "OffsetForLeaderEpoch", v, ask(epoch - 1, epoch), lambda d: ok_if(
                    part(d)["ErrorCode"] == FENCED_EPOCH, "FENCED_LEADER_EPOCH"))

    for v in versions("DescribeProducers"):
        def producers(d):
            p, q = d["Topics"][0]["Partitions"]
            mine = [x for x in p["ActiveProducers"] if x["ProducerId"] == pid]
            return ok_if(p["ErrorCode"] == 0 and len(mine) == 1 and
                         mine[0]["LastSequence"] == 2 and mine[0]["ProducerEpoch"] == pepoch and
                         q["ErrorCode"] == UNKNOWN_TOPIC and q["ErrorMessage"] and
                         p["ErrorMessage"] is None, "producer %d at sequence 2" % pid)
        exchange(c, "DescribeProducers", v, {"Topics": [{"Name": "wadm",
                                                         "PartitionIndexes": [0, 5]}]}, producers)

    for i, v in enumerate(versions("DeleteRecords")):
        def low(d):
            return d["Topics"][0]["Partitions"][0]
        exchange(c, "DeleteRecords", v, {"Topics": [{"Name": "wadm", "Partitions": [
            {"PartitionIndex": 0, "Offset": min(1 + i, 3)}]}], "TimeoutMs": 5000},
            lambda d, i=i: ok_if(low(d)["ErrorCode"] == 0 and
                                 low(d)["LowWatermark"] == min(1 + i, 3), "low watermark"))
        exchange(c, "DeleteRecords", v, {"Topics": [{"Name": "wadm", "Partitions": [
            {"PartitionIndex": 0, "Offset": 99}, {"PartitionIndex": 0, "Offset": -7},
            {"PartitionIndex": 4, "Offset": 1}]},
            {"Name": "wnosuch", "Partitions": [{"PartitionIndex": 0, "Offset": 0}]}],
            "TimeoutMs": 5000},
            lambda d: ok_if([p["ErrorCode"] for t in d["Topics"] for p in t["Partitions"]] ==
                            [OUT_OF_RANGE, OUT_OF_RANGE, UNKNOWN_TOPIC, UNKNOWN_TOPIC],
                            "OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION"))
    exchange(c, "DeleteRecords", top("DeleteRecords"), {"Topics": [{"Name": "wadm", "Partitions": [
        {"PartitionIndex": 0, "Offset": -1}]}], "TimeoutMs": 5000},
        lambda d: ok_if(d["Topics"][0]["Partitions"][0]["LowWatermark"] == 3, "-1: all"))
    exchange(c, "ListOffsets", 1, {"ReplicaId": -1, "Topics": [{"Name": "wadm", "Partitions": [
        {"PartitionIndex": 0, "Timestamp": -2}]}]},
        lambda d: ok_if(d["Topics"][0]["Partitions"][0]["Offset"] == 3, "log start 3"))

    topic_partitions(c, versions, exchange, ok_if)
    # The broker's offsets.retention.minutes (default 7 days), with DescribeConfigs.
    exchange(c, "DescribeConfigs", top("DescribeConfigs"), {"Resources": [
        {"ResourceType": 4, "ResourceName": "0",
         "ConfigurationKeys": ["offsets.retention.minutes"]}],
        "IncludeSynonyms": False, "IncludeDocumentation": False},
        lambda d: ok_if([(x["Name"], x["Value"]) for x in d["Results"][0]["Configs"]] ==
                        [("offsets.retention.minutes", "10080")], "offsets.retention.minutes"))


def created_configs(d, ok_if):
    t = d["Topics"][0]
    if "Configs" not in t:  # before v5
        return ok_if(t["ErrorCode"] == 0, "create")
    got = {x["Name"]: (x["Value"], x["ConfigSource"]) for x in t["Configs"] or []}
    return ok_if(t["ErrorCode"] == 0 and got.get("retention.ms") == ("123456", 1) and
                 got.get("segment.bytes", (None, 0))[1] in (4, 5),
                 "configs of the created topic with their sources")


def log_dir(d, v, ok_if, parts, only=False):
    if len(d["Results"]) != 1 or d["Results"][0]["ErrorCode"] != 0:
        return "one log dir"
    res = d["Results"][0]
    topics = {t["Name"]: t["Partitions"] for t in res["Topics"]}
    if only and set(topics) != {"wadm"}:
        return "only wadm: %r" % sorted(topics)
    p = topics.get("wadm") or []
    if [x["PartitionIndex"] for x in p] != parts or p[0]["PartitionSize"] <= 0:
        return "wadm's partition sizes"
    if v >= 4 and (res["TotalBytes"] <= 0 or res["UsableBytes"] < 0):
        return "volume bytes"
    return None


def topic_partitions(c, versions, exchange, ok_if):
    exchange(c, "CreateTopics", 4, {
        "Topics": [{"Name": "wdtp", "NumPartitions": 5, "ReplicationFactor": 3,
                    "Assignments": [], "Configs": []}], "TimeoutMs": 5000, "ValidateOnly": False},
        lambda d: ok_if(d["Topics"][0]["ErrorCode"] == 0, "create wdtp"))
    for v in versions("DescribeTopicPartitions"):
        asked = [{"Name": "wdtp"}, {"Name": "wadm"}, {"Name": "wnosuch"}, {"Name": "wdtp"}]

        def page(d, want, cursor):
            got = [(t["Name"], t["ErrorCode"], [p["PartitionIndex"] for p in t["Partitions"]])
                   for t in d["Topics"]]
            nc = d["NextCursor"]
            nc = (nc["TopicName"], nc["PartitionIndex"]) if nc else None
            leaders = all(p["LeaderId"] >= 0 and p["ReplicaNodes"] == [p["LeaderId"]]
                          for t in d["Topics"] for p in t["Partitions"])
            # Always filled in, as Kafka (no flag asks for it): every topic
            # operation with no authorizer (3576), none for a topic in error.
            ops = [(t["Name"], t["TopicAuthorizedOperations"]) for t in d["Topics"]]
            ops_ok = all(o == (3576 if t["ErrorCode"] == 0 else -2**31)
                         for t, (_, o) in zip(d["Topics"], ops))
            return ok_if(got == want and nc == cursor and leaders and ops_ok,
                         "page %r next %r (authorized operations %r)" % (want, cursor, ops))
        exchange(c, "DescribeTopicPartitions", v, {
            "Topics": asked, "ResponsePartitionLimit": 3, "Cursor": None},
            lambda d: page(d, [("wadm", 0, [0]), ("wdtp", 0, [0, 1])], ("wdtp", 2)))
        exchange(c, "DescribeTopicPartitions", v, {
            "Topics": asked, "ResponsePartitionLimit": 3,
            "Cursor": {"TopicName": "wdtp", "PartitionIndex": 2}},
            lambda d: page(d, [("wdtp", 0, [2, 3, 4]), ("wnosuch", UNKNOWN_TOPIC, [])], None))
        exchange(c, "DescribeTopicPartitions", v, {
            "Topics": [{"Name": "wadm"}], "ResponsePartitionLimit": 10,
            "Cursor": {"TopicName": "wdtp", "PartitionIndex": 0}},
            lambda d: page(d, [("wadm", INVALID_REQUEST, [])], None))
        exchange(c, "DescribeTopicPartitions", v, {
            "Topics": [], "ResponsePartitionLimit": 2000, "Cursor": None},
            lambda d: ok_if(d["NextCursor"] is None and
                            {"wadm", "wdtp"} <= {t["Name"] for t in d["Topics"]} and
                            [t["Name"] for t in d["Topics"]] ==
                            sorted(t["Name"] for t in d["Topics"]), "every topic, by name"))
