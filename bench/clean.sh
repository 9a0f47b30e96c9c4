#!/usr/bin/env bash
# bench/clean.sh [URL] — the log cleaner (issue 21): one forced cleaning pass
# over $KAAS_BENCH_CLEAN_MIB MiB (default 1024) of keyed records with 10%
# unique keys while a producer appends (acks=all); prints the pass's
# throughput and the producer's latency alone and during the pass.
# URL: a substrate URL or directory (default: a fresh directory under
# ${TMPDIR:-/var/tmp}).  Prints numbers; never fails on them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
bin=$build/bench/kaas-clean-bench
[ -x "$bin" ] || make -C "$build" -s -j2 bench/kaas-clean-bench >&2
scratch=""
url=${1:-}
if [ -z "$url" ]; then
	scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/kaas-bench-clean.XXXXXX")
	url=$scratch
fi
cleanup() { [ -n "$scratch" ] && rm -rf "$scratch"; return 0; }
trap cleanup EXIT
echo "== log cleaner: ${KAAS_BENCH_CLEAN_MIB:-1024} MiB, 10% unique keys, producer running ($url)"
"$bin" "$url" "${KAAS_BENCH_CLEAN_MIB:-1024}" 10
