#!/bin/bash
# A transaction-marker reply (txn-markers/done-*.json) whose transaction has
# completed is swept: a coordinator that dies between writing Complete* and
# unlinking the replies leaves them, and nothing else would ever remove
# them.  The test commits a transaction, then plants such a reply (as that
# crash leaves it: kind txn-marker-done, the transaction's id and number)
# and one naming a transaction number not reached yet (a state read older
# than the reply: kept); the first is gone within 15 s, the second stays.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
command -v python3 >/dev/null || kaas_skip "python3 is not installed"
kaas_scratch
S=$KAAS_SCRATCH
kaasd_start --num-partitions 2
out=$(txn_client "$BROKER" mtx commit ma mb m1) || kaas_fail "commit: $out"
[ "$out" = ok ] || kaas_fail "commit: $out"
kaas_wait_for 20 grep -q 'mtx: transaction 1 CompleteCommit' "$KAASD_LOG" ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "transaction 1 never completed"; }

# plant NAME SEQ: a txn-marker-done document for mtx's transaction SEQ,
# published by rename (a reader sees it whole).
dir=$S/data/__cluster/txn-markers
mkdir -p "$dir"
plant() {
	python3 - "$S/plant.tmp" "$2" <<'PY' && mv "$S/plant.tmp" "$dir/$1"
import sys
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
body = ('{"txn_id":"mtx","seq":%d}' % int(sys.argv[2])).encode()
head = '{"kaas":"txn-marker-done","version":1,"length":%d,"crc32c":"%08x"}\n' % (len(body), crc32c(body))
open(sys.argv[1], "wb").write(head.encode() + body + b"\n")
PY
}
plant done-00000000000000a1.json 1 || kaas_fail "plant a reply"
plant done-00000000000000f9.json 99 || kaas_fail "plant a reply"
kaas_wait_for 15 bash -c "! test -e '$dir/done-00000000000000a1.json'" ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "the reply of completed transaction 1 was not swept in 15 s"; }
grep -q 'done-00000000000000a1.json (transactional id mtx, transaction 1) outlived' "$KAASD_LOG" ||
	kaas_fail "the sweep was not logged"
[ -e "$dir/done-00000000000000f9.json" ] || kaas_fail "the reply of transaction 99 (not reached yet) was swept"
kaasd_stop
echo PASS
