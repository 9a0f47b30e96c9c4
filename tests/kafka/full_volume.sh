#!/bin/bash
# A full data volume degrades into per-partition produce errors (the append
# whose write failed: REQUEST_TIMED_OUT, possibly persisted, so that an
# idempotent client retries the very batch; later ones to the failed log:
# KAFKA_STORAGE_ERROR) while metadata keeps working (the cluster directory
# is elsewhere); once space is freed the failed partition is re-opened by
# housekeeping and takes writes again, with every acknowledged message kept.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
vol="$KAAS_SCRATCH/vol"
mkdir -p "$vol" "$KAAS_SCRATCH/cluster"
mount -t tmpfs -o size=6m tmpfs "$vol" 2>/dev/null ||
	kaas_skip "cannot mount a small tmpfs to fill (needs root / CAP_SYS_ADMIN)"
kaas_on_exit "umount -l '$vol'"
export KAAS_CLUSTER_DIR="$KAAS_SCRATCH/cluster"
KAASD_DATA="$vol/data"
kaasd_start --data "$vol/data"

seq 1 1000 | sed 's/^/k:/' | kc -P -t fill -K: -X acks=all || kaas_fail "first produce"
dd if=/dev/zero of="$vol/filler" bs=1M count=2 2>/dev/null
# Fill the rest: big incompressible messages until the broker says no.
head -c 4000000 /dev/urandom | base64 -w 1000 >"$KAAS_SCRATCH/junk.txt"
kc -P -t fill -X acks=all -X message.timeout.ms=4000 -X retries=0 -l "$KAAS_SCRATCH/junk.txt" \
	2>"$KAAS_SCRATCH/junk.err" && kaas_fail "a full volume accepted everything"
grep -qi "disk error\|storage\|timed out" "$KAAS_SCRATCH/junk.err" ||
	{ tail -5 "$KAAS_SCRATCH/junk.err" >&2; kaas_fail "no produce error reported"; }
grep -q "append to partition [0-9]* failed: No space left on device" "$KAASD_LOG" ||
	{ tail -5 "$KAASD_LOG" >&2; kaas_fail "the broker did not log the full volume"; }
kc -L -t fill | grep -q 'topic "fill"' || kaas_fail "metadata down while the data volume is full"

rm -f "$vol/filler" "$KAAS_SCRATCH/junk.txt"
ok=0
for i in $(seq 1 30); do
	if echo "k:after" | kc -P -t fill -K: -X acks=all -X message.timeout.ms=2000 2>/dev/null; then
		ok=1
		break
	fi
	sleep 1
done
[ $ok = 1 ] || { tail -20 "$KAASD_LOG" >&2; kaas_fail "partition not writable again after space was freed"; }
grep -q "re-opened" "$KAASD_LOG" || kaas_fail "no re-open logged"
kc -C -t fill -e -o beginning -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/out.txt"
head -n 1000 "$KAAS_SCRATCH/out.txt" | cmp -s - <(seq 1 1000) || kaas_fail "acknowledged messages lost"
[ "$(tail -n 1 "$KAAS_SCRATCH/out.txt")" = after ] || kaas_fail "the message after recovery is missing"
kaasd_stop
echo PASS
