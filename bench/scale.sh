#!/usr/bin/env bash
# scripts/bench --scale [--out DIR] [--dir DIR] [--counts "100 1000 10000"]
# [--seconds S] — what a partition costs (issue 19).  For each partition
# count N, one kaasd on a fresh local volume:
#   create    CreateTopics of one topic with N partitions, until Metadata
#             shows all N led (seconds)
#   led       after a clean stop (SIGTERM), kaasd's start until Metadata
#             shows all N partitions led again (seconds; earlier runs
#             called it "startup").  Metadata answers from the assignment,
#             so this ends before the logs are open: meanwhile Produce
#             gets NOT_LEADER_OR_FOLLOWER
#   serving   the same start until Metadata shows all N led (led) and all
#             N partition logs are open, whichever comes last: the
#             /metrics gauges (kaasd runs with --http-listen) show
#             kaas_partitions_led = N with none recovering or offline;
#             the time is that of kaasd's last "topic scale partition K:
#             leading with epoch" log line (ms; the gauges are re-rendered
#             once a second), or the poll that saw the gauges when the
#             log has fewer than N such lines (seconds)
#   rss, threads, files   kaasd's VmRSS (MiB), /proc/PID/task and
#             /proc/PID/fd counts 1 s after serving (idle) and the highest
#             seen from the restart through the produce run (sampled every
#             0.2 s: the start's parallel opens included); they include the
#             HTTP endpoint's thread and sockets
#   metadata  Metadata for all topics (kcat -L, including its connect),
#             median of 5 (ms)
#   produce   librdkafka, 1 KiB, acks=-1, 8 producers, S seconds (default
#             10), no key: spread over all N partitions (msgs/s, MB/s,
#             p99); starts only once every log is open (serving), so no
#             partition is still opening while it is measured
# Prints a table; writes scale.dat and, when gnuplot is installed,
# scale.png (each figure against N) into DIR (default bench-results/).
# KAAS_BUILD_DIR picks the build (default build/), e.g. an older one for a
# baseline (it must serve /metrics); SCALE_KAASD_ARGS adds kaasd options
# (e.g. "--log-io-threads 4").
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
		sed -n '2,37p' "$0" | cut -c3-
		exit 0
	fi
	[ $# -gt 0 ] || { echo "bench/scale.sh: '$opt' needs a value (try --help)" >&2; exit 2; }
	case "$opt" in
	--out) out=$1 ;; --dir) voldir=$1 ;; --counts) counts=$1 ;; --seconds) secs=$1 ;;
	*) echo "bench/scale.sh: unknown option '$opt' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
for c in kcat curl; do
	command -v $c >/dev/null || { echo "bench/scale.sh: needs $c" >&2; exit 1; }
done
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

