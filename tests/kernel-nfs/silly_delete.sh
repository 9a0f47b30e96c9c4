#!/bin/bash
# Silly-renamed files of a deleted topic, on real kernel NFS mounts
# (scripts/nfs-lab, two NFS clients of one export).  The broker runs on
# mount host0; a process on host0 holds a segment file of topic sd open,
# and another on host1 holds the same file.  The topic is deleted through
# the broker.  A silly rename happens only on the client that holds the
# file when that same client unlinks it, so the broker's own client (host0)
# turns the file into a `.nfs*` name inside .trash; for host1's holder, a
# different client, the server's file simply goes away at the end.
# Checked:
#  - the delete is acknowledged and the topic is no longer listed;
#  - a `.nfs*` file appears in .trash (seen on the server's export) and
#    stays while held: the convergent delete neither removes it from under
#    the holder nor spins on it (the broker's log stays quiet, it answers);
#  - the holder on the deleting client reads every byte through its handle;
#  - once the holders close, .trash and every `.nfs*` file drain within 30 s;
#  - the name is then re-created as a new incarnation holding only its own
#    records.
# One broker on purpose: a second broker (another client) finishes a delete
# that has not finished for 30 s (KAAS_TOPICS_STUCK_MS, src/broker/topics/internal.h), and its unlink
# of the `.nfs` name is a plain REMOVE on the server (EBUSY protects a silly
# file only on the client holding it): the holder loses the file, its next
# read fails with ESTALE (seen in the lab with two brokers; faultfs answers
# EBUSY to every host there, see faultfs/README.md, "Fidelity").
# KN_HOLD_S (default 10): how long the file stays held after the delete.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kernel-nfs/kn-lib.sh"
kn_in_lab --hosts 2 --timeout 300

kaas_scratch
kn_brokers_on_mounts
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
S=$KAAS_SCRATCH
X=$KAAS_LAB_EXPORT
hold_s=${KN_HOLD_S:-10}
kc() { timeout 60 kcat -b "$(mb_bootstrap)" "$@"; }
sillies() { find "$X" -name '.nfs*' 2>/dev/null; }
trash_left() { find "$X/.trash" -mindepth 1 -maxdepth 1 2>/dev/null; }

mb_start 0
"$MBCLIENT" create "$(mb_bootstrap)" sd 1 || kaas_fail "create topic sd"
mb_wait_led 60 sd 1 0 0 || kaas_fail "sd/0 has no leader"
seq 1 500 | sed 's/^/old-/' | kc -P -t sd -X acks=all || kaas_fail "produce to sd"

C=0 O=1
# The largest file of the topic (its segment), as the server sees it.
seg=$(cd "$X" && find sd -type f ! -name '.*' -printf '%s %p\n' | sort -n | tail -n1 | cut -d' ' -f2)
[ -n "$seg" ] || kaas_fail "no file under sd/ on the export: $(cd "$X" && find sd | head)"
hc=$KAAS_LAB_WORK/mnt/host$C ho=$KAAS_LAB_WORK/mnt/host$O
cp "$hc/$seg" "$S/orig" || kaas_fail "copy $seg"
echo "broker $C on mount host$C; holding $seg ($(stat -c %s "$S/orig") bytes) on host$C and host$O"

# A holder keeps the file open on its stdin until GO exists, then reads it
# all through that handle and exits (closing it).
hold() { # MOUNT NAME
	( exec <"$1/$seg" || exit 9
	  while [ ! -e "$S/go" ]; do sleep 0.2; done
	  cat >"$S/$2.out" 2>"$S/$2.err"; echo $? >"$S/$2.rc" ) &
}
hold "$hc" a; HA=$!
hold "$ho" b; HB=$!
kaas_on_exit "touch $S/go; kill $HA $HB"
sleep 1
kill -0 $HA && kill -0 $HB || kaas_fail "a holder could not open $seg"

log=$(ls -t "$S"/kaasd.$C.*.log | head -n1)
"$MBCLIENT" delete "$(mb_bootstrap)" sd || kaas_fail "delete sd"
t_del=$SECONDS
kaas_wait_for 30 bash -c "! timeout 10 kcat -b 127.0.0.1:${MB_PORT[0]} -L 2>/dev/null | grep -q 'topic \"sd\"'" ||
	kaas_fail "sd is still listed 30 s after its delete"
