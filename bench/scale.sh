#!/usr/bin/env bash
# scripts/bench --scale [--out DIR] [--dir DIR] [--counts "100 1000 10000"]
# [--seconds S] — what a partition costs (issue 19).  For each partition
# count N, one kaasd on a fresh local volume:
#   create    CreateTopics of one topic with N partitions, until Metadata
#             shows all N led (seconds)
#   startup   after a clean stop (SIGTERM), kaasd's start until Metadata
#             shows all N partitions led again (seconds)
#   rss, threads, files   kaasd's VmRSS (MiB), /proc/PID/task and
#             /proc/PID/fd counts after the restart (idle) and the highest
#             seen while producing (sampled every 0.2 s)
#   metadata  Metadata for all topics (kcat -L, including its connect),
#             median of 5 (ms)
#   produce   librdkafka, 1 KiB, acks=-1, 8 producers, S seconds (default
#             10), no key: spread over all N partitions (msgs/s, MB/s, p99)
# Prints a table; writes scale.dat and, when gnuplot is installed,
# scale.png (each figure against N) into DIR (default bench-results/).
# KAAS_BUILD_DIR picks the build (default build/), e.g. an older one for a
# baseline; SCALE_KAASD_ARGS adds kaasd options (e.g. "--log-io-threads 4").
# Prints numbers; never fails on them (exit 1 only when a step breaks).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
out=$top/bench-results
voldir=
counts="100 1000 10000"
secs=10
while [ $# -gt 0 ]; do
	opt=$1
	shift
	if [ "$opt" = -h ] || [ "$opt" = --help ]; then
		sed -n '2,22p' "$0" | cut -c3-
		exit 0
	fi
	[ $# -gt 0 ] || { echo "bench/scale.sh: '$opt' needs a value (try --help)" >&2; exit 2; }
	case "$opt" in
	--out) out=$1 ;; --dir) voldir=$1 ;; --counts) counts=$1 ;; --seconds) secs=$1 ;;
	*) echo "bench/scale.sh: unknown option '$opt' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
command -v kcat >/dev/null || { echo "bench/scale.sh: needs kcat" >&2; exit 1; }
[ -f "$build/Makefile" ] || "$top/scripts/setup" >&2
make -C "$build" -s -j2 kaasd bench/kaas-kafka-bench tests/multibroker/mbclient >&2
kaasd=$build/kaasd
kafkab=$build/bench/kaas-kafka-bench
mbclient=$build/tests/multibroker/mbclient
mkdir -p "$out"
out=$(cd "$out" && pwd)
logs=$out/scale-logs
rm -rf "$logs"
mkdir -p "$logs"
if [ -z "$voldir" ]; then
	voldir=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-scale.XXXXXX")
else
	mkdir -p "$voldir"
	voldir=$(mktemp -d "$(cd "$voldir" && pwd)/kaas-scale.XXXXXX")
fi

