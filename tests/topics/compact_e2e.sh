#!/bin/bash
# A compacted topic end to end (issue 21): CreateTopics with
# cleanup.policy=compact, DescribeConfigs answers it, keyed records with
# tombstones (gzip and uncompressed batches), segment.ms=1000 so that
# housekeeping rolls and the cleaner (min.cleanable.dirty.ratio=0.01) runs;
# then kafka-python and kcat read from the beginning exactly the latest value
# of every live key.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
kaasd_start
step() { echo "t=$SECONDS: $1"; timeout 90 $PY "$KAAS_TOP_SRCDIR/tests/topics/compact_e2e.py" "$BROKER" "$1" \
	"$KAAS_SCRATCH/latest.json" || kaas_fail "step $1"; }
step create
step produce
dir="$KAAS_SCRATCH/data/kv/0"
cleaned() { ls "$dir" | grep -Ec '^[0-9]{20}-[0-9]{10}-[0-9]{10}\.log$'; }
plain_sealed() { ls "$dir" | grep -Ec '^[0-9]{20}-[0-9]{10}\.log$'; }
# Rolled by age, then cleaned, by housekeeping (every 5 s): done when every
# record is in a cleaned segment (the active one is empty) and the replaced
# files are gone (once no fetch holds them).
done_cleaning() {
	[ "$(cleaned)" -ge 1 ] || return 1
	[ "$(plain_sealed)" -le 1 ] || return 1
	[ -z "$(find "$dir" -regextype posix-extended -regex '.*/[0-9]{20}-[0-9]{10}\.log' -size +0)" ]
}
for i in $(seq 1 300); do done_cleaning && break; sleep 0.1; done
done_cleaning || kaas_fail "not cleaned within 30 s: $(ls -l "$dir")"
echo "t=$SECONDS cleaned: $(cleaned) cleaned segment(s), $(plain_sealed) uncleaned (the active one)"
grep -q '"clean_gen"' "$dir"/manifest-*.json || kaas_fail "the manifest names no clean_gen"
step check
n=$(timeout 30 kcat -b "$BROKER" -C -t kv -o beginning -e -q -f '%o %k\n' | wc -l)
want=$($PY -c "import json; print(sum(1 for o, v in json.load(open('$KAAS_SCRATCH/latest.json')).values() if v is not None))")
[ "$n" = "$want" ] || kaas_fail "kcat read $n records, want $want"
echo "kcat: $n records from the beginning"
# A restart reads the cleaned set from the manifest.
kaasd_stop
kaasd_start
step check
kaasd_stop
echo "compacted topic: all good"
