# tests/txn/txn-lib.sh — helpers of the transaction tests (sourced after
# tests/lib.sh and a broker library).
#
#   txn_client ARGS...         the librdkafka transactional client (txn_client.c)
#   txn_read BOOTSTRAP ISOLATION TOPIC...   every record of the topics, as
#                              "topic/partition value" lines sorted by topic,
#                              partition and offset (kcat, isolation.level
#                              read_committed or read_uncommitted)
TXN_CLIENT="$KAAS_TOP_BUILDDIR/tests/txn/txn_client"
[ -x "$TXN_CLIENT" ] || kaas_skip "no txn_client (built without librdkafka)"

txn_client() {
	timeout 60 "$TXN_CLIENT" "$@"
}

txn_read() {
	local bs=$1 iso=$2 t
	shift 2
	for t in "$@"; do
		timeout 30 kcat -b "$bs" -C -t "$t" -o beginning -e -q -X isolation.level="$iso" \
			-f '%t/%p %o %s\n' 2>/dev/null
	done | sort -k1,1 -k2,2n | awk '{print $1, $3}'
}
