#!/bin/bash
# librdkafka negotiates the highest versions both sides know: with its
# protocol debug on, a consumer group (kcat -G) must use the flexible
# versions librdkafka 2.0 has — ApiVersions v3 and OffsetFetch v7 — and
# read its answers (a malformed flexible answer, or a request kaasd failed
# to parse, shows as a disconnect and as no records).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
kaasd_start --group-initial-rebalance-delay-ms 0
seq 1 20 | kc -P -t flex || kaas_fail "produce"
timeout 60 kcat -b "$BROKER" -G fg -X auto.offset.reset=earliest -X debug=protocol \
	-e -f '%s\n' flex >"$KAAS_SCRATCH/got" 2>"$KAAS_SCRATCH/debug"
[ "$(wc -l <"$KAAS_SCRATCH/got")" = 20 ] ||
	kaas_fail "consumed $(wc -l <"$KAAS_SCRATCH/got") of 20 records"
for want in "Received ApiVersionResponse (v3" "Received OffsetFetchResponse (v7"; do
	grep -qF "$want" "$KAAS_SCRATCH/debug" || {
		grep -E "Sent|Received" "$KAAS_SCRATCH/debug" | sed 's/.*: //' | sort | uniq -c >&2
		kaas_fail "librdkafka did not say: $want"
	}
done
! grep -q "Disconnected" "$KAAS_SCRATCH/debug" || kaas_fail "librdkafka was disconnected"
kaasd_stop
echo PASS
