#!/bin/bash
# A Kafka broker's server.properties starts kaasd (issue 39): the keys kaas
# implements take effect under their Kafka names (num.partitions,
# auto.create.topics.enable, log.dirs as the data directory), the ones about
# what kaas does not have (replication factors, the controller quorum,
# thread counts) are accepted and noted as ignored with the reason, never
# fatal; log.dirs listing two directories is refused with a message naming
# the problem; a key nobody knows is still an error.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
S=$KAAS_SCRATCH
cat >"$S/server.properties" <<CONF
# as Kafka's config/server.properties has them
process.roles=broker,controller
node.id=0
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://127.0.0.1:0
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=$S/props-data
num.partitions=4
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
default.replication.factor=1
auto.create.topics.enable=true
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
CONF
"$KAASD" --config "$S/server.properties" --log-level info 2>"$S/kaasd.log" &
pid=$!
kaas_on_exit "kill -9 $pid"
port=
for i in $(seq 1 100); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$S/kaasd.log" | head -n1)
	[ -n "$port" ] && break
	kill -0 $pid 2>/dev/null || { cat "$S/kaasd.log" >&2; kaas_fail "kaasd refused Kafka's server.properties"; }
	sleep 0.1
done
[ -n "$port" ] || { cat "$S/kaasd.log" >&2; kaas_fail "kaasd did not start listening"; }
for k in default.replication.factor offsets.topic.replication.factor num.io.threads process.roles; do
	grep -q "ignoring $k = .*: kaas" "$S/kaasd.log" || kaas_fail "no note that $k is ignored and why"
done
echo x | kcat -b "127.0.0.1:$port" -P -t props || kaas_fail "produce"
n=$(kcat -b "127.0.0.1:$port" -L -t props | grep -c "partition [0-9]")
[ "$n" = 4 ] || kaas_fail "num.partitions=4 not in effect: the auto-created topic has $n partitions"
[ -d "$S/props-data/props/0" ] || kaas_fail "log.dirs did not name the data directory"
kill -TERM $pid; wait $pid || kaas_fail "kaasd did not stop cleanly"

# Two log directories: refused, saying why.
printf 'log.dirs=%s/a,%s/b\n' "$S" "$S" >"$S/two.properties"
out=$("$KAASD" --config "$S/two.properties" --listen 127.0.0.1:0 2>&1); rc=$?
[ $rc != 0 ] || kaas_fail "two log.dirs accepted"
grep -q "one directory" <<<"$out" || kaas_fail "no clear message for two log.dirs: $out"
# A key nobody knows: still an error, named.
printf 'no.such.key.anywhere=1\n' >"$S/bad.properties"
out=$("$KAASD" --config "$S/bad.properties" --data "$S/d3" --listen 127.0.0.1:0 2>&1); rc=$?
[ $rc != 0 ] || kaas_fail "an unknown key was accepted"
grep -q "no.such.key.anywhere" <<<"$out" || kaas_fail "the unknown key is not named: $out"
echo PASS
