#!/usr/bin/env bash
# kaasctl's broker commands over SASL_PLAINTEXT (issue 39), with the
# settings of a Kafka --command-config file: SCRAM-SHA-256 from
# sasl.jaas.config, SCRAM-SHA-512 from sasl.username/sasl.password, PLAIN;
# a wrong password is SASL_AUTHENTICATION_FAILED (exit 2), an unknown
# mechanism and a JKS truststore are refused before connecting.  Then a user
# added, listed and deleted through the broker (user ... with --bootstrap),
# and ACL bindings added, listed and removed (acl ... with --bootstrap).  Users made with
# kaasctl user add before kaasd starts.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/tools/kaasctl-admin-lib.sh"
set -e
D="$KAAS_SCRATCH/data"
mkdir -p "$D/__cluster"
echo secret1 | timeout 30 "$KAASCTL" --data "$D" user add alice --mechanism SCRAM-SHA-256 >/dev/null
echo secret2 | timeout 30 "$KAASCTL" --data "$D" user add bob --mechanism SCRAM-SHA-512 >/dev/null
printf '%s\n' "listeners = SASL://127.0.0.1:0" "listener.security.protocol.map = SASL:SASL_PLAINTEXT" \
	"sasl.enabled.mechanisms = PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" \
	"allow.everyone.if.no.acl.found = true" >"$KAAS_SCRATCH/kaas.conf"
KAASD_LOG="$KAAS_SCRATCH/kaasd.log"
"$KAASD" --data "$D" --config "$KAAS_SCRATCH/kaas.conf" --group-initial-rebalance-delay-ms 0 \
	2>"$KAASD_LOG" &
KAASD_PID=$!
kaas_on_exit "kill -9 $KAASD_PID"
kaas_wait_for 20 grep -q "listening on" "$KAASD_LOG" || { cat "$KAASD_LOG" >&2; kaas_fail "kaasd did not start"; }
ADM_BOOT="127.0.0.1:$(sed -n 's/.* listener SASL ([A-Z_]*) on [^ ]*:\([0-9]*\),.*/\1/p' "$KAASD_LOG" | head -n1)"

P="$KAAS_SCRATCH"
printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=SCRAM-SHA-256" \
	'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="secret1";' >"$P/a.properties"
printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=SCRAM-SHA-512" \
	"sasl.username=bob" "sasl.password=secret2" >"$P/b.properties"
printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=PLAIN" \
	'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="secret1";' >"$P/p.properties"
printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=SCRAM-SHA-256" \
	"sasl.username=alice" "sasl.password=wrong" >"$P/w.properties"
printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=GSSAPI" >"$P/g.properties"
printf '%s\n' "security.protocol=SASL_SSL" "sasl.mechanism=PLAIN" \
	"ssl.truststore.location=/nonexistent.jks" >"$P/t.properties"

adm 0 --command-config "$P/a.properties" topic create sasltopic --partitions 2
adm 0 --command-config "$P/b.properties" topic describe sasltopic --json
[ "$(adm_py "d['topics'][0]['partition_count']")" = 2 ] || kaas_fail "describe over SCRAM-SHA-512: $ADM_OUT"
adm 0 --command-config "$P/p.properties" cluster describe --json
[ "$(adm_py "d['brokers'][0]['port']")" = "${ADM_BOOT##*:}" ] || kaas_fail "cluster over PLAIN: $ADM_OUT"
adm 2 --command-config "$P/w.properties" topic list
grep -q "SASL_AUTHENTICATION_FAILED" <<<"$ADM_ERR" || kaas_fail "wrong password: $ADM_ERR"
adm 2 --command-config "$P/g.properties" topic list
grep -q "sasl.mechanism GSSAPI" <<<"$ADM_ERR" || kaas_fail "GSSAPI: $ADM_ERR"
adm 2 --command-config "$P/t.properties" topic list
grep -q "JKS truststore" <<<"$ADM_ERR" || kaas_fail "SASL_SSL with a JKS truststore: $ADM_ERR"
adm 0 --command-config "$P/a.properties" topic delete sasltopic

# users through the broker (AlterUserScramCredentials, DescribeUser...):
# carol added, listed, logs in, deleted, refused
echo secret3 | adm 0 --command-config "$P/a.properties" user add carol --mechanism SCRAM-SHA-256 --iterations 4096
adm 0 --command-config "$P/a.properties" user list --json
[ "$(adm_py "sorted((u['user'], u['mechanism'], u['iterations']) for u in d['users'])")" = \
	"[('alice', 'SCRAM-SHA-256', 8192), ('bob', 'SCRAM-SHA-512', 8192), ('carol', 'SCRAM-SHA-256', 4096)]" ] ||
	kaas_fail "user list through the broker: $ADM_OUT"
printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=SCRAM-SHA-256" \
	"sasl.username=carol" "sasl.password=secret3" >"$P/c.properties"
adm 0 --command-config "$P/c.properties" topic list
adm 0 --command-config "$P/a.properties" user delete carol
for i in $(seq 1 50); do # brokers re-read a credential within a heartbeat
	rc=0
	timeout 30 "$KAASCTL" --bootstrap "$ADM_BOOT" --command-config "$P/c.properties" topic list \
		>/dev/null 2>&1 || rc=$?
	[ $rc = 2 ] && break
	sleep 0.2
done
[ $rc = 2 ] || kaas_fail "carol still logs in after her deletion"
adm 2 --command-config "$P/a.properties" user delete carol
echo "delete again: $ADM_ERR"

# ACL bindings through the broker (acl ... with --bootstrap), as alice
admin_acl_tour "$ADM_BOOT" "$KAAS_SCRATCH/acl.summary" --command-config "$P/a.properties"
cat "$KAAS_SCRATCH/acl.summary"
kaasd_stop
echo "kaasctl over SASL: ok"
