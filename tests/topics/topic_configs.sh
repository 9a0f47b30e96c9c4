#!/bin/bash
# Topic configs (issue 15): given at creation, checked like Kafka (unknown
# key or bad value: INVALID_CONFIG naming it), described with their sources
# and synonyms, altered whole and incrementally, kept in the topic document
# across a restart, and honoured: retention.ms + segment.bytes delete old
# segments within a housekeeping period, max.message.bytes refuses a larger
# record with MESSAGE_TOO_LARGE.  Broker defaults by Kafka's names in the
# --config file.  Issue 33: Kafka 3.x's deprecated keys accepted
# (message.format.version ignored, described as set or 3.0-IV1); APPEND to
# a list without an override appends to its default (delete,compact).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
cat >"$KAAS_SCRATCH/kaasd.conf" <<CONF
log.retention.hours = 100
log.segment.bytes = 2097152
CONF
kaasd_start --config "$KAAS_SCRATCH/kaasd.conf"
step() { timeout 60 $PY "$KAAS_TOP_SRCDIR/tests/topics/topic_configs.py" "$BROKER" "$1" || kaas_fail "step $1"; }

step create
grep -q "WARN.*topic mfv: message.format.version=2.8 is deprecated since Kafka 3.0 and ignored" "$KAASD_LOG" ||
	kaas_fail "no warning that mfv's message.format.version is ignored"
grep -q '"replication_factor":3' "$KAAS_SCRATCH/data/__cluster/topics/rf3.json" ||
	kaas_fail "replication factor 3 not recorded in the topic document"
kc -L -t rf3 | grep -q "partition 0, leader 0, replicas: 0, isrs: 0" ||
	kaas_fail "Metadata of rf3: want the leader as its one replica and ISR: $(kc -L -t rf3)"
echo x | kc -P -t plain || kaas_fail "produce to plain"
step describe

# max.message.bytes=1000: a 2 KB record is refused, a small one taken.
head -c 2000 /dev/zero | tr '\0' a >"$KAAS_SCRATCH/big.txt"
out=$(kc -P -t small -l "$KAAS_SCRATCH/big.txt" 2>&1) && kaas_fail "a 2 KB record was accepted by max.message.bytes=1000"
echo "$out" | grep -qi "too large" || kaas_fail "2 KB record: want MESSAGE_TOO_LARGE, got: $out"
echo small | kc -P -t small || kaas_fail "a small record was refused"
echo "max.message.bytes: a 2 KB record refused (MESSAGE_TOO_LARGE), a small one taken"

# retention.ms=2000, segment.bytes=1 MiB: 3 MB of records make sealed
# segments that are gone one housekeeping period (5 s) after they aged.
head -c $((3000 * 1024)) /dev/urandom | base64 -w 1000 >"$KAAS_SCRATCH/bulk.txt"
kc -P -t cfg -l "$KAAS_SCRATCH/bulk.txt" 2>"$KAAS_SCRATCH/bulk.err" || kaas_fail "produce bulk: $(tail -n 5 "$KAAS_SCRATCH/bulk.err")"
nseg() { ls "$KAAS_SCRATCH/data/cfg/0/" | grep -c '\.log$'; }
# The first segment's base offset: above 0 once retention removed some (a
# slow run can reach a housekeeping before the count below).
first_base() { ls "$KAAS_SCRATCH/data/cfg/0/" | grep '\.log$' | sort | head -n 1 | sed 's/^0*\([0-9]\)/\1/; s/-.*//'; }
before=$(nseg)
[ "$before" -ge 3 ] || [ "$(first_base)" -gt 0 ] ||
	kaas_fail "only $before segment(s) after 3 MB with segment.bytes=1 MiB, none removed yet: $(ls -l "$KAAS_SCRATCH/data/cfg/0/" | tr "\n" " "); kcat said: $(tail -n 5 "$KAAS_SCRATCH/bulk.err")"
sleep 2
kaas_wait_for 8 bash -c "[ \$(ls '$KAAS_SCRATCH/data/cfg/0/' | grep -c '\.log\$') -le 1 ]" ||
	kaas_fail "old segments still there 10 s later: $(nseg) of $before"
echo "retention.ms=2000: $before segments down to $(nseg) within one housekeeping period"

step alter
step incremental
kaasd_stop
kaasd_start --config "$KAAS_SCRATCH/kaasd.conf"
step after-restart
kaasd_stop
echo "topic configs: all good"
