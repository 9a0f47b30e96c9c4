#!/usr/bin/env bash
# kaasctl verify on a volume kaasd wrote: clean (exit 0), and no command
# changes it; then, each on its own copy of the volume, a flipped byte in a
# sealed segment, a manifest pointing past its segment's end and a corrupt
# manifest (exit 1, each named with its path); a stale temp file, an NFS
# silly rename, an orphan segment and an undrained .trash (warnings naming
# their paths, exit 0); kaasctl trash lists the .trash entry; --json is
# well-formed; a missing topic or partition and a bad URL exit 2.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-lib.sh"
set -e

# Two kaasd lives: the second open seals the first life's segment.
kaasd_start
seq 1 200 | awk '{ printf "k%d:value-%d\n", $1, $1 }' | kc -P -t vt -K: -X acks=all
kaasd_stop
kaasd_start
seq 201 220 | awk '{ printf "k%d:value-%d\n", $1, $1 }' | kc -P -t vt -K: -X acks=all
kaasd_stop
D="$KAAS_SCRATCH/data"
sealed=$(cd "$D" && ls vt/0/*.log | head -n1)
[ -n "$sealed" ] || kaas_fail "no segment"
[ "$(ls "$D"/vt/0/*.log | wc -l)" -ge 2 ] || kaas_fail "expected a sealed and an active segment"

# Every command only reads: the tree (names, sizes, times, contents) is
# the same after running them all.
snapshot() { (cd "$D" && find . -printf '%p %s %T@\n' | sort && find . -type f -print0 | sort -z | xargs -0 md5sum); }
before=$(snapshot)
kctl_expect 0 --data "$D" verify
kctl_has '^clean: 0 error'
n=0
for c in "status --watch-ms 0" groups trash "dump-log vt 0"; do
	kctl_expect 0 --data "$D" $c
	kctl_expect 0 --data "$D" $c --json
	n=$((n + 1))
	printf '%s\n' "$KCTL_OUT" >"$KAAS_SCRATCH/out.$n.json"
done
python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$KAAS_SCRATCH"/out.*.json ||
	kaas_fail "a --json output is not JSON"
[ "$before" = "$(snapshot)" ] || kaas_fail "a kaasctl command changed the volume"
kctl_expect 0 --data "$D" verify --topic vt --json
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["clean"] and d["errors"] == 0 and d["batches"] >= 2, d' <<<"$KCTL_OUT" ||
	kaas_fail "verify --json of a clean volume"

copy() { rm -rf "$KAAS_SCRATCH/c"; cp -a "$D" "$KAAS_SCRATCH/c"; C="$KAAS_SCRATCH/c"; }

# 1. A flipped bit in the first batch's last record.
copy
flip_record_byte "$C/$sealed"
kctl_expect 1 --data "$C" verify
kctl_has "^error +bad-crc +$C/$sealed\$"
kctl_has 'fail their CRC32C, the first at offset 0 \(file position 0\)'
kctl_has '^CORRUPT: 1 error'
kctl_expect 1 --data "$C" verify --json
python3 -c '
import json,sys
d=json.load(sys.stdin)
assert not d["clean"], d
assert any(f["kind"] == "bad-crc" and f["path"] == sys.argv[1] for f in d["findings"]), d["findings"]
' "$sealed" <<<"$KCTL_OUT" || kaas_fail "verify --json does not name the flipped segment"

# 2. The manifest records more bytes than the sealed segment holds.
copy
truncate -s -7 "$C/$sealed"
kctl_expect 1 --data "$C" verify --topic vt
kctl_has "^error +manifest-past-eof +$C/$sealed\$"
kctl_has 'manifest-[0-9]+\.json records a sealed end [0-9]+ but the file holds [0-9]+ bytes'

# 2b. A manifest whose body no longer matches its CRC: the partition is
#     offline; verify names the file, status shows the partition's error.
copy
m=$(cd "$C" && ls vt/0/manifest-*.json | tail -n1)
sed -i '2s/"log_start":0/"log_start":1/' "$C/$m"
grep -q '"log_start":1' "$C/$m" || kaas_fail "could not alter $m"
kctl_expect 1 --data "$C" verify
kctl_has "^error +corrupt-manifest +$C/$m\$"
kctl_expect 0 --data "$C" status --watch-ms 0 --json
python3 -c '
import json,sys
p=json.load(sys.stdin)["topics"][0]["partitions"][0]
assert p["high_watermark"] is None and "crc" in p["error"].lower(), p
' <<<"$KCTL_OUT" || kaas_fail "status of a corrupt manifest: $KCTL_OUT"

# 3. Transient leftovers: warnings with their paths, exit 0.
copy
tmp="vt/0/.tmp.manifest-0000000002.json.otherhost.4242.00000000000000aa.7"
echo partial >"$C/$tmp"
touch "$C/vt/0/.nfs00000000000000aa00000001"
orphan="vt/0/00000000000000099999-0000000001.log"
echo junk >"$C/$orphan"
mkdir -p "$C/.trash/gone.0123456789abcdef0123456789abcdef/0"
echo data >"$C/.trash/gone.0123456789abcdef0123456789abcdef/0/00000000000000000000-0000000001.log"
kctl_expect 0 --data "$C" verify
kctl_has "^warning +temp-file +$C/$tmp\$"
kctl_has "^warning +nfs-silly-rename +$C/vt/0/\\.nfs00000000000000aa00000001\$"
kctl_has "^warning +undrained-trash +$C/\\.trash/gone\\.0123456789abcdef0123456789abcdef\$"
kctl_has "^warning +orphan-segment +$C/$orphan\$"
kctl_has '^clean: 0 error\(s\), 4 warning'
kctl_expect 0 --data "$C" trash
kctl_has '^\.trash/gone\.0123456789abcdef0123456789abcdef +gone +removing-tree +1 +5 '
kctl_expect 0 --data "$C" trash --json
python3 -c '
import json,sys
d=json.load(sys.stdin)
p=[e for e in d["pending"] if e["path"].startswith(".trash/gone.")]
assert len(p) == 1 and p[0]["topic"] == "gone" and p[0]["files"] == 1, d
' <<<"$KCTL_OUT" || kaas_fail "trash --json"

# 4. Errors that stop a command: exit 2 with a message naming the problem.
kctl_expect 2 --data "$D" verify --topic nosuch
grep -q "no topic 'nosuch'" <<<"$KCTL_ERR" || kaas_fail "missing topic: $KCTL_ERR"
kctl_expect 2 --data "$KAAS_SCRATCH/absent" status
grep -q "cannot open data volume $KAAS_SCRATCH/absent" <<<"$KCTL_ERR" || kaas_fail "bad URL: $KCTL_ERR"
kctl_expect 2 --data "bogus://x" verify
kctl_expect 2 --data "$D" dump-log vt 5
grep -q "no partition 5" <<<"$KCTL_ERR" || kaas_fail "missing partition: $KCTL_ERR"
echo "kaasctl verify: clean, bad CRC, manifest past EOF, leftovers, errors: all good"
