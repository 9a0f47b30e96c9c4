#!/bin/bash
# Client quotas (issue 35): a producer with producer_byte_rate = 256 KiB/s
# on its client id is held to it within 10% (quotas.py rate: measured
# over one span of the quota's eleven 1 s windows once the burst Kafka's
# rate lets in first has left them; Kafka's quota.window.num and
# quota.window.size.seconds defaults), with throttle_time_ms in its
# answers, while an unquota'd producer beside it gets the 2 MiB/s it asks
# for and no throttle time; then a consumer over its consumer_byte_rate is
# answered with no partitions and a throttle time and its connection muted
# for that time (KIP-219), another client id not, and a small quota bounds
# a fetch's max_bytes to its window; /metrics counts the throttled answers.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
command -v python3 >/dev/null || kaas_skip "no python3"
command -v curl >/dev/null || kaas_skip "no curl"
Q="$KAAS_TOP_SRCDIR/tests/security/quotas.py"
kaasd_start --http-listen 127.0.0.1:0
timeout 120 python3 "$Q" rate "$BROKER" 262144 17.5 || { tail -20 "$KAASD_LOG" >&2; kaas_fail "producer quota"; }
timeout 60 python3 "$Q" fetch "$BROKER" 1000000 || { tail -20 "$KAASD_LOG" >&2; kaas_fail "consumer quota"; }
hport=$(sed -n "s/.*http: .*\/metrics.* on [^ ]*:\([0-9]*\).*/\1/p" "$KAASD_LOG" | head -n1)
[ -n "$hport" ] || { grep -i http "$KAASD_LOG" >&2; kaas_fail "no metrics endpoint in the log"; }
m=$(curl -s "http://127.0.0.1:$hport/metrics")
echo "$m" | grep -q '^kaas_quota_throttled_total{quota="producer_byte_rate"} [1-9]' ||
	kaas_fail "no producer_byte_rate throttles counted"
echo "$m" | grep -q '^kaas_quota_throttled_total{quota="consumer_byte_rate"} [1-9]' ||
	kaas_fail "no consumer_byte_rate throttles counted"
echo "$m" | grep -q '^kaas_quota_throttle_ms_total{quota="producer_byte_rate"} [1-9]' ||
	kaas_fail "no throttle time counted"
kaasd_stop
exit 0
