#!/usr/bin/env bash
# bench/metrics.sh [--rounds N] [--secs N] [--size B] [--producers N] [--dir DIR]
# bench/metrics.sh --instructions [--rounds N] [--msgs N] [--batch N] [--size B] [--dir DIR]
# (scripts/bench --metrics ...) — the cost of kaasd's metrics (issue 18).
#
# Throughput (the default): the same librdkafka produce load (acks=-1)
# against kaasd with metrics off (no --http-listen) and on (--http-listen,
# every volume op metered, /metrics scraped every second), one after the
# other, each run a fresh kaasd on a fresh directory.  Many short rounds
# (default 40 of 4 s each way: rounds of 2 s were too noisy to resolve 3%)
# of one run each way, the order swapped every round (off-on, on-off, ...:
# ABBA, so that a trend in the machine's load favours neither side).  Each
# round gives one ratio on/off; the verdict is on their (geometric) mean
# and its 95% confidence interval (Student's t over the rounds' log
# ratios): "within 3%" only when the interval's lower bound is >= 0.97,
# else "not shown".  kaasd's CPU time per message is compared the same
# way.
#
# Instructions (--instructions): the produce workload with deterministic
# requests (one producer, one request of --batch messages in flight at a
# time) against kaasd under valgrind's callgrind, which counts every
# instruction kaasd executes, in every thread, between a zero and a dump
# around the run (the topic is made before): instructions per message off
# and on, a figure that a loaded machine does not move; then the same
# wall time idle, subtracted (per-second work weighs ~50x more per message
# under callgrind than at full speed).  Also the instructions of the
# metrics code itself and of one /metrics scrape.
#
# Prints every round, the summary and one JSON line; never fails on the
# numbers (exit 1 only when kaasd or the client does not run).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
what=throughput
secs=4
rounds=
size=1024
producers=4
msgs=10000
batch=100
voldir=
while [ $# -gt 0 ]; do
	case "$1" in
	--instructions) what=instructions ;;
	--secs) secs=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--size) size=$2; shift ;;
	--producers) producers=$2; shift ;;
	--msgs) msgs=$2; shift ;;
	--batch) batch=$2; shift ;;
	--dir) voldir=$2; shift ;;
	-h | --help) sed -n '2,26p' "$0" | cut -c3-; exit 0 ;;
	*) echo "bench/metrics.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "$rounds" ]; then
	[ $what = throughput ] && rounds=40 || rounds=4
fi
[ "$rounds" -ge 2 ] || { echo "bench/metrics.sh: --rounds must be >= 2" >&2; exit 2; }
[ $((rounds % 2)) = 0 ] || { rounds=$((rounds + 1)); echo "bench/metrics.sh: $rounds rounds (an even number: ABBA)" >&2; }
[ $((msgs % batch)) = 0 ] || { echo "bench/metrics.sh: --msgs must be a multiple of --batch" >&2; exit 2; }
[ -f "$build/Makefile" ] || "$top/scripts/setup" >&2
make -C "$build" -s -j2 kaasd bench/kaas-kafka-bench >&2
kaasd=$build/kaasd
kafkab=$build/bench/kaas-kafka-bench
for c in jq curl; do
	command -v $c >/dev/null || { echo "bench/metrics.sh: needs $c" >&2; exit 1; }
done
if [ $what = instructions ]; then
	for c in valgrind callgrind_control; do
		command -v $c >/dev/null || { echo "bench/metrics.sh: needs $c (scripts/setup installs valgrind)" >&2; exit 1; }
	done
fi
own_dir=0
if [ -z "$voldir" ]; then
	voldir=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-metrics-bench.XXXXXX")
	own_dir=1
fi
# Every process started, one pid a line (runs happen in subshells, so a
# file and not an array): killed on exit, whatever happened.
pidfile=$voldir/pids
: >"$pidfile"
started() { echo "$1" >>"$pidfile"; }
cleanup() {
	local p
	while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$pidfile"
	[ $own_dir = 1 ] && rm -rf "$voldir"
	return 0
}
trap cleanup EXIT

