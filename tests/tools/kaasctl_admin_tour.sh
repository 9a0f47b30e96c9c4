#!/usr/bin/env bash
# The README tour with kaasctl's broker commands alone (issue 39): a topic
# with 6 partitions and retention.ms created and described, configs altered,
# partitions added and a topic deleted, records produced and consumed as a
# group with kcat, the group described with lag, its offsets refused a
# reset while it has a member and reset to earliest once empty, the group
# deleted; every refusal is the broker's error named (TOPIC_ALREADY_EXISTS,
# INVALID_CONFIG, ...) with exit 2.  Then the usage exits: no arguments, an
# unreachable broker, TLS to a PLAINTEXT listener, an unknown
# security.protocol; an empty acl list
# and user list --json; every broker command documented in KAASCTL.md.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
kaasd_start
admin_tour "$BROKER" "$KAAS_SCRATCH/kaas.summary"
cat "$KAAS_SCRATCH/kaas.summary"
grep -qx "create-again TOPIC_ALREADY_EXISTS" "$KAAS_SCRATCH/kaas.summary" || kaas_fail "create again"
grep -qx "bad-config INVALID_CONFIG" "$KAAS_SCRATCH/kaas.summary" || kaas_fail "bad config"
grep -qx "tour2-partitions 3" "$KAAS_SCRATCH/kaas.summary" || kaas_fail "add-partitions"
grep -qx "deleted-describe UNKNOWN_TOPIC_OR_PARTITION" "$KAAS_SCRATCH/kaas.summary" || kaas_fail "deleted topic"
grep -qx "group-delete-again GROUP_ID_NOT_FOUND" "$KAAS_SCRATCH/kaas.summary" || kaas_fail "group delete again"

# usage and connection failures: exit 2 with a message
rc=0
timeout 10 "$KAASCTL" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || kaas_fail "kaasctl without arguments exits $rc, not 2"
ADM_BOOT=127.0.0.1:1
adm 2 topic list
grep -q "cannot connect" <<<"$ADM_ERR" || kaas_fail "unreachable: $ADM_ERR"
printf 'security.protocol=SSL\n' >"$KAAS_SCRATCH/ssl.properties"
ADM_BOOT=$BROKER
adm 2 --command-config "$KAAS_SCRATCH/ssl.properties" topic list
grep -q "TLS: handshake failed" <<<"$ADM_ERR" || kaas_fail "SSL to a PLAINTEXT listener: $ADM_ERR"
printf 'security.protocol=SASL_OAUTH\n' >"$KAAS_SCRATCH/bad.properties"
adm 2 --command-config "$KAAS_SCRATCH/bad.properties" topic list
grep -q "security.protocol SASL_OAUTH" <<<"$ADM_ERR" || kaas_fail "bad protocol: $ADM_ERR"
adm 2 topic frobnicate
adm 2 group describe
kaasd_stop

# the volume commands' polish (issue 39, point 6): an empty acl list says
# so; user list --json is an object
out=$(timeout 30 "$KAASCTL" --data "$KAAS_SCRATCH/data" acl list) || kaas_fail "acl list"
[ "$out" = "no ACL bindings" ] || kaas_fail "empty acl list: '$out'"
out=$(timeout 30 "$KAASCTL" --data "$KAAS_SCRATCH/data" user list --json) || kaas_fail "user list"
[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin))' <<<"$out")" = "{'users': []}" ] ||
	kaas_fail "user list --json: $out"

# docs/KAASCTL.md documents every broker command kaasctl --help lists
n=0
while read -r cmd sub; do
	n=$((n + 1))
	grep -qF "\`$cmd $sub" "$KAAS_TOP_SRCDIR/docs/KAASCTL.md" ||
		kaas_fail "docs/KAASCTL.md does not document 'kaasctl $cmd $sub'"
done < <("$KAASCTL" --help | sed -n 's/^  \(topic\|group\|cluster\|txn\) \([a-z-]*\).*/\1 \2/p')
[ "$n" -ge 12 ] || kaas_fail "kaasctl --help lists $n broker commands"
echo "kaasctl admin tour: ok"
