#!/usr/bin/env bash
# bench/kernel-nfs.sh [--seconds S] — kaas on a real kernel NFS mount:
# the `kernel-nfs` view of scripts/bench, runnable on its own.
#
# Boots scripts/nfs-lab with an ext4 export (so fsync reaches a disk: the
# image in the lab's work directory, through knfsd and an NFSv3 mount) and,
# inside, on mount host0, in one run:
#   raw-write  a plain write+fsync loop through the substrate, 1 MiB and
#              16 KiB per fsync (kaas-disk-bench write)
#   produce    1 KiB messages, acks=-1, one producer, to kaasd with --data on
#              the mount (kaas-kafka-bench produce)
#   fill       the same from four producers, into a second topic
#   raw-read   a plain sequential read of that topic's segment files
#   consume    the same messages read back through kaasd
# Prints one "VIEW KIND {json}" line per measurement (the first,
# "kernel-nfs kernel LABEL", names the lab's kernel: uml, qemu-kvm or
# qemu-tcg), then a table.  The guest's CPU is slow (UML on a shared
# machine, or qemu's software emulation, several times slower again):
# compare the rows with each other (same run, same mount), not with other
# machines or with figures of another lab kernel.  Needs build/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KAAS_BUILD_DIR:-$top/build}
secs=5
[ "${1:-}" = --seconds ] && { secs=$2; shift 2; }
if [ "${KAAS_LAB:-}" != 1 ]; then
	make -C "$build" -s kaasd bench/kaas-disk-bench bench/kaas-kafka-bench >&2 || exit 1
	exec "$top/scripts/nfs-lab" run --hosts 1 --export ext4 --export-mb 1024 --timeout 900 -- \
		"$top/bench/kernel-nfs.sh" --seconds "$secs"
fi
diskb=$build/bench/kaas-disk-bench kafkab=$build/bench/kaas-kafka-bench
jget() { sed -n "s/.*\"$2\":\(-\{0,1\}[0-9][0-9.eE+-]*\).*/\1/p" <<<"$1"; }
vol=$HOST0
echo "kernel-nfs kernel ${KAAS_LAB_KERNEL:-unknown}"
mkdir -p "$vol/kaas"
log=$(mktemp "${TMPDIR:-/tmp}/kaas-bench-knfs.XXXXXX")
trap 'kill -9 $kpid 2>/dev/null; rm -f "$log"' EXIT

w1=$("$diskb" write "$vol" raw-1m.dat 1048576 "$secs" $((512 << 20))) || exit 1
echo "kernel-nfs raw-write-1MiB $w1"
w16=$("$diskb" write "$vol" raw-16k.dat 16384 "$secs" $((512 << 20))) || exit 1
echo "kernel-nfs raw-write-16KiB $w16"

"$build/kaasd" --data "$vol/kaas" --listen 127.0.0.1:0 --log-level info 2>"$log" &
kpid=$!
port=
for i in $(seq 1 200); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log" | head -n1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "kaasd did not start" >&2; exit 1; }
b=127.0.0.1:$port
pj=$("$kafkab" produce "$b" kb 1024 1 "$secs" 100000000) || echo "warning: produce reported failures" >&2
echo "kernel-nfs produce-1KiB $pj"
# A larger topic to read: 1 KiB messages from four producers.
fj=$("$kafkab" produce "$b" kc 1024 4 "$secs" 100000000) || echo "warning: fill reported failures" >&2
echo "kernel-nfs fill-1KiB-4-producers $fj"
n=$(jget "$fj" msgs)
rj=$("$diskb" read "$vol/kaas" kc) || exit 1
echo "kernel-nfs raw-read-segments $rj"
cj=$("$kafkab" consume "$b" kc "$n") || echo "warning: consume came up short" >&2
echo "kernel-nfs consume-1KiB $cj"
kill -TERM $kpid; wait $kpid 2>/dev/null

printf '\n%-22s %10s %9s %8s %8s %s\n' "kernel-nfs (NFSv3, ${KAAS_LAB_KERNEL:-?})" "msgs/s" "MB/s" "p50 ms" "p99 ms" "vs"
printf '%-22s %10s %9s %8s %8s\n' "raw write, 1 MiB/fsync" - "$(jget "$w1" MBps)" "$(jget "$w1" fsync_p50_ms)" "$(jget "$w1" fsync_p99_ms)"
printf '%-22s %10s %9s %8s %8s\n' "raw write, 16 KiB/fsync" - "$(jget "$w16" MBps)" "$(jget "$w16" fsync_p50_ms)" "$(jget "$w16" fsync_p99_ms)"
printf '%-22s %10s %9s %8s %8s %s\n' "produce 1 KiB acks=-1" "$(jget "$pj" msgs_per_s)" "$(jget "$pj" MBps)" "$(jget "$pj" p50_ms)" "$(jget "$pj" p99_ms)" \
	"$(awk -v a="$(jget "$pj" MBps)" -v b="$(jget "$w16" MBps)" 'BEGIN { if (b > 0) printf "%.2f x raw 16 KiB/fsync", a / b }')"
printf '%-22s %10s %9s %8s %8s\n' "  4 producers" "$(jget "$fj" msgs_per_s)" "$(jget "$fj" MBps)" "$(jget "$fj" p50_ms)" "$(jget "$fj" p99_ms)"
printf '%-22s %10s %9s %8s %8s\n' "raw read of segments" - "$(jget "$rj" MBps)" - -
if [ "$(jget "$cj" msgs_per_s)" = 0 ]; then
	printf '%-22s %10s %9s %8s %8s %s\n' "consume 1 KiB" - - - - "$(jget "$cj" msgs) messages, all in the first fetch: too few to time"
else
	printf '%-22s %10s %9s %8s %8s %s\n' "consume 1 KiB" "$(jget "$cj" msgs_per_s)" "$(jget "$cj" MBps)" - - \
		"$(awk -v a="$(jget "$cj" MBps)" -v b="$(jget "$rj" MBps)" 'BEGIN { if (b > 0) printf "%.2f x raw read", a / b }')"
fi
