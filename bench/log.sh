#!/usr/bin/env bash
# bench/log.sh [URL] — numbers for the partition log engine (issue 3).
#
#  1. Append throughput with group commit (1 KiB and 100 KiB batches, 1 and 8
#     appenders, acks=all) against a plain sequential write+fsync loop on the
#     same directory at the same fsync cadence, in the same run: both and
#     their ratio (goal >= 0.9).  Each configuration runs $KAAS_BENCH_RUNS
#     times (default 3).
#  2. Recovery time after an unclean stop of a 2 GiB and of a 20 MiB partition,
#     side by side (goal: within 2x).
#
# URL: a substrate URL or directory (default: a fresh directory under
# ${TMPDIR:-/var/tmp}).  Needs the build in build/ (made if missing).
# Environment: KAAS_BENCH_SECONDS (default 3), KAAS_BENCH_BIG (bytes, default
# 2 GiB), KAAS_BENCH_SMALL (default 20 MiB).  Prints numbers; never fails on
# them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
bin=$build/bench/kaas-log-bench
if [ ! -x "$bin" ]; then
	make -C "$build" -s -j2 bench/kaas-log-bench >&2
fi
secs=${KAAS_BENCH_SECONDS:-3}
runs=${KAAS_BENCH_RUNS:-3}
big=${KAAS_BENCH_BIG:-$((2 << 30))}
small=${KAAS_BENCH_SMALL:-$((20 << 20))}
scratch=""
url=${1:-}
if [ -z "$url" ]; then
	scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-bench-log.XXXXXX")
	url=$scratch
fi
cleanup() { [ -n "$scratch" ] && rm -rf "$scratch"; return 0; }
trap cleanup EXIT

echo "== append throughput, group commit vs plain write+fsync loop ($url, ${secs}s each)"
echo "   (log and plain loop take turns in 0.25 s slices, the loop at the log's fsync cadence)"
for batch in 1024 102400; do
	for appenders in 1 8; do
		ratios=()
		for ((r = 1; r <= runs; r++)); do
			line=$("$bin" append "$url" "$batch" "$appenders" "$secs")
			echo "$line"
			ratios+=("${line##*ratio=}")
		done
		printf 'batch=%s appenders=%s median_ratio=%s\n' "$batch" "$appenders" \
			"$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')"
	done
done

echo "== recovery after an unclean stop"
for bytes in "$big" "$small"; do
	dir=bench-recover-$$-$bytes/0
	"$bin" fill "$url" "$dir" "$bytes" >/dev/null
	printf 'size=%s ' "$bytes"
	"$bin" recover "$url" "$dir"
	[ -n "$scratch" ] && rm -rf "${scratch:?}/bench-recover-$$-$bytes"
done