# log_value LOG SED SECS: the first value SED prints from kaasd's LOG,
# waited for (SECS at most; exits if none).
log_value() {
	local v= i
	for i in $(seq 1 $(($3 * 10))); do
		v=$(sed -n "$2" "$1" | sed -n 1p)
		[ -n "$v" ] && { echo "$v"; return 0; }
		sleep 0.1
	done
	cat "$1" >&2
	echo "bench/metrics.sh: kaasd did not start" >&2
	exit 1
}
port_of() { log_value "$1" 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$2"; }
hport_of() { log_value "$1" 's/.*http: .* on [0-9.]*:\([0-9][0-9]*\)$/\1/p' "$2"; }

# gstats: reads one ratio per line; prints "mean lo hi sd n" of their
# geometric mean: stats over the logarithms, mapped back (the arithmetic
# mean of noisy ratios is biased upwards, and on/off and off/on would
# disagree; sd is that of the logarithms).
gstats() {
	awk '$1 > 0 { print log($1) }' | stats |
		awk '{ printf "%.4f %.4f %.4f %.4f %d\n", exp($1), exp($2), exp($3), $4, $5 }'
}

# stats: reads one value per line; prints "mean lo hi sd n", the 95%
# confidence interval of the mean by Student's t (n-1 degrees of freedom).
stats() {
	awk '{ x[n++] = $1; s += $1 }
	END {
		if (n == 0) { print "0 0 0 0 0"; exit }
		m = s / n
		for (i = 0; i < n; i++) ss += (x[i] - m) ^ 2
		sd = n > 1 ? sqrt(ss / (n - 1)) : 0
		split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
		      "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 " \
		      "2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", t975, " ")
		df = n - 1
		t = df < 1 ? 0 : (df <= 30 ? t975[df] : 1.96 + 2.4 / df)
		h = n > 1 ? t * sd / sqrt(n) : 0
		printf "%.4f %.4f %.4f %.4f %d\n", m, m - h, m + h, sd, n
	}'
}

# ------------------------------------------------------------ throughput

# run MODE ROUND: one produce run against a fresh kaasd on a fresh
# directory; prints msgs/s, MB/s and kaasd's CPU microseconds per message
run() {
	local mode=$1 round=$2 data=$voldir/$1-$2 log=$voldir/$1-$2.log http=() port hport scraper=
	[ "$mode" = on ] && http=(--http-listen 127.0.0.1:0)
	"$kaasd" --data "$data" --listen 127.0.0.1:0 "${http[@]}" >/dev/null 2>"$log" &
	local pid=$!
	started "$pid"
	port=$(port_of "$log" 10)
	if [ "$mode" = on ]; then
		hport=$(hport_of "$log" 10)
		# one scraper process, one connection, a scrape a second (a curl
		# started every second would cost the 2 cores more than kaasd does)
		curl -sf -m 3600 --rate 1/s "http://127.0.0.1:$hport/metrics?n=[1-100000]" >/dev/null &
		scraper=$!
		started "$scraper"
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
	# kaasd's CPU per message (user + system)
	local us
	us=$(awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v m="$(jq -r .msgs <<<"$j")" \
		'BEGIN { printf "%.3f", (m > 0 ? c / t * 1e6 / m : 0) }')
	echo "$(jq -r .msgs_per_s <<<"$j") $(jq -r .MBps <<<"$j") $us"
}

