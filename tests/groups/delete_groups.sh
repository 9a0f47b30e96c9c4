#!/bin/bash
# DeleteGroups and OffsetDelete (issue 15): a group with members is
# NON_EMPTY_GROUP, a topic a member subscribes to is GROUP_SUBSCRIBED_TO_TOPIC,
# a deleted group is gone from ListGroups and OffsetFetch (durably: after a
# restart too), an unknown one is GROUP_ID_NOT_FOUND; OffsetDelete erases
# only the partitions named.  Issue 33: a deleted group, and one that never
# existed, describe as Dead and are listed neither by ListGroups nor by
# kaasctl groups (before and after a restart); DeleteGroups, OffsetDelete
# and OffsetFetch of a group that never existed make no groups/<name>/.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
PY=/usr/bin/python3
$PY -c 'import kafka' 2>/dev/null || kaas_skip "python3-kafka (kafka-python) is not installed"
kaas_scratch
kaasd_start --num-partitions 2
step() { timeout 90 $PY "$KAAS_TOP_SRCDIR/tests/groups/delete_groups.py" "$BROKER" "$1" || kaas_fail "step $1"; }
step setup
step delete
kaasd_stop
kaasd_start --num-partitions 2
step after-restart
kaasd_stop
echo "delete groups and offsets: all good"
