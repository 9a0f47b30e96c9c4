#!/usr/bin/env bash
# bench/txn.sh [--quick] [--records N] [--rounds N] [--size B] [--partitions N]
#              [--per-txn N] [--dir DIR]   (scripts/bench --txn ...)
# What a transaction costs (issue 16): one kaasd on a local directory, and
# against it, in the same run, a librdkafka transactional producer
# (transactions of PER_TXN records, default 100, each flushed then
# committed) and an idempotent producer streaming the same records (SIZE
# bytes, default 1 KiB; record i to partition i % PARTITIONS, default 3;
# acks=all both ways), RECORDS records per run (default 100,000), in rounds
# ordered txn-idem then idem-txn (ABBA) so drift in the machine's load
# favours neither.  Each run writes its own topic, deleted after it.
# Prints msgs/s, MB/s and kaasd's CPU per message both ways, the ratio
# txn/idem, the commit latency p50/p99, and one JSON line.  --quick: 20,000
# records, 2 rounds (well under a minute).  Never fails on the numbers.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
records=100000 rounds=3 size=1024 partitions=3 per_txn=100 voldir=
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) records=20000 rounds=2 ;;
	--records) records=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--size) size=$2; shift ;;
	--partitions) partitions=$2; shift ;;
	--per-txn) per_txn=$2; shift ;;
	--dir) voldir=$2; shift ;;
	-h | --help) sed -n '2,14p' "$0" | cut -c3-; exit 0 ;;
	*) echo "bench/txn.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ -f "$build/Makefile" ] || "$top/scripts/setup" >&2
make -C "$build" -s -j2 kaasd bench/kaas-txn-bench bench/kaas-kafka-bench >&2
txnb=$build/bench/kaas-txn-bench
kafkab=$build/bench/kaas-kafka-bench
command -v jq >/dev/null || { echo "bench/txn.sh: needs jq" >&2; exit 1; }
own_dir=0
if [ -z "$voldir" ]; then
	voldir=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-txn-bench.XXXXXX")
	own_dir=1
fi
kpid=
cleanup() {
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null
	[ $own_dir = 1 ] && rm -rf "$voldir"
	return 0
}
trap cleanup EXIT

log=$voldir/kaasd.log
"$build/kaasd" --data "$voldir/data" --listen 127.0.0.1:0 --num-partitions "$partitions" \
	2>"$log" &
kpid=$!
port=
for _ in $(seq 1 100); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log" | head -n1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "bench/txn.sh: kaasd did not start" >&2; exit 1; }
broker=127.0.0.1:$port

# one MODE ROUND: one run into a fresh topic (deleted after); prints
# msgs/s MB/s CPU-us/msg p50 p99 (p50/p99: the commit's for txn, a
# record's delivery for idem)
one() {
	local mode=$1 topic=bench-$1-$2 j
	j=$(KAAS_BENCH_CPU_PID=$kpid "$txnb" "$mode" "$broker" "$topic" "$size" "$records" \
		"$partitions" "$per_txn") || echo "warning: $mode/$2 reported failures" >&2
	"$kafkab" delete "$broker" "$topic" >/dev/null || echo "warning: delete $topic failed" >&2
	jq -r '[.msgs_per_s, .MBps, .cpu_us_per_msg,
		(.commit_p50_ms // .delivery_p50_ms), (.commit_p99_ms // .delivery_p99_ms)] | @tsv' <<<"$j"
}

declare -A msgs mb us p50 p99
for r in $(seq 1 "$rounds"); do
	order="txn idem"
	[ $((r % 2)) = 0 ] && order="idem txn" # ABBA: neither side always goes first
	for mode in $order; do
		read -r m b u a z < <(one "$mode" "$r")
		lat=commit
		[ "$mode" = idem ] && lat=delivery
		printf 'round %d %-4s %8.0f msgs/s %7.2f MB/s %7.2f us CPU/msg  %s p50 %.2f ms p99 %.2f ms\n' \
			"$r" "$mode" "$m" "$b" "$u" "$lat" "$a" "$z"
		msgs[$mode]+="$m " mb[$mode]+="$b " us[$mode]+="$u " p50[$mode]+="$a " p99[$mode]+="$z "
	done
done
kill -TERM "$kpid"
wait "$kpid" || echo "warning: kaasd exited with $?" >&2
kpid=

mean() { printf '%s\n' $1 | awk '{ s += $1; n++ } END { printf "%.2f", n ? s / n : 0 }'; }
tm=$(mean "${msgs[txn]}") im=$(mean "${msgs[idem]}")
tb=$(mean "${mb[txn]}") ib=$(mean "${mb[idem]}")
tu=$(mean "${us[txn]}") iu=$(mean "${us[idem]}")
c50=$(mean "${p50[txn]}") c99=$(mean "${p99[txn]}")
ratio=$(awk -v a="$tm" -v b="$im" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
cpu_ratio=$(awk -v a="$tu" -v b="$iu" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
printf 'transactional: %.0f msgs/s (%.2f MB/s), kaasd %.2f us CPU/msg, commit p50 %.2f ms p99 %.2f ms\n' \
	"$tm" "$tb" "$tu" "$c50" "$c99"
printf 'idempotent:    %.0f msgs/s (%.2f MB/s), kaasd %.2f us CPU/msg\n' "$im" "$ib" "$iu"
printf 'txn/idem: %s msgs/s, %s CPU/msg (%d records of %d B over %d partitions per run, %d per transaction, acks=all, %d rounds each way)\n' \
	"$ratio" "$cpu_ratio" "$records" "$size" "$partitions" "$per_txn" "$rounds"
echo "{\"bench\":\"txn\",\"size\":$size,\"records\":$records,\"partitions\":$partitions,\"per_txn\":$per_txn,\"rounds\":$rounds,\"txn_msgs_per_s\":$tm,\"idem_msgs_per_s\":$im,\"txn_MBps\":$tb,\"idem_MBps\":$ib,\"ratio\":$ratio,\"commit_p50_ms\":$c50,\"commit_p99_ms\":$c99,\"txn_cpu_us_per_msg\":$tu,\"idem_cpu_us_per_msg\":$iu,\"cpu_ratio\":$cpu_ratio}"
