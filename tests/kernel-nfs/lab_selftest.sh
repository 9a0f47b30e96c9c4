#!/bin/bash
# scripts/nfs-lab itself: usage errors exit 2; a guest that cannot come up
# in time exits 125 with a clear message, no guest left running; a command
# runs inside with HOST0 set, its stdout and stderr streamed, its exit status
# passed back; nothing is left but the work directory, removed at the end.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
lab="$KAAS_TOP_SRCDIR/scripts/nfs-lab"
kaas_scratch
uml_of() { pgrep -f "init=$1/init.sh" 2>/dev/null; }

# Usage errors.
"$lab" run --hosts 0 -- true 2>/dev/null; rc=$?
[ $rc = 2 ] || kaas_fail "--hosts 0: exit $rc, expected 2"
"$lab" run --export xfs -- true 2>/dev/null; rc=$?
[ $rc = 2 ] || kaas_fail "--export xfs: exit $rc, expected 2"
"$lab" run 2>/dev/null; rc=$?
[ $rc = 2 ] || kaas_fail "no command: exit $rc, expected 2"
"$lab" check || kaas_skip "the kernel NFS lab cannot run here (scripts/nfs-lab check)"

# A boot that cannot finish in 1 s.
W1=$KAAS_SCRATCH/boot
out=$("$lab" run --boot-timeout 1 --workdir "$W1" -- true 2>&1); rc=$?
echo "$out" | head -3
[ $rc = 125 ] || kaas_fail "--boot-timeout 1: exit $rc, expected 125"
grep -q "did not boot within 1 s" <<<"$out" || kaas_fail "no clear message for a guest that did not boot"
[ -z "$(uml_of "$W1")" ] || kaas_fail "a guest is still running after the boot timeout"

# A command: environment, streams, status.
W2=$KAAS_SCRATCH/run
"$lab" run --hosts 2 --workdir "$W2" --timeout 300 -- \
	bash -c 'echo "hosts=$KAAS_LAB_HOSTS"; echo data >"$HOST0/f"; cat "$HOST1/f"; echo to-stderr >&2; exit 7' \
	>"$KAAS_SCRATCH/out" 2>"$KAAS_SCRATCH/err"; rc=$?
cat "$KAAS_SCRATCH/out"; tail -3 "$KAAS_SCRATCH/err"
[ $rc = 125 ] && kaas_skip "the kernel NFS lab could not start: $(tail -3 "$KAAS_SCRATCH/err")"
[ $rc = 7 ] || kaas_fail "exit $rc, expected the command's 7"
[ "$(cat "$KAAS_SCRATCH/out")" = "$(printf 'hosts=2\ndata')" ] || kaas_fail "stdout not streamed as written"
grep -q '^to-stderr$' "$KAAS_SCRATCH/err" || kaas_fail "stderr not streamed"
[ ! -e "$W2" ] || kaas_fail "the work directory was left behind: $(ls "$W2")"
[ -z "$(uml_of "$W2")" ] || kaas_fail "a guest is still running"
echo PASS
