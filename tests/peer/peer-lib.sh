# tests/peer/peer-lib.sh — Apache Kafka beside a scratch kaasd (issue 34),
# sourced after tests/lib.sh and tests/kafka/kaasd-lib.sh.
#
#   peer_kafka_start [ARGS...]
#                      fetch Kafka (scripts/peer-kafka, cached after the
#                      first time) and start it in $KAAS_SCRATCH/kafka with
#                      ARGS (scripts/peer-kafka start's); sets KAFKA_BROKER
#                      (and KAFKA_SASL with --sasl); stopped at exit
#                      whatever happens.
#                      A Kafka that cannot be fetched or started is a skip
#                      (77) outside CI and a failure under CI=true.
PEER_KAFKA="$KAAS_TOP_SRCDIR/scripts/peer-kafka"

peer_kafka_start() {
	command -v java >/dev/null 2>&1 || kaas_skip "java is not installed (scripts/setup installs openjdk-17-jre-headless)"
	command -v mvn >/dev/null 2>&1 || kaas_skip "mvn is not installed (scripts/setup installs maven)"
	# The fetch is its own step so that its failure says what it is.
	timeout 600 "$PEER_KAFKA" fetch >/dev/null ||
		kaas_skip "Apache Kafka could not be fetched from Maven Central (scripts/peer-kafka fetch)"
	local dir="$KAAS_SCRATCH/kafka" out
	kaas_on_exit "'$PEER_KAFKA' stop --dir '$dir' --quiet"
	out=$(timeout 180 "$PEER_KAFKA" start --dir "$dir" --heap "${KAAS_PEER_HEAP:-512m}" --same-group "$@") || {
		tail -n 40 "$dir/kafka.log" >&2 2>/dev/null
		kaas_fail "Apache Kafka did not start (scripts/peer-kafka start)"
	}
	KAFKA_BROKER="127.0.0.1:$(echo "$out" | sed -n 's/.* port \([0-9]*\).*/\1/p')"
	KAFKA_SASL="127.0.0.1:$(echo "$out" | sed -n 's/.* sasl_port \([0-9]*\).*/\1/p')"
	export KAFKA_BROKER KAFKA_SASL
}