KAASD_PID=
SAMPLER_PID=
cleanup() {
	[ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null
	[ -n "$KAASD_PID" ] && kill -9 "$KAASD_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$voldir"
}
trap cleanup EXIT

say() { printf '%s\n' "$*" >&2; }
now_ms() { date +%s%3N; }

# kaasd_start DATA LOG: sets KAASD_PID and BROKER.
kaasd_start() {
	# shellcheck disable=SC2086
	"$kaasd" --data "$1" --listen 127.0.0.1:0 --log-level info ${SCALE_KAASD_ARGS:-} \
		>/dev/null 2>"$2" &
	KAASD_PID=$!
	local tries=600
	BROKER=
	until [ -n "$BROKER" ]; do
		kill -0 "$KAASD_PID" 2>/dev/null || { tail "$2" >&2; say "kaasd exited at start"; exit 1; }
		tries=$((tries - 1))
		[ $tries -gt 0 ] || { say "kaasd did not start listening (see $2)"; exit 1; }
		sleep 0.05
		BROKER=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\),.*/\1/p' "$2" | head -n1)
	done
}
kaasd_stop() {
	kill -TERM "$KAASD_PID"
	wait "$KAASD_PID" || say "warning: kaasd exited with $? after SIGTERM"
	KAASD_PID=
}
# wait_led TOPIC N TIMEOUT_S: until Metadata shows N partitions with a leader.
wait_led() {
	local deadline=$(( $(date +%s) + $3 )) n
	while :; do
		n=$(kcat -L -b "$BROKER" -t "$1" -m 5 2>/dev/null | grep -c 'leader [0-9]' || true)
		[ "$n" -ge "$2" ] && return 0
		[ "$(date +%s)" -ge "$deadline" ] && { say "only $n of $2 partitions led after $3 s"; return 1; }
		sleep 0.1
	done
}
threads() { awk '/^Threads:/ { print $2 }' "/proc/$KAASD_PID/status"; }
files() { find "/proc/$KAASD_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$KAASD_PID/status"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
jget() { sed -n "s/.*\"$2\":\\([0-9.]*\\).*/\\1/p" <<<"$1"; }

dat=$out/scale.dat
echo "# partitions create_s startup_s rss_mb threads_idle threads_peak files_idle files_peak metadata_ms msgs_per_s MBps p99_ms" >"$dat"
for n in $counts; do
	say "== $n partitions"
	data=$voldir/v$n
	log=$logs/kaasd-$n.log
	kaasd_start "$data" "$log"
	t0=$(now_ms)
	"$mbclient" create "$BROKER" scale "$n" >"$logs/create-$n.log" 2>&1 ||
		{ say "CreateTopics of $n partitions failed (see $logs/create-$n.log)"; exit 1; }
	wait_led scale "$n" 900 || exit 1
	create_s=$(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
	say "   created and led in $create_s s"
	kaasd_stop
	t0=$(now_ms)
	kaasd_start "$data" "$log.restart"
	wait_led scale "$n" 900 || exit 1
	startup_s=$(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
	sleep 1
	rss=$(rss_mb) th_idle=$(threads) fd_idle=$(files)
	say "   restarted and serving in $startup_s s: RSS $rss MiB, $th_idle threads, $fd_idle files"
	md=$(for i in 1 2 3 4 5; do
		a=$(now_ms); kcat -L -b "$BROKER" -m 10 >/dev/null; echo $(( $(now_ms) - a ))
	done | median)
	say "   Metadata (all topics, kcat -L) median $md ms"
	samples=$logs/samples-$n
	( while :; do echo "$(threads) $(files)"; sleep 0.2; done ) >"$samples" 2>/dev/null &
	SAMPLER_PID=$!
	res=$("$kafkab" produce "$BROKER" scale 1024 8 "$secs" 100000000 2>"$logs/produce-$n.log") ||
		say "warning: produce run reported failures (see $logs/produce-$n.log)"
	kill "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null || true
	SAMPLER_PID=
	th_peak=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }' "$samples")
	fd_peak=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$samples")
	mps=$(jget "$res" msgs_per_s) mbps=$(jget "$res" MBps) p99=$(jget "$res" p99_ms)
	say "   produce: ${mps:-?} msgs/s, ${mbps:-?} MB/s, p99 ${p99:-?} ms; peak $th_peak threads, $fd_peak files"
	echo "$n $create_s $startup_s $rss $th_idle $th_peak $fd_idle $fd_peak $md ${mps:-0} ${mbps:-0} ${p99:-0}" >>"$dat"
	kaasd_stop
	rm -rf "$data"
done

printf '\n%-10s %9s %9s %7s %13s %13s %11s %10s %10s %8s\n' partitions create_s startup_s rss_MiB \
	threads_i/pk files_i/pk metadata_ms msgs/s MB/s p99_ms
grep -v '^#' "$dat" | while read -r n c s r ti tp fi fp md mps mb p99; do
	printf '%-10s %9s %9s %7s %13s %13s %11s %10s %10s %8s\n' "$n" "$c" "$s" "$r" "$ti/$tp" \
		"$fi/$fp" "$md" "$mps" "$mb" "$p99"
done
if command -v gnuplot >/dev/null; then
	gnuplot 2>/dev/null <<EOF || say "warning: gnuplot failed"
set terminal pngcairo size 1400,900
set output "$out/scale.png"
set multiplot layout 2,3 title "kaasd cost against the partition count"
set logscale x
set xlabel "partitions"
set key off
set title "startup to serving (s)"; plot "$dat" using 1:3 with linespoints
set title "RSS (MiB)"; plot "$dat" using 1:4 with linespoints
set title "threads (peak)"; plot "$dat" using 1:6 with linespoints
set title "open files (peak)"; plot "$dat" using 1:8 with linespoints
set title "Metadata (ms)"; plot "$dat" using 1:9 with linespoints
set title "produce 1 KiB acks=-1 x8 (msgs/s)"; plot "$dat" using 1:10 with linespoints
unset multiplot
EOF
	[ -f "$out/scale.png" ] && say "plot: $out/scale.png"
fi
say "table: $dat"
