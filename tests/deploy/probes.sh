#!/bin/bash
# kaas-test-timeout: 120
# The Kubernetes probes answer on a kaasd started as the StatefulSet starts
# it: the entrypoint script's arguments for pod kaas-0, with the data
# directory in scratch, the Kafka and HTTP listeners moved to 127.0.0.1 on
# free ports, and the ConfigMap's kaasd.conf read through the symlinks a
# ConfigMap mount has.  The liveness and readiness probe paths of the
# manifest answer 200 within 30 s; an unknown path does not; SIGTERM stops
# kaasd well within the pod's grace period.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/deploy/deploy-lib.sh"
deploy_load
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"
S=$KAAS_SCRATCH

args=$(deploy_kaasd_args kaas-0 ns1) || kaas_fail "the StatefulSet's command script failed"
ready_path=$DEPLOY_READY_PATH
live_path=$DEPLOY_LIVE_PATH
echo "$args" | grep -qx -- --http-listen || kaas_fail "the StatefulSet runs kaasd without --http-listen"

# A ConfigMap volume: kaasd.conf -> ..data/kaasd.conf, ..data -> ..<stamp>.
mkdir -p "$S/etc/..2026_12_02" "$S/data"
cp "$DEPLOY_DIR/kaasd.conf" "$S/etc/..2026_12_02/kaasd.conf"
ln -s ..2026_12_02 "$S/etc/..data"
ln -s ..data/kaasd.conf "$S/etc/kaasd.conf"

hport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run=()
prev=
while IFS= read -r a; do
	case "$prev" in
	--data) a=$S/data ;;
	--config) a=$S/etc/kaasd.conf ;;
	--listen) a=127.0.0.1:0 ;;
	--advertise) prev=; continue ;;
	--http-listen) a=127.0.0.1:$hport ;;
	esac
	prev=$a
	[ "$a" = --advertise ] && continue
	run+=("$a")
done <<<"$args"
echo "kaasd ${run[*]}"
"$KAASD" "${run[@]}" 2>"$S/kaasd.log" &
pid=$!
kaas_on_exit "kill -9 $pid"

status() {
	python3 - "http://127.0.0.1:$hport$1" <<'PY'
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=2).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print(0)
PY
}
wait_200() {
	local path=$1 end=$((SECONDS + 30)) code
	while :; do
		code=$(status "$path")
		[ "$code" = 200 ] && return 0
		kill -0 $pid 2>/dev/null || { cat "$S/kaasd.log" >&2; kaas_fail "kaasd exited"; }
		[ $SECONDS -ge $end ] && { tail -20 "$S/kaasd.log" >&2; kaas_fail "$path answers $code, not 200, after 30 s"; }
		sleep 0.2
	done
}
wait_200 "$live_path"
echo "liveness $live_path: 200"
wait_200 "$ready_path"
echo "readiness $ready_path: 200"
code=$(status /no-such-path)
case "$code" in 200|0) kaas_fail "/no-such-path answers $code" ;; esac
kill -TERM $pid
for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && kaas_fail "kaasd did not stop within 10 s of SIGTERM (terminationGracePeriodSeconds must cover it)"
wait $pid || kaas_fail "kaasd exited $? on SIGTERM"
echo "probes: $live_path and $ready_path answer 200; SIGTERM stops kaasd cleanly"