# kaasd_start DATA LOG: sets KAASD_PID, BROKER and HTTP (the /metrics
# endpoint; no per-partition series: only the partition gauges are read).
kaasd_start() {
	# shellcheck disable=SC2086
	"$kaasd" --data "$1" --listen 127.0.0.1:0 --log-level info \
		--http-listen 127.0.0.1:0 --metrics-per-partition false ${SCALE_KAASD_ARGS:-} \
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
	HTTP=$(sed -n 's/.*http: .* on \(127\.0\.0\.1:[0-9]*\)$/\1/p' "$2" | head -n1)
	[ -n "$HTTP" ] || { say "kaasd logged no /metrics address (see $2)"; exit 1; }
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
# wait_open TOPIC N TIMEOUT_S LOG: until /metrics shows N partition logs
# open and writable (kaas_partitions_led) with none recovering or offline
# (or, when /metrics does not answer, LOG shows N opened and none failed);
# sets OPEN_MS to when the last of TOPIC's N logs opened: the timestamp of
# LOG's last "leading with epoch" line for TOPIC when it has N of them (the
# gauges are re-rendered once a second), else the poll that saw the gauges.
wait_open() {
	local deadline=$(( $(date +%s) + $3 )) m led rec off lines
	while :; do
		m=$(curl -s -m 5 "http://$HTTP/metrics" || true)
		led=$(awk '$1 == "kaas_partitions_led" { print $2 }' <<<"$m")
		rec=$(awk '$1 == "kaas_partitions_recovering" { print $2 }' <<<"$m")
		off=$(awk '$1 == "kaas_partitions_offline" { print $2 }' <<<"$m")
		[ "${led:-0}" -ge "$2" ] && [ "${rec:-1}" = 0 ] && [ "${off:-1}" = 0 ] && break
		# No answer (a kaasd from before the endpoint polled with epoll
		# dropped connections whose descriptor was >= FD_SETSIZE, which
		# its ~1,000 open segments reach at 10,000 partitions): then the
		# log alone: N lines, no failed open.
		if [ -z "$m" ] && [ "$(grep -c " topic $1 partition [0-9]*: leading with epoch" "$4")" -ge "$2" ] &&
			! grep -q " topic $1 partition [0-9]*: open failed" "$4"; then
			say "   (/metrics did not answer: all $2 logs open by kaasd's log alone)"
			break
		fi
		[ "$(date +%s)" -ge "$deadline" ] && {
			say "only ${led:-?} of $2 logs open (${rec:-?} recovering, ${off:-?} offline) after $3 s"
			return 1
		}
		sleep 0.1
	done
	OPEN_MS=$(now_ms)
	lines=$(grep " topic $1 partition [0-9]*: leading with epoch" "$4" || true)
	if [ "$(grep -c . <<<"$lines")" -ge "$2" ]; then
		OPEN_MS=$(date -u -d "$(cut -d' ' -f1 <<<"$lines" | sort | tail -n1)" +%s%3N)
	else
		say "   (fewer than $2 'leading with epoch' lines: serving time from the gauges, +-1 s)"
	fi
}
threads() { awk '/^Threads:/ { print $2 }' "/proc/$KAASD_PID/status"; }
files() { find "/proc/$KAASD_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$KAASD_PID/status"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
jget() { sed -n "s/.*\"$2\":\\([0-9.]*\\).*/\\1/p" <<<"$1"; }

dat=$out/scale.dat
echo "# partitions create_s led_s serving_s rss_mb threads_idle threads_peak files_idle files_peak metadata_ms msgs_per_s MBps p99_ms" >"$dat"
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
	# threads and files sampled from the start on: the opens run on
	# short-lived helpers, so the startup can be the peak
	samples=$logs/samples-$n
	( while :; do echo "$(threads) $(files)"; sleep 0.2; done ) >"$samples" 2>/dev/null &
	SAMPLER_PID=$!
	wait_led scale "$n" 900 || exit 1
	led_s=$(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
	say "   restarted: Metadata shows all led after $led_s s"
	wait_open scale "$n" 900 "$log.restart" || exit 1
	# serving: Metadata shows all led and every log is open (whichever
	# comes last: with few partitions the logs open before the listener)
	serving_s=$(awk -v a="$t0" -v b="$OPEN_MS" -v l="$led_s" \
		'BEGIN { s = (b - a) / 1000; printf "%.2f", (s > l ? s : l) }')
	sleep 1
	rss=$(rss_mb) th_idle=$(threads) fd_idle=$(files)
	say "   all $n logs open (serving) after $serving_s s: RSS $rss MiB, $th_idle threads, $fd_idle files"
	md=$(for i in 1 2 3 4 5; do
		a=$(now_ms); kcat -L -b "$BROKER" -m 10 >/dev/null; echo $(( $(now_ms) - a ))
	done | median)
	say "   Metadata (all topics, kcat -L) median $md ms"
	res=$("$kafkab" produce "$BROKER" scale 1024 8 "$secs" 100000000 2>"$logs/produce-$n.log") ||
		say "warning: produce run reported failures (see $logs/produce-$n.log)"
	kill "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null || true
	SAMPLER_PID=
	th_peak=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }' "$samples")
	fd_peak=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$samples")
	mps=$(jget "$res" msgs_per_s) mbps=$(jget "$res" MBps) p99=$(jget "$res" p99_ms)
	say "   produce: ${mps:-?} msgs/s, ${mbps:-?} MB/s, p99 ${p99:-?} ms; peak since the restart $th_peak threads, $fd_peak files"
	echo "$n $create_s $led_s $serving_s $rss $th_idle $th_peak $fd_idle $fd_peak $md ${mps:-0} ${mbps:-0} ${p99:-0}" >>"$dat"
	kaasd_stop
	rm -rf "$data"
done

printf '\n%-10s %9s %9s %9s %7s %13s %13s %11s %10s %10s %8s\n' partitions create_s led_s \
	serving_s rss_MiB threads_i/pk files_i/pk metadata_ms msgs/s MB/s p99_ms
grep -v '^#' "$dat" | while read -r n c s sv r ti tp fi fp md mps mb p99; do
	printf '%-10s %9s %9s %9s %7s %13s %13s %11s %10s %10s %8s\n' "$n" "$c" "$s" "$sv" "$r" "$ti/$tp" \
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
set title "after restart (s)"; set key top left
plot "$dat" using 1:3 with linespoints title "Metadata shows all led", \
	"$dat" using 1:4 with linespoints title "all logs open (serving)"
set key off
set title "RSS (MiB)"; plot "$dat" using 1:5 with linespoints
set title "threads (peak)"; plot "$dat" using 1:7 with linespoints
set title "open files (peak)"; plot "$dat" using 1:9 with linespoints
set title "Metadata (ms)"; plot "$dat" using 1:10 with linespoints
set title "produce 1 KiB acks=-1 x8 (msgs/s)"; plot "$dat" using 1:11 with linespoints
unset multiplot
EOF
	[ -f "$out/scale.png" ] && say "plot: $out/scale.png"
fi
say "table: $dat"
