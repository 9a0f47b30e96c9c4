"""admin_clients.py BROKER KAASCTL DATA — the admin-client acceptance test of
issue 15.  confluent-kafka 1.7 (librdkafka) and kafka-python 2.0 run the
admin calls they have, each checked for its effect by reading it back with
the other client, on the volume (kaasctl --json), or both:
  create topic with configs, describe configs with sources, alter and
  incrementally alter configs, create partitions, delete records,
  list/describe/delete groups, delete committed offsets, describe the
  cluster.
What a client lacks (kafka-python: IncrementalAlterConfigs, DeleteRecords,
OffsetDelete; neither: DescribeCluster) is sent through kafka-python's own
protocol codec (kafka.protocol) on its admin connection, or for the
flexible-only DescribeCluster through the tests' independent codec."""
import json
import os
import subprocess
import sys
import time

from confluent_kafka import Consumer as CkConsumer
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewPartitions, NewTopic
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource as KpResource, ConfigResourceType
from kafka.admin import NewPartitions as KpNewPartitions, NewTopic as KpNewTopic
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Array, Int8, Int16, Int32, Int64, Schema, String
from kafka.structs import OffsetAndMetadata

sys.path.insert(0, os.path.dirname(__file__))
from api_versions_wire import Conn  # noqa: E402

broker, kaasctl, data = sys.argv[1:4]
FAILS = []
T0 = time.time()


def check(cond, what):
    print("%5.1fs %s%s" % (time.time() - T0, "ok   " if cond else "FAIL ", what), flush=True)
    if not cond:
        FAILS.append(what)


def kaasctl_json(*args):
    out = subprocess.run([kaasctl, "--data", data] + list(args) + ["--json"],
                         capture_output=True, text=True, timeout=30)
    return json.loads(out.stdout)


def volume_topic(topic):
    for t in kaasctl_json("status").get("topics", []):
        if t.get("name") == topic:
            return t
    return {}


def volume_partitions(topic):
    return volume_topic(topic).get("partition_count")


def src(e):
    """A confluent-kafka ConfigEntry's source as Kafka's number."""
    return int(getattr(e.source, "value", e.source))


def volume_offsets(group):
    return {(o["topic"], o["partition"]): o["committed"]
            for g in kaasctl_json("groups", "--group", group, "--volume-only")["groups"]
            if g["group"] == group for o in g["offsets"]}


# ---------------------------------------------------------------- kafka-python's codec,
# for the calls its admin client lacks (classic versions only: it has no
# flexible encoding)
S = String("utf-8")


class IncrementalAlterConfigsResponse_v0(Response):
    API_KEY, API_VERSION = 44, 0
    SCHEMA = Schema(("throttle_time_ms", Int32), ("responses", Array(
        ("error_code", Int16), ("error_message", S), ("resource_type", Int8),
        ("resource_name", S))))


class IncrementalAlterConfigsRequest_v0(Request):
    API_KEY, API_VERSION, RESPONSE_TYPE = 44, 0, IncrementalAlterConfigsResponse_v0
    SCHEMA = Schema(("resources", Array(
        ("resource_type", Int8), ("resource_name", S),
        ("configs", Array(("name", S), ("config_operation", Int8), ("value", S))))),
        ("validate_only", Int8))


class DeleteRecordsResponse_v1(Response):
    API_KEY, API_VERSION = 21, 1
    SCHEMA = Schema(("throttle_time_ms", Int32), ("topics", Array(
        ("name", S), ("partitions", Array(
            ("partition_index", Int32), ("low_watermark", Int64), ("error_code", Int16))))))


class DeleteRecordsRequest_v1(Request):
    API_KEY, API_VERSION, RESPONSE_TYPE = 21, 1, DeleteRecordsResponse_v1
    SCHEMA = Schema(("topics", Array(("name", S), ("partitions", Array(
        ("partition_index", Int32), ("offset", Int64))))), ("timeout_ms", Int32))


class OffsetDeleteResponse_v0(Response):
    API_KEY, API_VERSION = 47, 0
    SCHEMA = Schema(("error_code", Int16), ("throttle_time_ms", Int32), ("topics", Array(
        ("name", S), ("partitions", Array(("partition_index", Int32), ("error_code", Int16))))))


class OffsetDeleteRequest_v0(Request):
    API_KEY, API_VERSION, RESPONSE_TYPE = 47, 0, OffsetDeleteResponse_v0
    SCHEMA = Schema(("group_id", S), ("topics", Array(
        ("name", S), ("partitions", Array(Schema(("partition_index", Int32)))))))


def kp_send(admin, request, node=None):
    """Send a request on kafka-python's admin connection and wait."""
    if node is None:
        node = admin._client.least_loaded_node()
    f = admin._send_request_to_node(node, request)
    admin._wait_for_futures([f])
    return f.value


