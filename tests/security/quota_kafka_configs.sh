#!/bin/bash
# Client quotas (issue 35) managed by Kafka's own tool: kafka-configs
# (kafka.admin.ConfigCommand of Kafka 4.x, from the jars scripts/peer-kafka
# keeps in its cache; skipped when they are not there) against kaasd:
# --alter/--describe of --entity-type users and clients, names and
# --entity-default, --delete-config; what it set is what the raw wire
# describes, and a client id it limits is throttled.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
command -v java >/dev/null || kaas_skip "no java"
V=${KAAS_PEER_KAFKA_VERSION:-4.1.2}
LIBS=${KAAS_PEER_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kaas/peer-kafka}/$V/libs
[ -f "$LIBS/../complete" ] && [ -f "$LIBS/kafka_2.13-$V.jar" ] ||
	kaas_skip "no Kafka $V jars in the peer-kafka cache (scripts/peer-kafka fetch)"
Q="$KAAS_TOP_SRCDIR/tests/security/quotas.py"
kaasd_start
configs() {
	timeout 120 java -Xshare:auto -cp "$LIBS/*" kafka.admin.ConfigCommand \
		--bootstrap-server "$BROKER" "$@" 2>"$KAAS_SCRATCH/configs.err" |
		tee -a "$KAAS_SCRATCH/configs.out"
}
configs --alter --entity-type users --entity-name alice --entity-type clients --entity-default \
	--add-config producer_byte_rate=1024,consumer_byte_rate=2048 | grep -q "Completed updating" ||
	{ cat "$KAAS_SCRATCH/configs.err" >&2; kaas_fail "kafka-configs --alter users+clients"; }
configs --alter --entity-type clients --entity-name jslow --add-config producer_byte_rate=1000 |
	grep -q "Completed updating" || kaas_fail "kafka-configs --alter clients"
configs --alter --entity-type users --entity-default --add-config request_percentage=50 |
	grep -q "Completed updating default config for users" || kaas_fail "kafka-configs default user"
out=$(configs --describe --entity-type users --entity-name alice --entity-type clients --entity-default)
echo "$out" | grep -q "user-principal 'alice', the default client-id are consumer_byte_rate=2048.0, producer_byte_rate=1024.0" ||
	kaas_fail "kafka-configs --describe users+clients: $out"
out=$(configs --describe --entity-type clients)
echo "$out" | grep -q "client-id 'jslow' are producer_byte_rate=1000.0" ||
	kaas_fail "kafka-configs --describe clients: $out"
timeout 30 python3 - "$Q" "$BROKER" <<'PY' || kaas_fail "the wire after kafka-configs"
import sys, importlib.util
spec = importlib.util.spec_from_file_location("quotas", sys.argv[1])
q = importlib.util.module_from_spec(spec); spec.loader.exec_module(q)
c = q.Conn(sys.argv[2], "admin")
err, _, f = q.describe(c, [])
want = {(("client-id", None), ("user", "alice")): {"producer_byte_rate": 1024.0,
                                                    "consumer_byte_rate": 2048.0},
        (("client-id", "jslow"),): {"producer_byte_rate": 1000.0},
        (("user", None),): {"request_percentage": 50.0}}
assert err == 0 and f == want, (err, f)
q.create_topic(sys.argv[2], "jq")
p = q.Conn(sys.argv[2], "jslow")
batch = q.record_batch(b"j" * 16000)
err, thr = q.produce(p, "jq", batch)
assert err == 0 and thr > 0, (err, thr)
print("kafka-configs' quota on client-id jslow: throttled %d ms" % thr)
PY
configs --alter --entity-type clients --entity-name jslow --delete-config producer_byte_rate |
	grep -q "Completed updating" || kaas_fail "kafka-configs --delete-config"
out=$(configs --describe --entity-type clients --entity-name jslow)
[ -z "$out" ] || kaas_fail "a deleted quota is still described: $out"
kaasd_stop
exit 0
