#!/bin/bash
# Settings from a config file and KAAS_CLUSTER_DIR; auto-created topics get
# the configured partition count; topic documents and stamps are where the
# design puts them; invalid topic names touch no file; auto-creation can be
# turned off.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
mkdir -p "$KAAS_SCRATCH/cluster"
cat >"$KAAS_SCRATCH/kaasd.conf" <<CONF
# test settings
num-partitions = 3
message-max-bytes = 200000
CONF
export KAAS_CLUSTER_DIR="$KAAS_SCRATCH/cluster"
kaasd_start --config "$KAAS_SCRATCH/kaasd.conf"

echo "x" | kc -P -t three || kaas_fail "produce"
n=$(kc -L -t three | grep -c "partition [0-9]")
[ "$n" = 3 ] || kaas_fail "auto-created topic has $n partitions, want 3"
[ -f "$KAAS_SCRATCH/cluster/topics/three.json" ] || kaas_fail "no topic document in the cluster dir"
[ ! -e "$KAAS_SCRATCH/data/__cluster" ] || kaas_fail "cluster state written under the data dir"
head -n1 "$KAAS_SCRATCH/data/three/.topic-id.json" | grep -q '"kaas":"topic-id"' ||
	kaas_fail "no topic-id stamp"
for p in 0 1 2; do [ -d "$KAAS_SCRATCH/data/three/$p" ] || kaas_fail "partition $p dir missing"; done

# Invalid names: INVALID_TOPIC_EXCEPTION, nothing created.
# (the broker documents are rewritten by every heartbeat: not compared)
before=$(cd "$KAAS_SCRATCH" && find data cluster -not -path 'cluster/brokers*' | sort | md5sum)
for bad in '..' '.' 'a/b' "$(printf 'x%.0s' $(seq 1 250))" 'sp ace'; do
	out=$(kc -L -t "$bad" 2>&1 || true)
	echo "$out" | grep -qi "invalid\|topic exception\|Broker: Invalid topic" ||
		kaas_fail "metadata for '$bad' did not say invalid: $out"
done
after=$(cd "$KAAS_SCRATCH" && find data cluster -not -path 'cluster/brokers*' | sort | md5sum)
[ "$before" = "$after" ] || kaas_fail "an invalid topic name touched the volume"
kaasd_stop

# A removal interrupted after its rename aside is finished at the next start;
# each start leads its partitions with a higher leader epoch (the controller
# bumps the slots of a broker that restarted).
mkdir -p "$KAAS_SCRATCH/data/.trash/gone.00112233445566778899aabbccddeeff/0"
echo junk >"$KAAS_SCRATCH/data/.trash/gone.00112233445566778899aabbccddeeff/0/x.log"
e1=$(sed -n 's/.*topic three partition 0: leading with epoch \([0-9]*\).*/\1/p' "$KAASD_LOG" | tail -n1)
# Auto-creation off: unknown topics stay unknown.
kaasd_start --auto-create-topics false
e2=$(sed -n 's/.*topic three partition 0: leading with epoch \([0-9]*\).*/\1/p' "$KAASD_LOG" | tail -n1)
[ -n "$e1" ] && [ "$e2" -gt "$e1" ] || kaas_fail "leader epoch did not grow ($e1 -> $e2)"
[ -z "$(ls -A "$KAAS_SCRATCH/data/.trash")" ] || kaas_fail "interrupted removal not re-driven"
out=$(kc -L -t nosuch 2>&1 || true)
echo "$out" | grep -qi "unknown topic\|Unknown topic" || kaas_fail "auto-create off: $out"
[ ! -e "$KAAS_SCRATCH/data/nosuch" ] || kaas_fail "topic created with auto-create off"
kaasd_stop

# A damaged topic document keeps the topic offline: it is not re-created
# over (which would reclaim its data), and the document is left for repair.
doc="$KAAS_SCRATCH/cluster/topics/three.json"
sed -i '2s/"partitions":3/"partitions":4/' "$doc"
cp "$doc" "$KAAS_SCRATCH/doc.bak"
kaasd_start
out=$(kc -L -t three 2>&1 || true)
echo "$out" | grep -qi "storage\|disk error" || kaas_fail "damaged topic not reported offline: $out"
grep -q "three: document unreadable" "$KAASD_LOG" || kaas_fail "damage not logged"
cmp -s "$doc" "$KAAS_SCRATCH/doc.bak" || kaas_fail "damaged document was rewritten"
[ -d "$KAAS_SCRATCH/data/three/0" ] || kaas_fail "offline topic's data was touched"
kaasd_stop

# Bad settings are refused with a message naming them.
"$KAASD" --data "$KAAS_SCRATCH/data" --num-partitions zero 2>"$KAAS_SCRATCH/err" &&
	kaas_fail "bad --num-partitions accepted"
grep -q "num-partitions" "$KAAS_SCRATCH/err" || kaas_fail "error does not name the option"
echo PASS
