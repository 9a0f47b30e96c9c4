#!/bin/bash
# Transactions on a compacted topic (issue 21): librdkafka's transactional
# producer writes keyed records in four transactions (committed, aborted,
# committed, aborted) to one partition with cleanup.policy=compact,
# segment.ms=1000 and min.cleanable.dirty.ratio=0.01; once housekeeping has
# rolled and cleaned it, full reads from the beginning with read_committed
# and with read_uncommitted (kcat) both show exactly the latest committed
# value of every key: no aborted record, no superseded committed one.  The
# same after a restart (the cleaned set and its aborted index from the
# volume).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
command -v kcat >/dev/null || kaas_skip "kcat is not installed"
kaas_scratch
kaasd_start
TOPIC=ctx

timeout 60 $PY - "$BROKER" "$TOPIC" <<'PYEOF' || kaas_fail "CreateTopics $TOPIC failed"
import sys
from kafka.admin import KafkaAdminClient, NewTopic
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=20000)
res = admin.create_topics([NewTopic(sys.argv[2], 1, 1, topic_configs={
    "cleanup.policy": "compact", "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "0"})])
for (name, err, msg) in res.topic_errors:
    if err:
        sys.exit("create %s: %s %s" % (name, err, msg))
PYEOF

# "key value" lines of a full read, sorted.
read_kv() {
	timeout 30 kcat -b "$BROKER" -C -t "$TOPIC" -o beginning -e -q -X isolation.level="$1" \
		-f '%k %s\n' 2>/dev/null | sort
}
dir="$KAAS_SCRATCH/data/$TOPIC/0"
cleaned() { ls "$dir" | grep -Ec '^[0-9]{20}-[0-9]{10}-[0-9]{10}\.log$'; }

# commit c1 on k0..k5, abort a1 on k0..k5, commit c2 on k0..k2, abort a2 on k0..k5.
for step in "commit c1 6" "abort a1 6" "commit c2 3" "abort a2 6"; do
	set -- $step
	out=$(KAAS_TXN_KEYS=$3 txn_client "$BROKER" ctx-tx "$1" "$TOPIC" "$TOPIC" "$2") ||
		{ tail -n 30 "$KAASD_LOG" >&2; kaas_fail "$1 transaction $2 failed: $out"; }
	[ "$out" = ok ] || kaas_fail "$1 transaction $2: $out"
	# The aborted records are there until a cleaning pass (housekeeping
	# may already have run one) removes them.
	if [ "$1" = abort ]; then
		got=$(read_kv read_uncommitted)
		n=$(cleaned) # after the read: a pass before it left a cleaned file
		echo "$got" | grep -q " $2-" || [ "$n" -gt 0 ] ||
			{ echo "$got" >&2; kaas_fail "the aborted records of $2 were not written"; }
	fi
done
want=$(printf 'k0 c2-0\nk1 c2-1\nk2 c2-2\nk3 c1-3\nk4 c1-4\nk5 c1-5\n' | sort)

check() {
	[ "$(read_kv read_committed)" = "$want" ] && [ "$(read_kv read_uncommitted)" = "$want" ]
}
# Rolled by age and cleaned by housekeeping (every 5 s).
for i in $(seq 1 60); do check && break; sleep 1; done
if ! check; then
	echo "read_committed:" >&2; read_kv read_committed >&2
	echo "read_uncommitted:" >&2; read_kv read_uncommitted >&2
	ls -l "$dir" >&2
	kaas_fail "not cleaned to the latest committed value per key within 60 s"
fi
echo "t=$SECONDS: cleaned: $(cleaned) cleaned segment(s)"

# A restart serves the cleaned set (and its aborted index) from the volume.
kaasd_stop
kaasd_start
check || { read_kv read_committed >&2; read_kv read_uncommitted >&2; kaas_fail "after a restart"; }
grep -q 'AddressSanitizer\|runtime error' "$KAASD_LOG" && kaas_fail "sanitizer report in the log"
kaasd_stop
echo PASS
