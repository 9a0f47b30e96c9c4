#!/bin/bash
# Client quotas (issue 35): two brokers on one volume; a producer_byte_rate
# set through broker 1 throttles a producer on broker 2 within a heartbeat
# or so, broker 2 describes it, and its removal through broker 1 stops the
# throttling on broker 2 as soon (quotas.py follow prints the delays).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
command -v python3 >/dev/null || kaas_skip "no python3"
MB_HEARTBEAT_MS=250
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
for id in 1 2; do mb_start "$id"; done
timeout 90 python3 "$KAAS_TOP_SRCDIR/tests/security/quotas.py" follow \
	"127.0.0.1:${MB_PORT[1]}" "127.0.0.1:${MB_PORT[2]}" "$MB_HEARTBEAT_MS" ||
	kaas_fail "a quota followed by the other broker"
exit 0