kaas_wait_for 20 bash -c "find '$X/.trash' -name '.nfs*' 2>/dev/null | grep -q ." ||
	kaas_fail "no .nfs file in .trash 20 s after the delete; .trash: $(cd "$X" && find .trash 2>/dev/null | head -n 5 | tr '\n' ' ') sillies: $(sillies | head -n 3)"
silly=$(find "$X/.trash" -name '.nfs*' | head -n1)
echo "$((SECONDS - t_del)) s after the delete: ${silly#"$X"/} (and $(sillies | wc -l) .nfs file(s) in all)"

# Held for hold_s seconds: the file stays, the broker does not spin and
# goes on answering.
lines0=$(wc -l <"$log")
sleep "$hold_s"
if [ ! -e "$silly" ]; then
	grep -H 'topic sd\|trash\|sd/' "$S"/kaasd.*.log | tail -n 20 >&2
	kaas_fail "the held .nfs file was removed from under its holder ($((SECONDS - t_del)) s after the delete)"
fi
kill -0 "${MB_PID[0]}" 2>/dev/null || kaas_fail "the broker died"
timeout 10 kcat -b "127.0.0.1:${MB_PORT[0]}" -L >/dev/null 2>&1 || kaas_fail "the broker does not answer metadata while the file is held"
grown=$(( $(wc -l <"$log") - lines0 ))
echo "held $hold_s s more ($((SECONDS - t_del)) s after the delete): ${silly##*/} still there; broker $C logged $grown line(s) meanwhile"
[ "$grown" -lt 60 ] || { tail -n 20 "$log" >&2; kaas_fail "broker $C logged $grown lines in $hold_s s: the removal spins"; }

# Release: the holders read through their handles and close.
touch "$S/go"
wait $HA; wait $HB
t_rel=$SECONDS
[ "$(cat "$S/a.rc" 2>/dev/null)" = 0 ] || kaas_fail "the holder on host$C could not read its handle: $(cat "$S/a.err")"
cmp -s "$S/orig" "$S/a.out" || kaas_fail "the holder on host$C read $(stat -c %s "$S/a.out") bytes, not the file's $(stat -c %s "$S/orig")"
echo "holder on host$C (the deleting client) read all $(stat -c %s "$S/a.out") bytes; holder on host$O (another client): exit $(cat "$S/b.rc"), $(stat -c %s "$S/b.out") bytes$(grep -o 'Stale.*' "$S/b.err" | head -n1 | sed 's/^/, /')"

kaas_wait_for 30 bash -c "[ -z \"\$(find '$X' -name '.nfs*' 2>/dev/null)\" ] && [ -z \"\$(find '$X/.trash' -mindepth 1 -maxdepth 1 2>/dev/null)\" ]" ||
	kaas_fail "not drained 30 s after the holders closed: $(sillies | head -n 3 | tr '\n' ' ') $(trash_left | head -n 3 | tr '\n' ' ')"
echo "drained (.trash empty, no .nfs file) $((SECONDS - t_rel)) s after the holders closed ($((SECONDS - t_del)) s after the delete)"

# The name is free again: a new incarnation with only its own records.
ok=
for i in $(seq 1 60); do
	"$MBCLIENT" create "$(mb_bootstrap)" sd 1 2>"$S/create.err" && { ok=1; break; }
	sleep 0.5
done
[ -n "$ok" ] || kaas_fail "sd could not be re-created: $(tail -n1 "$S/create.err")"
mb_wait_led 60 sd 1 0 0 || kaas_fail "the new sd/0 has no leader"
seq 1 5 | sed 's/^/new-/' | kc -P -t sd -X acks=all || kaas_fail "produce to the new sd"
kc -C -t sd -o beginning -e -f '%s\n' >"$S/new.txt" 2>/dev/null || kaas_fail "consume the new sd"
[ "$(cat "$S/new.txt")" = "$(seq 1 5 | sed 's/^/new-/')" ] ||
	kaas_fail "the new incarnation holds $(wc -l <"$S/new.txt") records ($(grep -c old- "$S/new.txt") of the old one)"
echo "re-created sd: only its own 5 records"
echo PASS
