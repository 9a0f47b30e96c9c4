#!/bin/bash
# After a coordinator failover (issue 33), a group with committed offsets
# that nobody touched since is Empty in DescribeGroups and listed by
# ListGroups on the survivor, as Kafka's coordinator loads an offsets
# partition's groups when it takes it over (it was Dead and missing until
# something touched it).  Then the same after the survivor's own restart
# alone on the volume, and a group deleted before the restart is Dead and
# not listed.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
gs() { timeout 120 $PY "$KAAS_TOP_SRCDIR/tests/multibroker/group_state.py" "$@"; }
GROUPS_ALL="ga gb gc gd ge gf gg gh"

for id in 0 1; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" gt 1 || kaas_fail "create topic"
mb_wait_led 20 gt 1 0 0 1 || kaas_fail "gt/0 has no leader"
seq 0 9 | timeout 30 kcat -b "$(mb_bootstrap)" -P -t gt -p 0 || kaas_fail "produce"
gs commit "$(mb_bootstrap)" gt $GROUPS_ALL || kaas_fail "commit"

# The coordinator of ga dies; the survivor takes every slot over.
coord=$(mb_coordinator ga)
[ -n "$coord" ] || kaas_fail "no coordinator for ga"
other=$((1 - coord))
mb_kill "$coord"
gs check "127.0.0.1:${MB_PORT[$other]}" "$other" Empty $GROUPS_ALL ||
	{ tail -n 30 "$KAAS_SCRATCH"/kaasd."$other".*.log >&2; kaas_fail "after the failover"; }

# Delete gh (DeleteGroups through kafka-python), then restart the survivor
# alone: the other groups are Empty and listed, gh is Dead and not listed.
timeout 60 $PY - "127.0.0.1:${MB_PORT[$other]}" <<'PY' || kaas_fail "delete gh"
import sys
from kafka.admin import KafkaAdminClient
res = KafkaAdminClient(bootstrap_servers=sys.argv[1]).delete_consumer_groups(["gh"])
err = res[0][1].errno if res[0][1] is not None else 0
if err:
    sys.exit("deleting gh: %s" % (res[0][1],))
PY
mb_kill "$other" TERM
wait "${MB_PID[$other]}" 2>/dev/null || true
unset "MB_PID[$other]"
mb_start "$other"
gs check "127.0.0.1:${MB_PORT[$other]}" "$other" Empty ga gb gc gd ge gf ||
	kaas_fail "after the survivor's restart"
gs check "127.0.0.1:${MB_PORT[$other]}" "$other" Dead gh || kaas_fail "gh after its delete and a restart"
echo PASS
