#!/usr/bin/env bash
# bench/faultfs.sh [--mib N] [--repeat N] [--build DIR] [--dir SCRATCH]
#
# Overhead of faultfs against the lower directory itself, measured in one
# run on the same disk: sequential write + one fsync (1 MiB writes),
# 16 KiB writes each followed by fdatasync, and sequential read (1 MiB
# reads, page cache of the lower warm in every case).  Targets: the lower
# directory directly, a faultfs view with the "passthrough" profile (no
# rules), and one with the default "nfs-floor" profile.  Each workload runs
# --repeat times (default 3) interleaved across the targets; the median is
# printed with the ratio to the lower.  Numbers, not a pass/fail.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mib=256
repeat=3
build=$top/build
scratch_parent=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
	case $1 in
	--mib) mib=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--dir) scratch_parent=$2; shift 2 ;;
	*) echo "usage: $0 [--mib N] [--repeat N] [--build DIR] [--dir SCRATCH]" >&2; exit 2 ;;
	esac
done
faultfs=$build/faultfs/faultfs
[ -x "$faultfs" ] || { echo "bench-faultfs: $faultfs not built (make in $build first)" >&2; exit 1; }
[ -c /dev/fuse ] || { echo "bench-faultfs: no /dev/fuse" >&2; exit 1; }

s=$(mktemp -d "$scratch_parent/bench-faultfs.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for m in "$s"/pt/host0 "$s"/nf/host0; do
		grep -q " $m " /proc/mounts && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -u -z "$m" 2>/dev/null || true; }
	done
	rm -rf "$s"
}
trap cleanup EXIT
mkdir -p "$s/lower/direct" "$s/lower/pt" "$s/lower/nf" "$s/pt" "$s/nf"
"$faultfs" --lower "$s/lower/pt" --mount "$s/pt" --hosts 1 --profile passthrough 2>"$s/pt.err" &
pids+=($!)
"$faultfs" --lower "$s/lower/nf" --mount "$s/nf" --hosts 1 2>"$s/nf.err" &
pids+=($!)
for d in pt nf; do
	for i in $(seq 1 150); do [ -S "$s/$d/.faultfs.sock" ] && break; sleep 0.1; done
	[ -S "$s/$d/.faultfs.sock" ] || { cat "$s/$d.err"; echo "faultfs did not start" >&2; exit 1; }
done

now() { date +%s%N; }
# mbps BYTES NS
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.1f", (b / 1e6) / (ns / 1e9) }'; }

seq_write() { # DIR -> MB/s
	local t0 t1
	t0=$(now)
	dd if=/dev/zero of="$1/seq" bs=1M count="$mib" conv=fsync status=none
	t1=$(now)
	mbps $((mib * 1048576)) $((t1 - t0))
}
sync_write() { # DIR -> MB/s (16 KiB + fdatasync each)
	local n=$((mib * 4)) t0 t1
	[ $n -gt 2000 ] && n=2000
	t0=$(now)
	dd if=/dev/zero of="$1/sync" bs=16k count=$n oflag=dsync status=none
	t1=$(now)
	mbps $((n * 16384)) $((t1 - t0))
}
seq_read() { # DIR -> MB/s
	local t0 t1
	cat "$1/seq" >/dev/null # warm the lower's page cache
	t0=$(now)
	dd if="$1/seq" of=/dev/null bs=1M status=none
	t1=$(now)
	mbps $((mib * 1048576)) $((t1 - t0))
}

median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
declare -A r
for w in seq_write sync_write seq_read; do
	a="" b="" c=""
	for i in $(seq 1 "$repeat"); do
		a="$a $($w "$s/lower/direct")"
		b="$b $($w "$s/pt/host0")"
		c="$c $($w "$s/nf/host0")"
	done
	r[$w,direct]=$(echo $a | median)
	r[$w,pt]=$(echo $b | median)
	r[$w,nf]=$(echo $c | median)
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "faultfs overhead, $mib MiB, median of $repeat, $(date -u +%FT%TZ), $(uname -r)"
printf "%-34s %10s %12s %8s %12s %8s\n" workload "lower MB/s" "passthru" ratio "nfs-floor" ratio
for w in seq_write sync_write seq_read; do
	case $w in
	seq_write) label="sequential write + fsync (1 MiB)" ;;
	sync_write) label="16 KiB write + fdatasync each" ;;
	seq_read) label="sequential read (1 MiB)" ;;
	esac
	printf "%-34s %10s %12s %8s %12s %8s\n" "$label" "${r[$w,direct]}" "${r[$w,pt]}" \
		"$(ratio "${r[$w,pt]}" "${r[$w,direct]}")" "${r[$w,nf]}" "$(ratio "${r[$w,nf]}" "${r[$w,direct]}")"
done
