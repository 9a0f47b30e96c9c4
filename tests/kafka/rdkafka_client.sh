#!/bin/bash
# librdkafka program against kaasd: acks 0/1/-1, MESSAGE_TOO_LARGE, admin API.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
kaasd_start
KAAS_BROKER=$BROKER timeout 120 "$KAAS_TOP_BUILDDIR/tests/kafka/rdkafka_client" ||
	{ tail -n 30 "$KAASD_LOG" >&2; kaas_fail "rdkafka_client failed"; }
# The deleted incarnation's files are gone; the new one is stamped.
[ ! -e "$KAAS_SCRATCH/data/admin1/3" ] || kaas_fail "deleted topic's partition 3 still on disk"
[ -f "$KAAS_SCRATCH/data/admin1/.topic-id.json" ] || kaas_fail "re-created topic not stamped"
[ -z "$(ls -A "$KAAS_SCRATCH/data/.trash" 2>/dev/null)" ] || kaas_fail "trash not emptied"
kaasd_stop
echo PASS
