#!/usr/bin/env bash
# bench/metrics.sh [--secs N] [--rounds N] [--size B] [--producers N] [--dir DIR]
# (scripts/bench --metrics ...) — the cost of kaasd's metrics (issue 18):
# the same librdkafka produce load (acks=-1) against kaasd with metrics off
# (no --http-listen) and on (--http-listen, every volume op metered, and
# /metrics scraped every second for the whole run), in rounds of one run
# each way (off first in odd rounds, on first in even ones) in the same
# run on the same volume, so that drift in the machine's load favours
# neither side.  Prints msgs/s, MB/s and kaasd's CPU per message both
# ways, the throughput ratio on/off, and one JSON line.  Never fails on the numbers.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
secs=8
rounds=3
size=1024
producers=4
voldir=
while [ $# -gt 0 ]; do
	case "$1" in
	--secs) secs=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--size) size=$2; shift ;;
	--producers) producers=$2; shift ;;
	--dir) voldir=$2; shift ;;
	-h | --help) sed -n '2,10p' "$0" | cut -c3-; exit 0 ;;
	*) echo "bench/metrics.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ -f "$build/Makefile" ] || "$top/scripts/setup" >&2
make -C "$build" -s -j2 kaasd bench/kaas-kafka-bench >&2
kaasd=$build/kaasd
kafkab=$build/bench/kaas-kafka-bench
command -v jq >/dev/null || { echo "bench/metrics.sh: needs jq" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench/metrics.sh: needs curl" >&2; exit 1; }
own_dir=0
if [ -z "$voldir" ]; then
	voldir=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-metrics-bench.XXXXXX")
	own_dir=1
fi
pids=()
cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p" 2>/dev/null || true; done
	[ $own_dir = 1 ] && rm -rf "$voldir"
}
trap cleanup EXIT

# log_value LOG SED: the first value SED prints from kaasd's LOG, waited
# for (10 s at most; exits if none).
log_value() {
	local v= i
	for i in $(seq 1 100); do
		v=$(sed -n "$2" "$1" | head -n1)
		[ -n "$v" ] && { echo "$v"; return 0; }
		sleep 0.1
	done
	cat "$1" >&2
	echo "bench/metrics.sh: kaasd did not start" >&2
	exit 1
}

# run MODE ROUND: one produce run against a fresh kaasd; prints msgs/s MB/s
# and kaasd's CPU microseconds per message
run() {
	local mode=$1 round=$2 data=$voldir/$1-$2 log=$voldir/$1-$2.log http=() port hport scraper=
	[ "$mode" = on ] && http=(--http-listen 127.0.0.1:0)
	"$kaasd" --data "$data" --listen 127.0.0.1:0 "${http[@]}" 2>"$log" &
	local pid=$!
	pids+=("$pid")
	port=$(log_value "$log" 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p')
	if [ "$mode" = on ]; then
		hport=$(log_value "$log" 's/.*http: .* on [0-9.]*:\([0-9][0-9]*\)$/\1/p')
		( while :; do curl -sf -m 2 -o /dev/null "http://127.0.0.1:$hport/metrics"; sleep 1; done ) &
		scraper=$!
		pids+=("$scraper")
	fi
	local j c0 c1
	c0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	j=$("$kafkab" produce "127.0.0.1:$port" "m-$mode-$round" "$size" "$producers" "$secs" 1000000000000) ||
		echo "warning: produce $mode/$round reported failures" >&2
	c1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	[ -n "$scraper" ] && kill "$scraper" 2>/dev/null && wait "$scraper" 2>/dev/null || true
	kill -TERM "$pid"
	wait "$pid" || echo "warning: kaasd ($mode) exited with $?" >&2
	rm -rf "$data"
	# kaasd's CPU per message (user + system): far less sensitive to a
	# loaded machine than the throughput
	local us
	us=$(awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v m="$(jq -r .msgs <<<"$j")" \
		'BEGIN { printf "%.3f", (m > 0 ? c / t * 1e6 / m : 0) }')
	echo "$(jq -r .msgs_per_s <<<"$j") $(jq -r .MBps <<<"$j") $us"
}

off_msgs=() on_msgs=() off_mb=() on_mb=() off_us=() on_us=()
for r in $(seq 1 "$rounds"); do
	order="off on"
	[ $((r % 2)) = 0 ] && order="on off" # neither side always goes first
	for mode in $order; do
		read -r m mb us < <(run "$mode" "$r")
		printf 'round %d metrics %-3s %10.0f msgs/s %8.2f MB/s %8.2f us CPU/msg\n' "$r" "$mode" "$m" "$mb" "$us"
		if [ "$mode" = off ]; then
			off_msgs+=("$m"); off_mb+=("$mb"); off_us+=("$us")
		else
			on_msgs+=("$m"); on_mb+=("$mb"); on_us+=("$us")
		fi
	done
done
mean() { printf '%s\n' "$@" | awk '{ s += $1; n++ } END { printf "%.2f", n ? s / n : 0 }'; }
om=$(mean "${off_msgs[@]}")
nm=$(mean "${on_msgs[@]}")
ou=$(mean "${off_us[@]}")
nu=$(mean "${on_us[@]}")
ratio=$(awk -v a="$nm" -v b="$om" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
printf 'metrics off: %.0f msgs/s (%.2f MB/s), kaasd %.2f us CPU/msg\nmetrics on:  %.0f msgs/s (%.2f MB/s), kaasd %.2f us CPU/msg\non/off: %s (%d B x %d producers, acks=-1, %d rounds of %d s each way)\n' \
	"$om" "$(mean "${off_mb[@]}")" "$ou" "$nm" "$(mean "${on_mb[@]}")" "$nu" "$ratio" "$size" "$producers" "$rounds" "$secs"
echo "{\"bench\":\"metrics\",\"size\":$size,\"producers\":$producers,\"secs\":$secs,\"rounds\":$rounds,\"off_msgs_per_s\":$om,\"on_msgs_per_s\":$nm,\"ratio\":$ratio,\"off_cpu_us_per_msg\":$ou,\"on_cpu_us_per_msg\":$nu}"
