#!/bin/bash
# Client quotas (issue 35): DescribeClientQuotas and AlterClientQuotas v0
# and v1 on the raw wire (quotas.py wire): quotas per user, client id and
# both, the defaults, Kafka's describe filters (exact, default, specified,
# strict), removal, validate_only, and INVALID_REQUEST with a message for
# an unknown entity type or key, a fractional or negative byte rate, an
# entity type twice, an empty entity or name and ip entities; then the
# quota documents on the volume, a restart that keeps them, and kaasctl
# verify reading them.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
Q="$KAAS_TOP_SRCDIR/tests/security/quotas.py"
kaasd_start
timeout 120 python3 "$Q" wire "$BROKER" || { tail -20 "$KAASD_LOG" >&2; kaas_fail "quota APIs"; }
grep -q "client quota set by 127.0.0.1:[0-9]*: user=alice client-id=app producer_byte_rate=4096" \
	"$KAASD_LOG" || kaas_fail "an alteration was not logged"
# One document per (entity, key); the wire test removed them all.
[ -z "$(ls "$KAAS_SCRATCH/data/__cluster/quotas")" ] || kaas_fail "documents left after removal"
timeout 30 python3 - "$Q" "$BROKER" <<'PY' || kaas_fail "setting the quotas kept over a restart"
import sys, importlib.util
spec = importlib.util.spec_from_file_location("quotas", sys.argv[1])
q = importlib.util.module_from_spec(spec); spec.loader.exec_module(q)
c = q.Conn(sys.argv[2], "admin")
res = q.alter(c, [([("user", "kept")], [("producer_byte_rate", 12345, False)]),
                  ([("user", None), ("client-id", "x")], [("request_percentage", 50, False)])])
assert [e for e, _, _ in res] == [0, 0], res
PY
n=$(ls "$KAAS_SCRATCH/data/__cluster/quotas" | grep -c '^[0-9a-f]\{32\}\.json$')
[ "$n" = 2 ] || kaas_fail "$n quota documents, want 2"
grep -q '"kaas":"client-quota"' "$KAAS_SCRATCH"/data/__cluster/quotas/*.json ||
	kaas_fail "not client-quota documents"
kaasd_stop
kaasd_start
timeout 30 python3 - "$Q" "$BROKER" <<'PY' || kaas_fail "the quotas after a restart"
import sys, importlib.util
spec = importlib.util.spec_from_file_location("quotas", sys.argv[1])
q = importlib.util.module_from_spec(spec); spec.loader.exec_module(q)
err, _, f = q.describe(q.Conn(sys.argv[2], "admin"), [], v=0)
want = {(("user", "kept"),): {"producer_byte_rate": 12345.0},
        (("client-id", "x"), ("user", None)): {"request_percentage": 50.0}}
assert err == 0 and f == want, (err, f)
PY
grep -q "client quotas: 2 quota value(s) in force" "$KAASD_LOG" || kaas_fail "not loaded at start"
kaasd_stop
# kaasctl verify reads every quota document: clean, then one under a name
# that is not its (entity, key)'s is corrupt.
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"
"$KAASCTL" --data "$KAAS_SCRATCH/data" verify >"$KAAS_SCRATCH/verify.out" 2>&1 ||
	{ cat "$KAAS_SCRATCH/verify.out" >&2; kaas_fail "kaasctl verify with quota documents"; }
doc=$(ls "$KAAS_SCRATCH"/data/__cluster/quotas/*.json | head -n1)
cp "$doc" "$KAAS_SCRATCH/data/__cluster/quotas/0123456789abcdef0123456789abcdef.json"
"$KAASCTL" --data "$KAAS_SCRATCH/data" verify >"$KAAS_SCRATCH/verify.out" 2>&1 &&
	kaas_fail "kaasctl verify took a misnamed quota document"
grep -q "its quota is named" "$KAAS_SCRATCH/verify.out" ||
	{ cat "$KAAS_SCRATCH/verify.out" >&2; kaas_fail "verify did not say why"; }
exit 0
