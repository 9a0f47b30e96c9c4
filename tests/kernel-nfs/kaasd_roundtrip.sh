#!/bin/bash
# kaasd on a real kernel NFS mount (scripts/nfs-lab): broker 0 with its data
# on mount host0 takes 2,000 keyed records from kcat with acks=all (and a
# zstd batch) and serves them back; then it stops, and broker 1 on mount
# host1 (another NFS client of the same export, own caches) takes the
# partitions over and serves every record again, and more produced to it.
# kaas-test-timeout: 900
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kernel-nfs/kn-lib.sh"
kn_in_lab --hosts 2 --timeout 300

kaas_scratch
kn_brokers_on_mounts
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
S=$KAAS_SCRATCH
kc() { timeout 120 kcat -b "$1" "${@:2}"; }
# A plain kcat producer retries a request that timed out on a loaded machine
# and may reorder or duplicate records (Kafka allows that without
# idempotence); the test is about the volume, so the producers are
# idempotent and any difference is the broker's.
kp() { kc "$1" -P -X enable.idempotence=true "${@:2}"; }
# same_lines EXPECTED GOT WHAT — fail naming the first differences
same_lines() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" | head -n 20 >&2
	kaas_fail "$3: read back $(wc -l <"$2") lines, not the $(wc -l <"$1") produced (diff above)"
}

mb_start 0
b0=$(mb_bootstrap 0)
seq 1 2000 | sed 's/^\(.*\)$/key\1:value\1/' >"$S/in.txt"
kp "$b0" -t rt -K: -X acks=all -l "$S/in.txt" || kaas_fail "produce 2000 to broker 0"
seq 1 500 | sed 's/^/z:/' >"$S/z.txt"
kp "$b0" -t rtz -K: -z zstd -X acks=all -l "$S/z.txt" || kaas_fail "produce a zstd batch"
kc "$b0" -C -t rt -o beginning -e -f '%k:%s\n' >"$S/out0.txt" 2>/dev/null || kaas_fail "consume from broker 0"
same_lines "$S/in.txt" "$S/out0.txt" "broker 0 (host0)"
echo "broker 0 on host0: 2000 records produced with acks=all and read back"

mb_kill 0 TERM
wait "${MB_PID[0]}" || kaas_fail "broker 0 did not exit cleanly on SIGTERM"
unset "MB_PID[0]"
mb_start 1
b1=$(mb_bootstrap 1)
mb_wait_led 60 rt 1 1 1 || kaas_fail "broker 1 did not take rt/0 over"
kc "$b1" -C -t rt -o beginning -e -f '%k:%s\n' >"$S/out1.txt" 2>/dev/null || kaas_fail "consume from broker 1"
same_lines "$S/in.txt" "$S/out1.txt" "broker 1 (host1), of what broker 0 took"
mb_wait_led 60 rtz 1 1 1 || kaas_fail "broker 1 did not take rtz/0 over"
n=$(kc "$b1" -C -t rtz -o beginning -e -f '%k:%s\n' 2>/dev/null | grep -c '^z:[0-9]*$')
[ "$n" = 500 ] || kaas_fail "zstd batch: broker 1 read back $n of 500"
seq 2001 2100 | sed 's/^\(.*\)$/key\1:value\1/' >>"$S/in.txt"
sed -n '2001,2100p' "$S/in.txt" | kp "$b1" -t rt -K: -X acks=all || kaas_fail "produce 100 to broker 1"
kc "$b1" -C -t rt -o beginning -e -f '%k:%s\n' >"$S/out2.txt" 2>/dev/null || kaas_fail "consume 2100 from broker 1"
same_lines "$S/in.txt" "$S/out2.txt" "after the 100 more"
echo "broker 1 on host1: took the partitions over, served all 2000 (and the zstd batch), appended 100 more"
echo PASS
