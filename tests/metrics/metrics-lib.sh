# tests/metrics/metrics-lib.sh — the metrics endpoint and a Prometheus
# server for shell tests (sourced after tests/lib.sh).
#
#   http_port LOG          wait (bounded) for kaasd's "http: ... on HOST:PORT"
#                          line in LOG; sets HTTP_PORT
#   http_code PATH         HTTP status of GET http://127.0.0.1:$HTTP_PORT/PATH
#   scrape                 the /metrics page
#   prom_start TARGET      start Debian's prometheus (scrape every 1 s) on a
#                          free 127.0.0.1 port, scraping TARGET (host:port);
#                          sets PROM (its base URL)
#   prom_value QUERY       the first sample's value of an instant query
#                          ("" when the result is empty)
command -v curl >/dev/null 2>&1 || kaas_skip "curl is not installed"
command -v jq >/dev/null 2>&1 || kaas_skip "jq is not installed"

http_port() {
	local log=$1 i
	HTTP_PORT=
	for i in $(seq 1 100); do
		HTTP_PORT=$(sed -n 's/.*http: .* on [0-9.]*:\([0-9][0-9]*\)$/\1/p' "$log" | head -n1)
		[ -n "$HTTP_PORT" ] && return 0
		sleep 0.1
	done
	cat "$log" >&2
	kaas_fail "kaasd did not start its http endpoint"
}

http_code() {
	curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/$1"
}

scrape() {
	curl -sf -m 5 "http://127.0.0.1:$HTTP_PORT/metrics"
}

prom_start() {
	local target=$1 try port
	command -v prometheus >/dev/null 2>&1 || kaas_skip "prometheus is not installed (package prometheus)"
	mkdir -p "$KAAS_SCRATCH/prom"
	cat >"$KAAS_SCRATCH/prom/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: kaas
    static_configs:
      - targets: ['$target']
YML
	for try in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 30000))
		prometheus --config.file="$KAAS_SCRATCH/prom/prometheus.yml" \
			--storage.tsdb.path="$KAAS_SCRATCH/prom/data" \
			--web.listen-address="127.0.0.1:$port" --log.level=warn \
			2>"$KAAS_SCRATCH/prom/log.$try" &
		PROM_PID=$!
		kaas_on_exit "kill -9 $PROM_PID"
		PROM="http://127.0.0.1:$port"
		if kaas_wait_for 20 curl -sf -m 2 "$PROM/-/ready"; then
			return 0
		fi
		kill -9 "$PROM_PID" 2>/dev/null
		wait "$PROM_PID" 2>/dev/null
	done
	cat "$KAAS_SCRATCH"/prom/log.* >&2
	kaas_fail "prometheus did not start"
}

prom_value() {
	curl -sf -m 5 --get --data-urlencode "query=$1" "$PROM/api/v1/query" |
		jq -r '.data.result[0].value[1] // empty'
}

# Wait (bounded) until QUERY's value (a number, not NaN) satisfies the
# comparison CMP ("> 0", "== 0", ">= 300"): prom_wait SECS QUERY CMP.
# Prints the last value seen.
prom_wait() {
	local secs=$1 q=$2 cond=$3 end=$((SECONDS + $1)) v
	while :; do
		v=$(prom_value "$q")
		if [ -n "$v" ] && [ "$v" != NaN ] && awk -v x="$v" "BEGIN { exit !(x + 0 $cond) }"; then
			echo "$v"
			return 0
		fi
		[ $SECONDS -ge $end ] && { echo "${v:-empty}"; return 1; }
		sleep 0.5
	done
}
