#!/bin/bash
# A broker on a volume it cannot write (issue 33): an existing volume,
# readable but not writable by the user kaasd runs as, makes it refuse to
# start, exit non-zero, and say why, naming the path and the error; before,
# it logged "joined" and "listening", served no partition and fell silent.
# Runs kaasd as nobody (needs root and setpriv).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
[ "$(id -u)" = 0 ] || kaas_skip "needs root (to run kaasd as another user)"
command -v setpriv >/dev/null 2>&1 || kaas_skip "setpriv is not installed"
setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null ||
	kaas_skip "cannot run as nobody here"
setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$KAASD" ||
	kaas_skip "nobody cannot run $KAASD (its directories are not searchable)"

# A volume with a topic, written by root.
kaasd_start
echo x | kc -P -t t || kaas_fail "produce"
kaasd_stop
chmod 755 "$KAAS_SCRATCH"
chmod -R a+rX "$KAAS_SCRATCH/data"

log="$KAAS_SCRATCH/nobody.log"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$KAASD" --data "$KAAS_SCRATCH/data" --listen 127.0.0.1:0 2>"$log" &
pid=$!
kaas_on_exit "kill -9 $pid 2>/dev/null"
rc=
for i in $(seq 1 100); do
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid" && rc=0 || rc=$?
		break
	fi
	sleep 0.1
done
if [ -z "$rc" ]; then
	cat "$log" >&2
	kaas_fail "kaasd on a volume it cannot write is still running after 10 s"
fi
cat "$log"
[ "$rc" != 0 ] || kaas_fail "kaasd on a volume it cannot write exited 0"
grep -q "cannot write the cluster directory: Permission denied.*__cluster.*refusing to start" "$log" ||
	kaas_fail "no error naming the cluster directory and the permission"
! grep -q "listening on" "$log" || kaas_fail "it said it was listening"
echo "kaasd on an unwritable volume: refused to start (exit $rc), saying why"
