#!/usr/bin/env bash
# Every faultfs behaviour through a FUSE mount with two hosts.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
kaas_scratch
echo '{"attr_timeout_ms": 600000}' >"$KAAS_SCRATCH/cfg.json"
ffs_start b 2 --seed 3 --config "$KAAS_SCRATCH/cfg.json"
A=$M/host0 B=$M/host1
nsilly() { ls -a "$1" | grep -c '^\.nfs[0-9a-f]\{24\}$'; }
# The kernel sends FUSE's RELEASE after close() has returned: the last
# close's removal is waited for (5 s at most), as an NFS client's is.
no_silly() { [ "$(nsilly "$1")" = 0 ]; }

# --- silly-rename on unlink: .nfs name, EBUSY, ENOTEMPTY, removed at last close
mkdir "$A/d"
echo hello >"$A/d/f"
exec 3<"$A/d/f"
rm "$A/d/f" || kaas_fail "unlink of an open file failed"
expect "silly-renamed file in the lower dir" "$(nsilly "$FFS_LOWER/d")" 1
expect "silly-renamed file visible to the other host" "$(nsilly "$B/d")" 1
expect "fstat through the open handle after unlink" "$(stat -L -c %s /proc/self/fd/3)" 6
expect "read through the open handle after unlink" "$(cat <&3)" hello
silly=$(ls -a "$A/d" | grep '^\.nfs')
# (on the holding host: another host's unlink is a plain remove, as on the
# kernel client; tests/faultfs/test_model covers that)
expect_err "unlink of the .nfs file" "busy" rm "$A/d/$silly"
expect_err "rmdir of its directory" "not empty" rmdir "$A/d"
exec 3<&-
kaas_wait_for 5 no_silly "$FFS_LOWER/d"
expect "silly file removed at last close" "$(nsilly "$FFS_LOWER/d")" 0
rmdir "$A/d" || kaas_fail "rmdir after the last close failed"

# --- silly-rename on rename-over
echo old >"$A/t"
echo new >"$A/n"
exec 3<"$A/t"
mv "$A/n" "$A/t"
expect "rename over an open file silly-renames it" "$(nsilly "$FFS_LOWER")" 1
IFS= read -r line <&3
expect "old content through the old handle" "$line" old
expect "new content by name" "$(cat "$B/t")" new
exec 3<&-
kaas_wait_for 5 no_silly "$FFS_LOWER"
expect "no silly file left" "$(nsilly "$FFS_LOWER")" 0

# --- ESTALE for another host's handle on a removed file
echo data >"$A/s"
exec 4<"$B/s"
rm "$A/s"
expect_err "read by another host after removal" "Stale file handle" bash -c 'IFS= read -r l <&4'
exec 4<&-

# --- close-to-open: unpublished until close; an earlier opener keeps its view
# (a writer that keeps its fd open without dup/close: every close(2) flushes)
mkfifo "$KAAS_SCRATCH/go"
{ printf unpublished; read -r -t 20 _ <>"$KAAS_SCRATCH/go"; } >"$A/c" &
writer=$!
kaas_on_exit "kill $writer"
sees() { [ "$(cat "$1")" = "$2" ]; }
kaas_wait_for 10 sees "$A/c" unpublished || kaas_fail "the writing host does not see its own write"
echo "ok: the writing host sees its own write"
expect "other host before the writer's close" "$(cat "$B/c")" ""
echo go >"$KAAS_SCRATCH/go"
wait $writer
expect "other host after the writer's close" "$(cat "$B/c")" unpublished
echo v1 >"$A/e"
exec 6<"$B/e"
echo version2 >"$A/e"
IFS= read -r line <&6
expect "earlier opener keeps what it saw at open" "$line" v1
exec 6<&-
expect "a new open sees the new version" "$(cat "$B/e")" version2

# --- attribute cache: stale sizes by name on the other host
echo ab >"$A/z"
expect "size on host1" "$(stat -c %s "$B/z")" 3
echo abcdef >"$A/z"
expect "stale size on host1 (attribute cache)" "$(stat -c %s "$B/z")" 3
expect "fresh size on the writing host" "$(stat -c %s "$A/z")" 7

# --- torn publication: fsync cut, the other host sees a prefix
ffs_ctl set '{"op":"fsync","path":"torn","fault":"torn","times":1}' >/dev/null
expect_err "torn fsync" "Input/output error" dd if=/dev/zero of="$A/torn" bs=8192 count=1 conv=fsync status=none
size=$(stat -c %s "$FFS_LOWER/torn")
[ "$size" -gt 0 ] && [ "$size" -lt 8192 ] || kaas_fail "torn flush published $size bytes, expected a prefix"
echo "ok: torn flush published a prefix of $size bytes"

