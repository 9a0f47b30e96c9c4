#!/bin/bash
# ACLs (issue 17) made through one broker with kafka-python's admin client
# are enforced by another within a heartbeat or so, and removals likewise
# (tests/multibroker/acl_follow.py prints the delays); CreateAcls on both
# brokers at once loses and doubles nothing (one document per binding).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
/usr/bin/python3 -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
for id in 1 2; do mb_start "$id"; done
timeout 60 /usr/bin/python3 "$KAAS_TOP_SRCDIR/tests/multibroker/acl_follow.py" \
	"$(mb_bootstrap 1)" "$(mb_bootstrap 2)" "$MB_HEARTBEAT_MS" || kaas_fail "ACLs across brokers"
exit 0
