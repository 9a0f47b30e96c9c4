#!/bin/bash
# Debian's Prometheus scrapes kaasd's /metrics every second during a
# produce / consume-with-a-group run, and its HTTP API answers: the request
# rate (rate(kaas_requests_total)), an fsync latency quantile
# (histogram_quantile over kaas_log_fsync_duration_seconds_bucket) and the
# consumer lag (kaas_group_lag) exist and move with the run: lag 0 after the
# group consumed everything, then the size of what was produced after it.
# promtool check metrics passes on a scrape.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/metrics/metrics-lib.sh"
command -v promtool >/dev/null 2>&1 || kaas_skip "promtool is not installed (package prometheus)"

kaasd_start --http-listen 127.0.0.1:0
http_port "$KAASD_LOG"
prom_start "127.0.0.1:$HTTP_PORT"
# A first scrape before the run, so that rates see it start.
v=$(prom_wait 20 'up{job="kaas"}' '== 1') || kaas_fail "prometheus does not scrape kaasd (up: $v)"

consume() {
	timeout 60 kcat -b "$BROKER" -G mg -X auto.offset.reset=earliest \
		-X session.timeout.ms=6000 -e -f '%s\n' mt 2>>"$KAAS_SCRATCH/consumer.err"
}

# Phase 1: produce, consume everything with group mg (lag 0).
for i in 1 2 3 4; do # in steps, scraped in between
	seq 1 500 | sed "s/^/a$i-/" | kc -P -t mt -X linger.ms=5 || kaas_fail "produce a$i"
	sleep 1
done
got=$(consume | wc -l)
[ "$got" = 2000 ] || kaas_fail "the group consumed $got of 2000 messages"
# expect WHAT CMP QUERY: within 20 s, QUERY's value satisfies CMP.
expect() {
	local v
	v=$(prom_wait 20 "$3" "$2") || kaas_fail "$1: $3 is $v, expected $2"
	echo "$1: $v"
}
expect "request rate" '> 0' 'sum(rate(kaas_requests_total[1m]))'
expect "Produce rate" '> 0' 'sum(rate(kaas_requests_total{api="Produce",error="0"}[1m]))'
expect "fsync p99 (s)" '> 0' \
	'histogram_quantile(0.99, sum by (le) (rate(kaas_log_fsync_duration_seconds_bucket[1m])))'
lag='kaas_group_lag{group="mg",topic="mt",partition="0"}'
expect "lag after consuming all" '== 0' "$lag"
expect "produced records" '>= 2000' 'sum(kaas_produce_records_total{topic="mt"})'
expect "fetched records" '>= 2000' 'sum(kaas_fetch_records_total{topic="mt"})'

# Phase 2: produce 700 more, nobody consumes: the lag follows.
seq 1 700 | sed 's/^/b/' | kc -P -t mt -X linger.ms=5 || kaas_fail "produce b"
expect "lag after 700 more" '== 700' "$lag"
expect "lag range" '== 700' "max_over_time($lag[2m]) - min_over_time($lag[2m])"
expect "fsyncs in the last minute" '> 0' 'increase(kaas_log_fsync_duration_seconds_count[1m])'
expect "high watermark" '== 2700' 'kaas_partition_high_watermark{topic="mt",partition="0"}'
for q in kaas_partitions_led kaas_ready kaas_volume_free_bytes kaas_controller_epoch \
	'sum(kaas_substrate_ops_total{backend="posix",op="fsync"})'; do
	expect "$q" '> 0' "$q"
done
v=$(prom_value 'kaas_peer_alive{broker="0"}')
[ "$v" = 1 ] || kaas_fail "kaas_peer_alive{broker=0} is '$v'"

# The exposition itself is well-formed.
scrape >"$KAAS_SCRATCH/scrape.txt" || kaas_fail "scrape"
promtool check metrics <"$KAAS_SCRATCH/scrape.txt" || kaas_fail "promtool check metrics"
kaasd_stop
echo PASS