# --- interrupted recursive delete: EIO after the 4th unlink/rmdir, then re-driven
mkdir -p "$A/tree/a/b"
for i in 1 2 3 4 5; do echo x >"$A/tree/a/f$i"; echo y >"$A/tree/a/b/g$i"; done
ffs_ctl set '{"op":"unlink,rmdir","path":"tree/*","after":4,"fault":"EIO"}' >/dev/null
expect_err "rm -rf interrupted" "Input/output error" rm -rf "$A/tree"
[ -d "$FFS_LOWER/tree" ] || kaas_fail "the tree vanished despite the fault"
left=$(find "$FFS_LOWER/tree" -type f | wc -l)
[ "$left" -lt 10 ] || kaas_fail "nothing was deleted before the fault"
ffs_ctl clear >/dev/null
rm -rf "$A/tree" || kaas_fail "re-driven rm -rf failed"
[ ! -e "$FFS_LOWER/tree" ] || kaas_fail "tree still there"
echo "ok: interrupted delete left $left files, re-drive finished it"
# ... and the kill variant: the deleting process dies mid-way
mkdir -p "$A/tree2"
for i in 1 2 3 4 5 6; do echo x >"$A/tree2/f$i"; done
ffs_ctl set '{"op":"unlink","path":"tree2/*","after":2,"fault":"kill"}' >/dev/null
bash -c 'exec rm -rf "$1"' _ "$A/tree2"
rc=$?
expect "rm killed by the fault (128+9)" "$rc" 137
left=$(ls "$FFS_LOWER/tree2" | wc -l)
[ "$left" -gt 0 ] && [ "$left" -lt 6 ] || kaas_fail "kill: $left files left, expected a partial delete"
ffs_ctl clear >/dev/null
rm -rf "$A/tree2" || kaas_fail "re-drive after kill failed"
echo "ok: killed delete left $left files"

# --- host crash: unpublished data lost, handles dead, silly files until heal
{ printf unpublished; read -r -t 20 _ <>"$KAAS_SCRATCH/go"; printf more || exit 5; } >"$A/lost" &
writer=$!
kaas_on_exit "kill $writer"
kaas_wait_for 10 sees "$A/lost" unpublished || kaas_fail "writer did not start"
echo held >"$A/held"
exec 6<"$A/held"
rm "$A/held"
ffs_ctl crash 0 >/dev/null || kaas_fail "ctl crash failed"
echo go >"$KAAS_SCRATCH/go"
wait $writer
expect "write through a crashed host's handle fails" "$?" 5
{ exec 6<&-; } 2>/dev/null
expect "unpublished data lost in the crash" "$(cat "$B/lost")" ""
expect "silly file left behind by the crash" "$(nsilly "$FFS_LOWER")" 1
ffs_ctl dump | grep -q '"leftovers":\[".nfs' || kaas_fail "dump does not list the leftover"
ffs_ctl heal 0 >/dev/null
expect "heal removed it" "$(nsilly "$FFS_LOWER")" 0
echo again >"$A/after" || kaas_fail "host 0 unusable after the crash"

# --- errors and latency by rule
ffs_ctl set '{"op":"write","path":"*.log","fault":"ENOSPC"}' >/dev/null
ffs_ctl set '{"op":"create","path":"q*","host":1,"fault":"EDQUOT"}' >/dev/null
# (the kernel re-drives an open that got ESTALE once: two faults to see it)
ffs_ctl set '{"op":"open","path":"st","fault":"ESTALE","times":2}' >/dev/null
ffs_ctl set '{"op":"mkdir","fault":"delay","delay_ms":100}' >/dev/null
expect_err "ENOSPC on write" "No space left" bash -c "echo x >'$A/a.log'"
expect_err "EDQUOT on create, host 1" "quota" touch "$B/q1"
touch "$A/q1" || kaas_fail "the EDQUOT rule hit host 0"
echo s >"$A/st"
expect_err "ESTALE on open, for 2 ops" "Stale" cat "$A/st"
expect "second open fine" "$(cat "$A/st")" s
mkdir "$A/slow" || kaas_fail "delayed mkdir failed"
ffs_ctl counters | grep -q '"faults"' || kaas_fail "no counters"
ffs_ctl dump | grep -q '"fault":"delay"' || kaas_fail "the delay is not in the event log"
grep -q '"fault":"ENOSPC"' "$M/.faultfs-events.jsonl" || kaas_fail "no ENOSPC in the event log file"
ffs_ctl clear >/dev/null

# --- lost replies: applied on the server, answered what a re-sent request gets
ffs_ctl set '{"op":"create","path":"lr/x","times":1,"fault":"lost_reply"}' >/dev/null
ffs_ctl set '{"op":"rename","path":"lr/m","times":1,"fault":"lost_reply"}' >/dev/null
ffs_ctl set '{"op":"unlink","path":"lr/u","times":1,"fault":"lost_reply"}' >/dev/null
mkdir "$A/lr"
# (bash's noclobber opens with O_CREAT|O_EXCL)
expect_err "exclusive create with a lost reply" "exist" bash -c "set -o noclobber; echo x >'$A/lr/x'"
[ -e "$FFS_LOWER/lr/x" ] || kaas_fail "the exclusive create whose reply was lost did not happen"
expect "the other host sees it, empty" "$(stat -c %s "$B/lr/x")" 0
echo m >"$A/lr/m"
expect_err "rename with a lost reply" "No such file" mv "$A/lr/m" "$A/lr/n"
expect "the rename landed (other host)" "$(cat "$B/lr/n")" m
expect "the rename landed (the renaming host)" "$(cat "$A/lr/n")" m
[ -e "$FFS_LOWER/lr/m" ] && kaas_fail "the old name is still there after the rename"
echo u >"$A/lr/u"
expect_err "unlink with a lost reply" "No such file" rm "$A/lr/u"
[ -e "$FFS_LOWER/lr/u" ] && kaas_fail "the unlink whose reply was lost did not happen"
ffs_ctl dump | grep -q '"fault":"lost_reply"' || kaas_fail "no lost_reply in the event log"
ffs_ctl clear >/dev/null

# --- control errors are named
expect_err "bad ctl command" "unknown command" ffs_ctl '{"cmd":"fly"}'
expect_err "bad rule" "bad or unknown key" ffs_ctl set '{"op":"nope","fault":"EIO"}'
expect_err "no daemon" "no faultfs daemon" "$FAULTFS" ctl "$KAAS_SCRATCH" dump
echo "all FUSE behaviours OK"
