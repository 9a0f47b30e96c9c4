#!/usr/bin/env bash
# bench/readahead.sh [MiB] [ROUNDS] — cold consume A/B of the fetch
# readahead hint (--fetch-readahead-bytes: default 4 MiB against 0, off):
# one topic of MiB (default 512) in 100 KiB messages on a local volume,
# then ROUNDS (default 3) rounds of: restart kaasd with the hint off, drop
# the page cache, consume it all; the same with the hint on.  Prints each
# consume's MB/s, the medians and on/off.  Needs root (drop_caches) and
# the build in build/ (KAAS_BUILD_DIR).  Numbers only; never fails on them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
mib=${1:-512}
rounds=${2:-3}
[ "$(id -u)" = 0 ] || { echo "bench/readahead.sh: needs root (drop_caches)" >&2; exit 77; }
make -C "$build" -s kaasd bench/kaas-kafka-bench >&2
kaasd=$build/kaasd
kafkab=$build/bench/kaas-kafka-bench
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-readahead.XXXXXX")
pid=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
start() { # extra kaasd options...; sets pid, broker
	local log=$dir/kaasd.log port= i
	: >"$log"
	"$kaasd" --data "$dir/data" --listen 127.0.0.1:0 --log-level info "$@" 2>"$log" &
	pid=$!
	for i in $(seq 1 300); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log" | head -n1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$log" >&2; echo "kaasd did not start" >&2; exit 1; }
	broker=127.0.0.1:$port
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=; }
jget() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

msgs=$((mib * 1024 / 100))
start
"$kafkab" produce "$broker" ra 102400 1 100000 "$msgs" >/dev/null
stop
declare -A got=([off]="" [on]="")
for r in $(seq 1 "$rounds"); do
	for mode in off on; do
		if [ $mode = off ]; then start --fetch-readahead-bytes 0; else start; fi
		sync
		echo 3 >/proc/sys/vm/drop_caches
		j=$("$kafkab" consume "$broker" ra "$msgs") || echo "warning: consume came up short" >&2
		stop
		m=$(jget "$j" MBps)
		got[$mode]+="$m "
		printf 'round %d  readahead %-3s  cold consume %8s MB/s\n' "$r" $mode "$m"
	done
done
off=$(tr ' ' '\n' <<<"${got[off]}" | grep . | median)
on=$(tr ' ' '\n' <<<"${got[on]}" | grep . | median)
printf 'median cold consume of %d MiB: off %s MB/s, on %s MB/s, on/off %s (load average %s)\n' \
	"$mib" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
