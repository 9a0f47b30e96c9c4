#!/usr/bin/env bash
# kaasctl txn list|describe through the Kafka protocol (issue 39): a
# committed transaction (librdkafka's, tests/txn/txn_client) listed as
# CompleteCommit, an open one as Ongoing with its partitions and start
# time, the --state filter, an unknown id TRANSACTIONAL_ID_NOT_FOUND.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
kaasd_start
ADM_BOOT=$BROKER
adm 0 topic create ta --partitions 2
adm 0 topic create tb --partitions 1
[ "$(txn_client "$BROKER" done1 commit ta tb c1 g1)" = ok ] || kaas_fail "commit"
# timeout itself in the background (not the txn_client function's
# subshell), so that killing $HANG reaches the client
timeout 60 "$TXN_CLIENT" "$BROKER" open1 hang ta tb h1 >"$KAAS_SCRATCH/hang.out" 2>&1 &
HANG=$!
kaas_on_exit "kill $HANG"
kaas_wait_for 30 grep -q open "$KAAS_SCRATCH/hang.out" || kaas_fail "the open transaction did not start"

adm 0 txn list --json
[ "$(adm_py "sorted((t['transactional_id'], t['state']) for t in d['transactions'])")" = \
	"[('done1', 'CompleteCommit'), ('open1', 'Ongoing')]" ] || kaas_fail "txn list: $ADM_OUT"
adm 0 txn list --state Ongoing --json
[ "$(adm_py "[t['transactional_id'] for t in d['transactions']]")" = "['open1']" ] ||
	kaas_fail "txn list --state Ongoing: $ADM_OUT"
adm 0 txn list
grep -Eq '^open1 +0 +[0-9]+ +Ongoing$' <<<"$ADM_OUT" || kaas_fail "txn list table: $ADM_OUT"
adm 0 txn describe open1 --json
[ "$(adm_py "(d['state'], sorted((p['topic'], p['partition']) for p in d['partitions']), d['start_time_ms'] is not None)")" = \
	"('Ongoing', [('ta', 0), ('ta', 1), ('tb', 0)], True)" ] || kaas_fail "txn describe open1: $ADM_OUT"
adm 0 txn describe done1 --json
[ "$(adm_py "(d['state'], d['partitions'], d['start_time_ms'])")" = "('CompleteCommit', [], None)" ] ||
	kaas_fail "txn describe done1: $ADM_OUT"
adm 0 txn describe open1
grep -q "^  tb/0$" <<<"$ADM_OUT" || kaas_fail "txn describe table: $ADM_OUT"
adm 2 txn describe nosuchid
grep -q "TRANSACTIONAL_ID_NOT_FOUND" <<<"$ADM_ERR" || kaas_fail "unknown id: $ADM_ERR"
kill $HANG
wait $HANG 2>/dev/null || true
kaasd_stop
echo "kaasctl txn: ok"