# ---------------------------------------------------------------- the calls
ck = AdminClient({"bootstrap.servers": broker, "socket.timeout.ms": 20000})
kp = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=20000)


def ck_wait(futmap):
    for k, f in futmap.items():
        try:
            f.result(timeout=20)
        except Exception as e:  # noqa: BLE001 - reported as a failure
            check(False, "confluent-kafka %s: %s" % (k, e))
            return False
    return True


def kp_topic_configs(topic):
    """{name: (value, source)} of a topic as kafka-python reads them (v1+)."""
    res = kp.describe_configs([KpResource(ConfigResourceType.TOPIC, topic)], include_synonyms=True)
    out = {}
    for r in res:
        for resource in r.resources:
            for entry in resource[4]:
                out[entry[0]] = (entry[1], entry[3])
    return out


def ck_topic_configs(topic):
    fs = ck.describe_configs([ConfigResource("TOPIC", topic)])
    return {e.name: e for e in list(fs.values())[0].result(timeout=20).values()}


# 1. create topic with configs, both clients; read back with the other.
ck_wait(ck.create_topics([NewTopic("ck1", num_partitions=2, replication_factor=3, config={
    "retention.ms": "2000000", "segment.bytes": "1048576"})]))
kp.create_topics([KpNewTopic("kp1", 2, 1, topic_configs={
    "max.message.bytes": "20000", "cleanup.policy": "delete"})])
got = kp_topic_configs("ck1")
check(got.get("retention.ms") == ("2000000", 1) and got.get("segment.bytes") == ("1048576", 1),
      "confluent-kafka created ck1 with its configs (kafka-python reads them back, TOPIC_CONFIG)")
check(volume_partitions("ck1") == 2, "ck1 has 2 partitions on the volume")
got = ck_topic_configs("kp1")
e = got.get("max.message.bytes")
check(e is not None and e.value == "20000" and src(e) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value,
      "kafka-python created kp1 with its configs (confluent-kafka reads them back)")

# 2. describe configs with sources and synonyms.
e = got.get("retention.ms")
check(e is not None and src(e) == ConfigSource.DEFAULT_CONFIG.value and e.value == "604800000",
      "kp1's retention.ms is the default, 7 days, from DEFAULT_CONFIG")
e = ck_topic_configs("ck1").get("retention.ms")
check(e is not None and src(e) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value and
      any(src(x) == ConfigSource.DEFAULT_CONFIG.value for x in e.synonyms.values()),
      "ck1's retention.ms with its synonyms down to the default")

# 3. alter configs (a whole set: what is not named returns to its default)
# and incrementally (SET, DELETE, APPEND).
ck_wait(ck.alter_configs([ConfigResource("TOPIC", "ck1", set_config={"retention.ms": "3000000"})]))
got = kp_topic_configs("ck1")
check(got.get("retention.ms") == ("3000000", 1) and got.get("segment.bytes", ("", 0))[1] != 1,
      "AlterConfigs (confluent-kafka) set retention.ms and reset segment.bytes")
kp.alter_configs([KpResource(ConfigResourceType.TOPIC, "kp1", configs={"retention.bytes": "5000000"})])
check(ck_topic_configs("kp1")["retention.bytes"].value == "5000000" and
      src(ck_topic_configs("kp1")["max.message.bytes"]) != 1,
      "AlterConfigs (kafka-python) replaced kp1's configs")
r = kp_send(kp, IncrementalAlterConfigsRequest_v0(resources=[
    (2, "kp1", [("segment.ms", 0, "3600000"), ("retention.bytes", 1, ""),
                ("cleanup.policy", 2, "delete")])], validate_only=0))
got = kp_topic_configs("kp1")
check(r.responses[0][0] == 0 and got.get("segment.ms") == ("3600000", 1) and
      got.get("retention.bytes", ("", 0))[1] != 1,
      "IncrementalAlterConfigs SET, DELETE, APPEND (kafka-python's codec): %r" % (r.responses,))
r = kp_send(kp, IncrementalAlterConfigsRequest_v0(resources=[
    (2, "kp1", [("no.such.config", 0, "1")])], validate_only=0))
check(r.responses[0][0] == 40 and "no.such.config" in (r.responses[0][1] or ""),
      "an unknown config key is INVALID_CONFIG naming it")

# 4. create partitions, both clients.
ck_wait(ck.create_partitions([NewPartitions("ck1", 4)]))
kp.create_partitions({"kp1": KpNewPartitions(3)})
check(volume_partitions("ck1") == 4 and volume_partitions("kp1") == 3,
      "partitions grown on the volume (ck1 4, kp1 3)")

