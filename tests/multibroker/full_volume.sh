#!/bin/bash
# Three brokers sharing a small data volume (tmpfs, size=8m) with the
# cluster directory elsewhere (--cluster-dir on another directory) and one
# topic's directory on a volume of its own (a second tmpfs mounted at
# <data>/other before the topic is created: adopted and stamped).  Once the
# data volume is full, produce to its topic fails with KAFKA_STORAGE_ERROR
# while produce to the topic elsewhere, metadata (every broker, a live
# controller), membership (no broker fenced or declared dead) and
# consumer-group offset commits and fetches keep working; once space is
# freed the partition takes writes again and every acknowledged message is
# there.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
S=$KAAS_SCRATCH
vol=$S/vol
mkdir -p "$vol" "$S/cluster"
mount -t tmpfs -o size=8m tmpfs "$vol" 2>/dev/null ||
	kaas_skip "cannot mount a small tmpfs to fill (needs root / CAP_SYS_ADMIN)"
kaas_on_exit "umount -l '$vol'"
mkdir -p "$vol/data/other"
mount -t tmpfs -o size=4m tmpfs "$vol/data/other" || kaas_fail "mount the second tmpfs"
kaas_on_exit "umount -l '$vol/data/other'"
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
[ -x "$MB_OFFSETS_RAW" ] || kaas_fail "no offsets_raw at $MB_OFFSETS_RAW"
MB_DATA=$vol/data
for id in 0 1 2; do mb_start $id --cluster-dir "$S/cluster"; done
[ -d "$S/cluster/brokers" ] || kaas_fail "the cluster directory is not where --cluster-dir says"
"$MBCLIENT" create "$(mb_bootstrap)" fill 1 || kaas_fail "create topic"
mb_wait_led 20 fill 1 0 0 1 2 || kaas_fail "fill/0 has no leader"
seq 1 1000 | timeout 60 kcat -b "$(mb_bootstrap)" -P -t fill -p 0 -X acks=all || kaas_fail "first produce"
"$MBCLIENT" create "$(mb_bootstrap)" other 1 || kaas_fail "create topic other"
mb_wait_led 20 other 1 0 0 1 2 || kaas_fail "other/0 has no leader"
[ -f "$vol/data/other/.topic-id.json" ] || kaas_fail "topic other is not on its own volume"
seq 1 100 | sed 's/^/o/' | timeout 60 kcat -b "$(mb_bootstrap)" -P -t other -p 0 -X acks=all || kaas_fail "produce to other"
# OffsetCommit / OffsetFetch of group fg at its coordinator (which may
# move while placement spreads slots over the brokers: asked again then).
raw() {
	local i coord out=
	for i in $(seq 1 50); do
		coord=$(mb_coordinator fg)
		if [ -n "$coord" ]; then
			out=$(timeout 30 "$MB_OFFSETS_RAW" "127.0.0.1:${MB_PORT[$coord]}" "$@")
			case $out in *16) ;; *) break ;; esac
		fi
		sleep 0.2
	done
	echo "$out"
}
[ "$(raw commit fg fill 0 100)" = 0 ] || kaas_fail "offset commit before the volume filled"

# Fill the volume: a filler file, then big incompressible messages until
# the broker says no.
avail=$(df -k --output=avail "$vol" | tail -n1)
dd if=/dev/zero of="$vol/filler" bs=1k count=$((avail > 1500 ? avail - 1500 : 0)) 2>/dev/null
head -c 4000000 /dev/urandom | base64 -w 1000 >"$S/junk.txt"
timeout 60 kcat -b "$(mb_bootstrap)" -P -t fill -p 0 -X acks=all -X message.timeout.ms=4000 -X retries=0 \
	-l "$S/junk.txt" 2>"$S/junk.err" && kaas_fail "a full volume accepted everything"
grep -qi "disk error" "$S/junk.err" ||
	{ tail -5 "$S/junk.err" >&2; kaas_fail "no KAFKA_STORAGE_ERROR (disk error) reported"; }
echo "volume full: $(df -k --output=avail "$vol" | tail -n1) KiB left; produce answered: $(grep -io 'disk error[^"]*' "$S/junk.err" | head -n1)"
echo x | timeout 30 kcat -b "$(mb_bootstrap)" -P -t fill -p 0 -X acks=all -X message.timeout.ms=3000 -X retries=0 \
	2>/dev/null && kaas_fail "produce accepted on the full volume"

# The topic elsewhere, and what lives in the cluster directory, keep working.
seq 101 200 | sed 's/^/o/' | timeout 30 kcat -b "$(mb_bootstrap)" -P -t other -p 0 -X acks=all ||
	kaas_fail "produce to the topic on another volume failed while the data volume is full"
for id in 0 1 2; do
	mb_metadata $id -t fill | grep -q 'topic "fill"' || kaas_fail "broker $id: metadata down while the data volume is full"
done
[ -n "$(mb_controller)" ] || kaas_fail "no controller while the data volume is full"
out=$(raw commit fg fill 0 500)
[ "$out" = 0 ] || { tail -n 5 "$S"/kaasd.*.log >&2; kaas_fail "offset commit answered '$out' while the data volume is full"; }
[ "$(raw fetch fg fill 0)" = "500 0" ] || kaas_fail "offset fetch while the data volume is full"
sleep 2 # two liveness timeouts of heartbeats on the cluster directory
for id in 0 1 2; do
	mb_metadata $id | grep -q "^ *3 brokers:" || { mb_metadata $id | head -5 >&2; kaas_fail "broker $id does not see three live brokers"; }
done
grep -l "fenced\|round failed" "$S"/kaasd.*.log && kaas_fail "a broker fenced itself or failed a round while only the data volume was full"

rm -f "$vol/filler" "$S/junk.txt"
ok=0
for i in $(seq 1 30); do
	if echo after | timeout 20 kcat -b "$(mb_bootstrap)" -P -t fill -p 0 -X acks=all -X message.timeout.ms=2000 2>/dev/null; then
		ok=1
		break
	fi
	sleep 1
done
[ $ok = 1 ] || { tail -n 20 "$S"/kaasd.*.log >&2; kaas_fail "fill/0 not writable again after space was freed"; }
echo "writable again after $i attempt(s)"
timeout 60 kcat -b "$(mb_bootstrap)" -C -t fill -p 0 -o beginning -e -f '%s\n' >"$S/out.txt" 2>/dev/null ||
	kaas_fail "consume"
head -n 1000 "$S/out.txt" | cmp -s - <(seq 1 1000) || kaas_fail "acknowledged messages lost"
[ "$(tail -n 1 "$S/out.txt")" = after ] || kaas_fail "the message after recovery is missing"
out=$(raw fetch fg fill 0)
[ "$out" = "500 0" ] || kaas_fail "the group's committed offset: fetch answered '$out', expected '500 0'"
timeout 60 kcat -b "$(mb_bootstrap)" -C -t other -p 0 -o beginning -e -f '%s\n' 2>/dev/null |
	cmp -s - <(seq 1 200 | sed 's/^/o/') || kaas_fail "topic other does not hold its 200 acknowledged messages"
echo PASS
