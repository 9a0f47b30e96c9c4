"""Committed offsets expire after offsets.retention (issue 15): kaasd runs
with offsets-retention-ms=2500 from its --config file.  A standalone
consumer's commit expires 2.5 s after it was made; a group with a live
member keeps its offsets however old, and they expire 2.5 s after its
last member left.  Each is checked by OffsetFetch (kafka-python) and on
the volume (kaasctl groups --volume-only).
usage: offsets_retention.py BROKER KAASCTL DATA"""
import json
import subprocess
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata

broker, kaasctl, data = sys.argv[1:4]
RETENTION = 2.5


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def committed(group):
    a = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=20000)
    try:
        return {tp.partition: om.offset for tp, om in a.list_consumer_group_offsets(group).items()}
    finally:
        a.close()


def on_volume(group):
    out = subprocess.run([kaasctl, "--data", data, "groups", "--group", group, "--volume-only",
                          "--json"], capture_output=True, text=True, timeout=30).stdout
    return {o["partition"]: o["committed"] for g in json.loads(out)["groups"]
            for o in g["offsets"] if g["group"] == group}


def expect(group, want, why):
    got, vol = committed(group), on_volume(group)
    if got != want or vol != want:
        fail("%s: %s: OffsetFetch %r, volume %r, want %r" % (group, why, got, vol, want))
    print("%s %s: %r" % (group, why, want))


prod = KafkaProducer(bootstrap_servers=broker)
for i in range(10):
    prod.send("t", b"m%d" % i, partition=0)
prod.flush()
prod.close()

# A standalone commit, and a group with a member that stays.
alone = KafkaConsumer(bootstrap_servers=broker, group_id="alone", enable_auto_commit=False)
alone.commit({TopicPartition("t", 0): OffsetAndMetadata(3, "")})
alone.close(autocommit=False)
t0 = time.time()
expect("alone", {0: 3}, "right after the commit")
live = KafkaConsumer("t", bootstrap_servers=broker, group_id="live", enable_auto_commit=False,
                     auto_offset_reset="earliest", session_timeout_ms=6000,
                     heartbeat_interval_ms=500, consumer_timeout_ms=5000)
n = 0
for _ in live:
    n += 1
    if n == 10:
        break
live.commit({TopicPartition("t", 0): OffsetAndMetadata(7, "")})
expect("live", {0: 7}, "right after the commit")

# Past the retention: the standalone commit is gone, the live group's kept.
while time.time() - t0 < RETENTION + 1.2:
    live.poll(timeout_ms=200)  # heartbeats: the member stays
expect("alone", {}, "%.1f s after the commit" % (time.time() - t0))
expect("live", {0: 7}, "with a member, %.1f s after the commit" % (time.time() - t0))

# The member leaves: retention counts from then.
live.close(autocommit=False)
t1 = time.time()
time.sleep(0.2)
expect("live", {0: 7}, "just after its member left")
time.sleep(max(0, RETENTION + 1.2 - (time.time() - t1)))
expect("live", {}, "%.1f s after its member left" % (time.time() - t1))
print("offsets retention: all good")