# 5. delete records.
prod = KafkaProducer(bootstrap_servers=broker)
for i in range(10):
    prod.send("kp1", b"r%d" % i, partition=0)
prod.flush()
prod.close()
r = kp_send(kp, DeleteRecordsRequest_v1(topics=[("kp1", [(0, 4), (1, 99)])], timeout_ms=5000))
parts = {p[0]: (p[1], p[2]) for p in r.topics[0][1]}
check(parts.get(0) == (4, 0) and parts.get(1, (0, 0))[1] == 1,
      "DeleteRecords: kp1/0 starts at 4, past the high watermark OFFSET_OUT_OF_RANGE: %r" % parts)
c = KafkaConsumer(bootstrap_servers=broker)
check(c.beginning_offsets([TopicPartition("kp1", 0)])[TopicPartition("kp1", 0)] == 4 and
      volume_topic("kp1")["partitions"][0]["log_start"] == 4,
      "the log start of kp1/0 reads back 4 (ListOffsets and the volume's manifest)")
c.close()

# 6. groups: one with a member (confluent-kafka), one committed standalone.
member = CkConsumer({"bootstrap.servers": broker, "group.id": "gmember",
                     "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
member.subscribe(["kp1"])
for _ in range(40):
    m = member.poll(0.25)
    if m is not None and not m.error():
        break
standalone = KafkaConsumer(bootstrap_servers=broker, group_id="gadmin", enable_auto_commit=False)
standalone.commit({TopicPartition("kp1", 0): OffsetAndMetadata(6, ""),
                   TopicPartition("kp1", 1): OffsetAndMetadata(0, "")})
standalone.close(autocommit=False)
listed = [g[0] for g in kp.list_consumer_groups()]
check("gadmin" in listed and "gmember" in listed, "list_consumer_groups (kafka-python): %r" % listed)
ckl = [g.id for g in ck.list_groups(timeout=20)]
check("gmember" in ckl, "list_groups (confluent-kafka): %r" % ckl)
desc = {d.group: d for d in kp.describe_consumer_groups(["gmember", "gadmin"])}
check(desc["gmember"].state == "Stable" and len(desc["gmember"].members) == 1 and
      desc["gadmin"].state == "Empty", "describe_consumer_groups: gmember Stable with its member")
check(volume_offsets("gadmin") == {("kp1", 0): 6, ("kp1", 1): 0}, "gadmin's offsets on the volume")

# 7. delete committed offsets (OffsetDelete through kafka-python's codec).
coord = kp._find_coordinator_ids(["gadmin"])["gadmin"]
r = kp_send(kp, OffsetDeleteRequest_v0(group_id="gadmin", topics=[("kp1", [(1,)])]), coord)
check(r.error_code == 0 and r.topics[0][1][0][1] == 0, "OffsetDelete kp1/1 of gadmin")
got = {tp.partition: om.offset for tp, om in kp.list_consumer_group_offsets("gadmin").items()}
check(got == {0: 6} and volume_offsets("gadmin") == {("kp1", 0): 6},
      "gadmin keeps kp1/0 only (read back and on the volume): %r" % got)

# 8. delete groups: one with a member is NON_EMPTY_GROUP, the other goes.
res = dict(kp.delete_consumer_groups(["gmember", "gadmin"]))
check(res["gmember"].errno == 68 and res["gadmin"].errno == 0,
      "delete_consumer_groups: gmember NON_EMPTY_GROUP, gadmin deleted: %r" % res)
check("gadmin" not in [g[0] for g in kp.list_consumer_groups()] and volume_offsets("gadmin") == {},
      "gadmin is gone (listed and on the volume)")
member.close()

# 9. describe the cluster: kafka-python (Metadata) and DescribeCluster.
kc = kp.describe_cluster()
wire = Conn(broker)
dc = wire.call("DescribeCluster", 1, {"IncludeClusterAuthorizedOperations": False,
                                      "EndpointType": 1})
check(dc and dc["ErrorCode"] == 0 and dc["ClusterId"] == kc["cluster_id"] and
      [b["BrokerId"] for b in dc["Brokers"]] == [b["node_id"] for b in kc["brokers"]] and
      dc["ControllerId"] == kc["controller_id"],
      "DescribeCluster agrees with Metadata: %r / %r" % (dc, kc))
md = ck.list_topics(timeout=20)
check(md.cluster_id == dc["ClusterId"] and len(md.topics["ck1"].partitions) == 4,
      "confluent-kafka's view: the same cluster id, ck1 with 4 partitions")

kp.close()
if FAILS:
    print("%d failed" % len(FAILS))
    sys.exit(1)
print("admin clients: all good")
