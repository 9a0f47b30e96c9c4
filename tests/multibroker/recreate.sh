#!/bin/bash
# Delete and re-create a topic 9 times (MB_GENERATIONS; each broker in turn
# three times: recreate_faults.sh does 20 on faultfs) on three brokers sharing one
# directory, through brokers chosen in turn: each incarnation shows only
# its own messages (never an earlier incarnation's data), and .trash
# drains.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
for id in 0 1 2; do mb_start $id; done
: "${MB_GENERATIONS:=9}"
for gen in $(seq 1 "$MB_GENERATIONS"); do
	via=$((gen % 3))
	"$MBCLIENT" create "127.0.0.1:${MB_PORT[$via]}" dr 2 2>"$KAAS_SCRATCH/admin.log" ||
		{ cat "$KAAS_SCRATCH/admin.log" >&2; kaas_fail "generation $gen: create via broker $via"; }
	mb_wait_led 20 dr 2 $(((gen + 1) % 3)) 0 1 2 || kaas_fail "generation $gen: not led"
	for p in 0 1; do
		seq 1 20 | sed "s/^/g$gen-p$p-/" |
			timeout 60 kcat -b "$(mb_bootstrap)" -P -t dr -p $p -X acks=all ||
			kaas_fail "generation $gen: produce to partition $p"
	done
	for p in 0 1; do
		timeout 60 kcat -b "$(mb_bootstrap)" -C -t dr -p $p -o beginning -e -f '%s\n' \
			>"$KAAS_SCRATCH/got.txt" 2>/dev/null || kaas_fail "generation $gen: consume $p"
		seq 1 20 | sed "s/^/g$gen-p$p-/" >"$KAAS_SCRATCH/want.txt"
		cmp -s "$KAAS_SCRATCH/want.txt" "$KAAS_SCRATCH/got.txt" ||
			{ head -n3 "$KAAS_SCRATCH/got.txt" >&2; kaas_fail "generation $gen partition $p: not exactly this incarnation's messages"; }
	done
	"$MBCLIENT" delete "127.0.0.1:${MB_PORT[$(((gen + 2) % 3))]}" dr 2>"$KAAS_SCRATCH/admin.log" ||
		{ cat "$KAAS_SCRATCH/admin.log" >&2; kaas_fail "generation $gen: delete"; }
	# Every broker forgets it before the next incarnation (listing all
	# topics: asking for "dr" would auto-create it).
	for id in 0 1 2; do
		kaas_wait_for 20 bash -c "! timeout 10 kcat -b 127.0.0.1:${MB_PORT[$id]} -L 2>/dev/null | grep -q 'topic \"dr\"'" ||
			kaas_fail "generation $gen: broker $id still lists the deleted topic"
	done
done
kaas_wait_for 30 bash -c "[ -z \"\$(ls -A '$MB_DATA/.trash' 2>/dev/null)\" ]" ||
	kaas_fail ".trash did not drain: $(ls "$MB_DATA/.trash" | head -3)"
echo "$MB_GENERATIONS incarnations, each with only its own data; .trash empty"
echo PASS
