#!/usr/bin/env bash
# kaasctl's broker commands on 2 brokers (issue 39): asked of either one,
# describe names both brokers' leaders, the log-end offsets are asked of
# each partition's leader and the group's of its coordinator (found with
# FindCoordinator, wherever the bootstrap is): the same lag from both
# bootstraps, a reset done through either.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
mb_start 0
mb_start 1
B0="127.0.0.1:${MB_PORT[0]}"
B1="127.0.0.1:${MB_PORT[1]}"
ADM_BOOT=$B0
for i in $(seq 1 100); do # broker 1's join reaches broker 0's view
	adm 0 cluster describe --json
	[ "$(adm_py "sorted(b['id'] for b in d['brokers'])")" = "[0, 1]" ] && break
	sleep 0.2
done
[ "$(adm_py "sorted(b['id'] for b in d['brokers'])")" = "[0, 1]" ] || kaas_fail "cluster: $ADM_OUT"
adm 0 topic create multi --partitions 6
mb_wait_led 20 multi 6 0 0 1 || kaas_fail "multi: not every partition led"
mb_wait_led 20 multi 6 1 0 1 || kaas_fail "multi: not every partition led in broker 1's metadata"
adm 0 topic describe multi --json
echo "leaders: $(adm_py "sorted(set(p['leader'] for p in d['topics'][0]['partitions']))")"
for i in $(seq 1 60); do echo "k$i:v$i"; done |
	timeout 60 kcat -b "$B0,$B1" -P -t multi -K: -X acks=all || kaas_fail "produce"
n=$(timeout 90 kcat -b "$B0,$B1" -G mgrp -X auto.offset.reset=earliest -e -q multi | wc -l)
[ "$n" = 60 ] || kaas_fail "consumed $n, not 60"
coord=$(mb_coordinator mgrp); echo "coordinator: $coord"
[ -n "$coord" ] || kaas_fail "no coordinator of mgrp"
for ADM_BOOT in "$B0" "$B1"; do
	admin_wait_state mgrp Empty 0
	[ "$(adm_py "d['coordinator']")" = "$coord" ] || kaas_fail "coordinator via $ADM_BOOT: $ADM_OUT"
	[ "$(adm_py "(sum(o['committed'] for o in d['offsets']), sum(o['log_end_offset'] for o in d['offsets']), sum(o['lag'] for o in d['offsets']), len(d['offsets']))")" = \
		"(60, 60, 0, 6)" ] || kaas_fail "group describe via $ADM_BOOT: $ADM_OUT"
done
ADM_BOOT=$B0
adm 0 group reset-offsets mgrp --topic multi --to-earliest
ADM_BOOT=$B1
adm 0 group describe mgrp --json
[ "$(adm_py "(sum(o['committed'] for o in d['offsets']), sum(o['lag'] for o in d['offsets']))")" = "(0, 60)" ] ||
	kaas_fail "after the reset: $ADM_OUT"
adm 0 group delete mgrp
adm 0 topic delete multi
echo "kaasctl on 2 brokers: ok"
