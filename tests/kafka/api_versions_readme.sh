#!/bin/bash
# README's list of Kafka APIs and versions is the one ApiVersions answers
# from: the block between the api-versions markers is exactly the output of
# `kaasd --api-versions` (both come from src/kafka/api_table.c).  To update
# it, paste that output between the markers.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
[ -x "$KAASD" ] || kaas_fail "no kaasd at $KAASD"
kaas_scratch
"$KAASD" --api-versions >"$KAAS_SCRATCH/table" || kaas_fail "kaasd --api-versions failed"
[ -s "$KAAS_SCRATCH/table" ] || kaas_fail "kaasd --api-versions printed nothing"
sed -n '/^<!-- api-versions:/,/^<!-- \/api-versions -->/p' "$KAAS_TOP_SRCDIR/README.md" |
	sed '1d;$d' >"$KAAS_SCRATCH/readme"
diff -u "$KAAS_SCRATCH/readme" "$KAAS_SCRATCH/table" ||
	kaas_fail "README.md's API list differs from kaasd --api-versions (paste its output between the markers)"
echo PASS