throughput() {
	local r mode m mb us off_m= off_us= ratios=() cpu_ratios=() all_off=() all_on=() all_ou=() all_nu=()
	for r in $(seq 1 "$rounds"); do
		local order="off on"
		[ $((r % 2)) = 0 ] && order="on off" # ABBA: neither side always goes first
		local -A got=()
		for mode in $order; do
			read -r m mb us < <(run "$mode" "$r")
			[ -n "$us" ] || { echo "bench/metrics.sh: the $mode run of round $r failed" >&2; exit 1; }
			printf 'round %2d metrics %-3s %10.0f msgs/s %8.2f MB/s %8.2f us CPU/msg\n' "$r" "$mode" "$m" "$mb" "$us"
			got[$mode]="$m $us"
		done
		read -r off_m off_us <<<"${got[off]}"
		read -r m us <<<"${got[on]}"
		all_off+=("$off_m"); all_on+=("$m"); all_ou+=("$off_us"); all_nu+=("$us")
		ratios+=("$(awk -v a="$m" -v b="$off_m" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')")
		cpu_ratios+=("$(awk -v a="$us" -v b="$off_us" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')")
		echo "round $r: throughput on/off ${ratios[-1]}, CPU/msg on/off ${cpu_ratios[-1]}"
	done
	local om nm ou nu rm rlo rhi rsd n cm clo chi csd verdict
	read -r om _ <<<"$(printf '%s\n' "${all_off[@]}" | stats)"
	read -r nm _ <<<"$(printf '%s\n' "${all_on[@]}" | stats)"
	read -r ou _ <<<"$(printf '%s\n' "${all_ou[@]}" | stats)"
	read -r nu _ <<<"$(printf '%s\n' "${all_nu[@]}" | stats)"
	read -r rm rlo rhi rsd n <<<"$(printf '%s\n' "${ratios[@]}" | gstats)"
	read -r cm clo chi csd _ <<<"$(printf '%s\n' "${cpu_ratios[@]}" | gstats)"
	verdict="not shown"
	awk -v lo="$rlo" 'BEGIN { exit !(lo >= 0.97) }' && verdict="within 3%"
	printf 'metrics off: %.0f msgs/s, kaasd %.2f us CPU/msg (means of %d runs)\n' "$om" "$ou" "$n"
	printf 'metrics on:  %.0f msgs/s, kaasd %.2f us CPU/msg\n' "$nm" "$nu"
	printf 'throughput on/off: geometric mean of %d round ratios %.4f, 95%% CI [%.4f, %.4f] (sd of log %.4f)\n' "$n" "$rm" "$rlo" "$rhi" "$rsd"
	printf 'CPU/msg on/off:    geometric mean %.4f, 95%% CI [%.4f, %.4f] (sd of log %.4f)\n' "$cm" "$clo" "$chi" "$csd"
	printf 'verdict: %s (lower bound of the throughput ratio %s 0.97; %d B x %d producers, acks=-1, %d rounds of %d s each way, ABBA)\n' \
		"$verdict" "$(awk -v lo="$rlo" 'BEGIN { print (lo >= 0.97 ? ">=" : "<") }')" "$size" "$producers" "$n" "$secs"
	echo "{\"bench\":\"metrics\",\"size\":$size,\"producers\":$producers,\"secs\":$secs,\"rounds\":$n,\"off_msgs_per_s\":$om,\"on_msgs_per_s\":$nm,\"ratio\":$rm,\"ratio_ci95\":[$rlo,$rhi],\"off_cpu_us_per_msg\":$ou,\"on_cpu_us_per_msg\":$nu,\"cpu_ratio\":$cm,\"cpu_ratio_ci95\":[$clo,$chi],\"verdict\":\"$verdict\"}"
}

# ---------------------------------------------------------- instructions

# cg_metrics FILE: the instructions of a callgrind dump spent in the
# metrics code: the self cost of every function of the six files that
# make the metrics, plus the clock reads under kaas_metrics_now_ns.  (The
# metering wrapper's second pass through the substrate's dispatch layer is
# not in it: it shows only in the total.)
cg_metrics() {
	local self incl
	self=$(callgrind_annotate --auto=no --inclusive=no --threshold=100 "$1" |
		awk '/src\/(util\/metrics|substrate\/metered|kafka\/req_metrics|server\/http_metrics|log\/log_metrics|broker\/agent_metrics)\.c:/ {
			v = $1; gsub(",", "", v); s += v; if ($0 ~ /:kaas_metrics_now_ns /) now = v }
			END { printf "%d %d\n", s, now }')
	incl=$(callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$1" |
		awk '/:kaas_metrics_now_ns / && !v { v = $1; gsub(",", "", v) } END { print v + 0 }')
	awk -v s="${self% *}" -v n="${self#* }" -v i="${incl:-0}" 'BEGIN { printf "%d", s - n + (i > n ? i : n) }'
}

