#!/usr/bin/env bash
# bench/nfs.sh — broker-free throughput of the libnfs backend: sequential
# write + COMMIT through the kaas substrate next to a plain libnfs write loop
# (the same writes, the same server, the same run), and the ratio.
#
#   bench/nfs.sh [BUILD_DIR]
#
# Env: TOTAL_MIB (256), ROUNDS (3), PORT (free port pair near 23500).
# Two workloads:  "stream"   1 MiB writes, COMMIT every 16 MiB
#                 "acks-all" 16 KiB writes, each followed by a COMMIT
# Rounds alternate raw / kaas; the median of each is reported.  It starts
# its own nfs-ganesha (scripts/nfs-server) on a scratch directory and stops
# it on exit.  It prints numbers; it does not pass or fail on them.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
bin=$build/bench/kaas-nfs-bench
if [ ! -x "$bin" ]; then
	make -C "$build" bench/kaas-nfs-bench >/dev/null || { echo "bench-nfs: cannot build $bin (configure a build in $build first)" >&2; exit 1; }
fi
total=${TOTAL_MIB:-256}
rounds=${ROUNDS:-3}
port=${PORT:-23500}
while ss -Hltn "sport = :$port" | grep -q . || ss -Hltn "sport = :$((port + 1))" | grep -q .; do
	port=$((port + 2))
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kaas-bench-nfs.XXXXXX")
cleanup() {
	"$top/scripts/nfs-server" stop "$scratch" "$port" >/dev/null 2>&1
	rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
url=$("$top/scripts/nfs-server" start "$scratch" "$port") || { rc=$?; echo "bench-nfs: cannot start the NFS server" >&2; exit $rc; }
url=$(head -1 <<<"$url")
echo "bench-nfs: $url, ${total} MiB per run, $rounds rounds, libnfs $(pkg-config --modversion libnfs 2>/dev/null)"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench() { # bench NAME TOTAL_MIB CHUNK_KIB SYNC_KIB
	local name=$1 mib=$2 chunk=$3 sync=$4 r raw=() kaas=() rawc=() kaasc=() line
	for r in $(seq "$rounds"); do
		line=$("$bin" raw "$url" "bench-raw" "$mib" "$chunk" "$sync") || exit 1
		raw+=("$(awk '{print $2}' <<<"$line")")
		rawc+=("$(awk '{print $3}' <<<"$line")")
		line=$("$bin" kaas "$url" "bench-kaas" "$mib" "$chunk" "$sync") || exit 1
		kaas+=("$(awk '{print $2}' <<<"$line")")
		kaasc+=("$(awk '{print $3}' <<<"$line")")
	done
	local mr mk cr ck
	mr=$(printf '%s\n' "${raw[@]}" | median)
	mk=$(printf '%s\n' "${kaas[@]}" | median)
	cr=$(printf '%s\n' "${rawc[@]}" | median)
	ck=$(printf '%s\n' "${kaasc[@]}" | median)
	printf '%-9s plain libnfs %8.1f MB/s %8.1f COMMIT/s | kaas nfs:// %8.1f MB/s %8.1f COMMIT/s | ratio %.3f\n' \
		"$name" "$mr" "$cr" "$mk" "$ck" "$(awk -v a="$mk" -v b="$mr" 'BEGIN {print (b > 0) ? a / b : 0}')"
	echo "          rounds raw: ${raw[*]}   kaas: ${kaas[*]}"
}

bench stream "$total" 1024 16384
bench acks-all $((total / 16 > 0 ? total / 16 : 1)) 16 16
