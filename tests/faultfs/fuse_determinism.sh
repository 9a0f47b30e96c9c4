#!/usr/bin/env bash
# Seed determinism through FUSE: the same seed and the same workload give
# the same event log, twice; another seed gives another.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
kaas_scratch
cat >"$KAAS_SCRATCH/cfg.json" <<'JSON'
{"rules": [
  {"op": "write", "prob": 0.3, "fault": "EIO"},
  {"op": "create", "prob": 0.2, "fault": "ENOSPC"},
  {"op": "unlink", "path": "*7", "prob": 0.5, "fault": "EDQUOT"}
]}
JSON
run() { # NAME SEED
	ffs_start "$1" 1 --seed "$2" --config "$KAAS_SCRATCH/cfg.json"
	for i in $(seq 1 60); do
		echo "$i" >"$M/host0/f$((i % 13))" 2>/dev/null
		rm -f "$M/host0/f$((i % 11))" 2>/dev/null
	done
	ffs_stop "$FFS_PID" "$M" 1
	cp "$M/.faultfs-events.jsonl" "$KAAS_SCRATCH/$1.events"
	wc -l <"$KAAS_SCRATCH/$1.events"
}
run one 1234
run two 1234
run three 99
[ "$(wc -l <"$KAAS_SCRATCH/one.events")" -gt 10 ] || kaas_fail "too few faults to compare"
cmp "$KAAS_SCRATCH/one.events" "$KAAS_SCRATCH/two.events" ||
	{ diff "$KAAS_SCRATCH/one.events" "$KAAS_SCRATCH/two.events" | head; kaas_fail "same seed, different event logs"; }
cmp -s "$KAAS_SCRATCH/one.events" "$KAAS_SCRATCH/three.events" && kaas_fail "another seed gave the same log"
head -3 "$KAAS_SCRATCH/one.events"
echo "same seed, same event log ($(wc -l <"$KAAS_SCRATCH/one.events") faults)"