# cg_scrape FILE: the instructions of the endpoint's request handler (the
# rendering of /metrics) in a dump.
cg_scrape() {
	callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$1" |
		awk '/src\/server\/http\.c:on_request / && !v { v = $1; gsub(",", "", v) } END { print v + 0 }'
}

# cg_dump PID OUT: dump callgrind's counters of kaasd PID (since the last
# zero or dump); prints the instructions counted and the dump's file.
cg_dump() {
	local before after f
	before=$(ls "$2".* 2>/dev/null | wc -l)
	callgrind_control -d "$1" >/dev/null 2>&1
	for _ in $(seq 1 300); do
		after=$(ls "$2".* 2>/dev/null | wc -l)
		[ "$after" -gt "$before" ] && break
		sleep 0.1
	done
	f=$(ls -t "$2".* | sed -n 1p)
	sleep 0.5 # the dump is written in one go; let it finish
	echo "$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f") $f"
}

# irun MODE ROUND: kaasd under callgrind; prints its instructions per
# message for MSGS messages in requests of BATCH, and (on) per scrape.
irun() {
	local mode=$1 round=$2 data=$voldir/i-$1-$2 log=$voldir/i-$1-$2.log out=$voldir/cg-$1-$2 http=()
	[ "$mode" = on ] && http=(--http-listen 127.0.0.1:0)
	valgrind --tool=callgrind --callgrind-out-file="$out" --log-file="$voldir/vg-$mode-$round.log" \
		"$kaasd" --data "$data" --listen 127.0.0.1:0 "${http[@]}" >/dev/null 2>"$log" &
	local pid=$! port hport=
	started "$pid"
	port=$(port_of "$log" 120)
	[ "$mode" = on ] && hport=$(hport_of "$log" 120)
	local conf="batch.num.messages=$batch,linger.ms=1000,max.in.flight.requests.per.connection=1"
	# the topic and its log first (outside the count)
	KAAS_BENCH_KAFKA_CONF=$conf "$kafkab" produce "127.0.0.1:$port" "i-$mode-$round" "$size" 1 600 "$batch" >/dev/null ||
		{ echo "bench/metrics.sh: warm-up produce failed" >&2; exit 1; }
	callgrind_control -z "$pid" >/dev/null 2>&1
	local t0 t1
	t0=$(date +%s.%N)
	KAAS_BENCH_KAFKA_CONF=$conf "$kafkab" produce "127.0.0.1:$port" "i-$mode-$round" "$size" 1 600 "$msgs" >/dev/null ||
		{ echo "bench/metrics.sh: produce failed" >&2; exit 1; }
	t1=$(date +%s.%N)
	local ir f scrape=0 sf idle idf
	read -r ir f <<<"$(cg_dump "$pid" "$out")"
	# The same wall time idle: what kaasd does per second whatever the
	# load (the agent's rounds, timers), subtracted from the run.
	callgrind_control -z "$pid" >/dev/null 2>&1
	sleep "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	read -r idle idf <<<"$(cg_dump "$pid" "$out")"
	if [ "$mode" = on ]; then
		curl -sf -m 60 -o /dev/null "http://127.0.0.1:$hport/metrics"
		read -r _ sf <<<"$(cg_dump "$pid" "$out")"
		scrape=$(cg_scrape "$sf")
	fi
	kill -TERM "$pid"
	wait "$pid" || echo "warning: kaasd ($mode) exited with $?" >&2
	rm -rf "$data"
	echo "$ir $idle ${scrape:-0} $(cg_metrics "$f") $(cg_metrics "$idf")"
}

instructions() {
	local r mode ir idle scrape mir midle off_per=() on_per=() scrapes=() mpers=() off_net=() on_net=() mnets=()
	for r in $(seq 1 "$rounds"); do
		local order="off on"
		[ $((r % 2)) = 0 ] && order="on off"
		for mode in $order; do
			read -r ir idle scrape mir midle < <(irun "$mode" "$r")
			[ -n "$ir" ] || { echo "bench/metrics.sh: the callgrind run failed" >&2; exit 1; }
			local per
			per=$(awk -v i="$ir" -v m="$msgs" 'BEGIN { printf "%.1f", i / m }')
			local mper net mnet
			mper=$(awk -v i="$mir" -v m="$msgs" 'BEGIN { printf "%.2f", i / m }')
			net=$(awk -v i="$ir" -v d="$idle" -v m="$msgs" 'BEGIN { printf "%.1f", (i - d) / m }')
			mnet=$(awk -v i="$mir" -v d="$midle" -v m="$msgs" 'BEGIN { printf "%.2f", (i - d) / m }')
			printf 'round %d metrics %-3s %12d instructions, %12d idle as long: per message %7.1f (%.2f in the metrics code), less idle %7.1f (%.2f)\n' \
				"$r" "$mode" "$ir" "$idle" "$per" "$mper" "$net" "$mnet"
			if [ "$mode" = off ]; then
				off_per+=("$per")
				off_net+=("$net")
			else
				on_per+=("$per")
				on_net+=("$net")
				scrapes+=("$scrape")
				mpers+=("$mper")
				mnets+=("$mnet")
			fi
		done
	done
	local om nm sc omin omax nmin nmax ratio mm onet nnet mn nratio
	read -r om _ <<<"$(printf '%s\n' "${off_per[@]}" | stats)"
	read -r nm _ <<<"$(printf '%s\n' "${on_per[@]}" | stats)"
	read -r sc _ <<<"$(printf '%s\n' "${scrapes[@]}" | stats)"
	read -r mm _ <<<"$(printf '%s\n' "${mpers[@]}" | stats)"
	read -r mn _ <<<"$(printf '%s\n' "${mnets[@]}" | stats)"
	read -r onet _ <<<"$(printf '%s\n' "${off_net[@]}" | stats)"
	read -r nnet _ <<<"$(printf '%s\n' "${on_net[@]}" | stats)"
	nratio=$(awk -v a="$nnet" -v b="$onet" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
	omin=$(printf '%s\n' "${off_per[@]}" | sort -g | sed -n 1p); omax=$(printf '%s\n' "${off_per[@]}" | sort -g | tail -n1)
	nmin=$(printf '%s\n' "${on_per[@]}" | sort -g | sed -n 1p); nmax=$(printf '%s\n' "${on_per[@]}" | sort -g | tail -n1)
	ratio=$(awk -v a="$nm" -v b="$om" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
	printf 'metrics off: %.1f instructions/msg (runs %s .. %s)\n' "$om" "$omin" "$omax"
	printf 'metrics on:  %.1f instructions/msg (runs %s .. %s); one /metrics scrape %.0f instructions\n' "$nm" "$nmin" "$nmax" "$sc"
	printf 'metrics code (on): %.2f instructions/msg = %.2f%% of kaasd'"'"'s instructions with metrics off\n' "$mm" \
		"$(awk -v a="$mm" -v b="$om" 'BEGIN { printf "%.3f", (b > 0 ? 100 * a / b : 0) }')"
	printf 'instructions on/off: %s (+%.1f per message, +%.0f per request; %d msgs of %d B in requests of %d, %d runs each way)\n' \
		"$ratio" "$(awk -v a="$nm" -v b="$om" 'BEGIN { print a - b }')" \
		"$(awk -v a="$nm" -v b="$om" -v k="$batch" 'BEGIN { print (a - b) * k }')" "$msgs" "$size" "$batch" "$rounds"
	printf 'less the same time idle: off %.1f, on %.1f instructions/msg, on/off %s; metrics code %.2f/msg (%.3f%%)\n' \
		"$onet" "$nnet" "$nratio" "$mn" "$(awk -v a="$mn" -v b="$onet" 'BEGIN { printf "%.3f", (b > 0 ? 100 * a / b : 0) }')"
	echo "{\"bench\":\"metrics-instructions\",\"size\":$size,\"msgs\":$msgs,\"batch\":$batch,\"rounds\":$rounds,\"off_ir_per_msg\":$om,\"on_ir_per_msg\":$nm,\"ratio\":$ratio,\"metrics_code_ir_per_msg\":$mm,\"ir_per_scrape\":$sc,\"off_net_ir_per_msg\":$onet,\"on_net_ir_per_msg\":$nnet,\"net_ratio\":$nratio,\"metrics_code_net_ir_per_msg\":$mn}"
}

$what
