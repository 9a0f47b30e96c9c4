# tests/tools/kaasctl-admin-lib.sh — the README tour done with kaasctl's
# broker commands alone (kcat only produces and consumes), against any
# Kafka-protocol broker (sourced after tests/lib.sh).
#
#   admin_tour BOOTSTRAP OUT   run the tour against BOOTSTRAP, failing on
#                              any unexpected answer; write a summary of
#                              what the broker answered (no ids, leaders
#                              or cluster id: what kaas and Kafka must
#                              agree on) as JSON to OUT
#   admin_acl_tour BOOTSTRAP OUT [ARGS...]  the same for ACL bindings
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"
[ -x "$KAASCTL" ] || kaas_fail "no kaasctl binary at $KAASCTL"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed"

# adm RC ARGS...: kaasctl ARGS against $ADM_BOOT; fail unless it exits RC;
# stdout in $ADM_OUT, stderr in $ADM_ERR.
adm() {
	local want=$1 rc=0
	shift
	ADM_OUT=$(timeout 60 "$KAASCTL" --bootstrap "$ADM_BOOT" "$@" 2>"$KAAS_SCRATCH/adm.err") || rc=$?
	ADM_ERR=$(cat "$KAAS_SCRATCH/adm.err")
	if [ "$rc" != "$want" ]; then
		printf '%s\n' "$ADM_OUT" "$ADM_ERR" >&2
		kaas_fail "kaasctl --bootstrap $ADM_BOOT $*: exit $rc, expected $want"
	fi
}

# jq-like: python3 EXPR over $ADM_OUT as `d` (prints the result).
adm_py() {
	python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$ADM_OUT"
}

adm_err_name() { # the Kafka error name in $ADM_ERR
	sed -n 's/^kaasctl: .*: \([A-Z_][A-Z_]*\): .*/\1/p' <<<"$ADM_ERR" | head -n1
}

# admin_wait_state GROUP STATE MEMBERS: until describe says so (30 s).
admin_wait_state() {
	local i
	for i in $(seq 1 60); do
		adm 0 group describe "$1" --json
		[ "$(adm_py "d['state'] + ' ' + str(len(d['members']))")" = "$2 $3" ] && return 0
		sleep 0.5
	done
	printf '%s\n' "$ADM_OUT" >&2
	kaas_fail "group $1 never became $2 with $3 member(s)"
}

# admin_acl_tour BOOTSTRAP OUT [ARGS...]: ACL bindings added, listed (all,
# by resource, by principal), removed through BOOTSTRAP (kaasctl ARGS...
# before the command, e.g. --command-config FILE); a summary to OUT.
admin_acl_tour() {
	ADM_BOOT=$1
	local out=$2
	shift 2
	adm 0 "$@" acl add --principal User:erin --topic secret --operation read
	adm 0 "$@" acl add --principal User:erin --topic sec --prefixed --operation write --deny
	adm 0 "$@" acl add --principal User:frank --group g1 --operation read
	adm 0 "$@" acl list --json
	echo "acls $(adm_py "sorted((a['principal'], a['permission'], a['operation'], a['resource_type'], a['pattern_type'], a['resource_name'], a['host']) for a in d['acls'] if a['principal'] in ('User:erin', 'User:frank'))")" >>"$out"
	adm 0 "$@" acl list --topic secret --json
	echo "acls-secret $(adm_py "sorted((a['principal'], a['operation'], a['pattern_type']) for a in d['acls'])")" >>"$out"
	adm 0 "$@" acl list --principal User:frank
	grep -q "ALLOW User:frank  *READ  *GROUP  *LITERAL  *g1 " <<<"$ADM_OUT" || kaas_fail "acl list table: $ADM_OUT"
	adm 0 "$@" acl remove --principal User:erin --topic secret --operation read --json
	echo "acl-removed $(adm_py "d['removed']")" >>"$out"
	adm 0 "$@" acl remove --principal User:erin --topic sec --prefixed --operation write --deny
	adm 0 "$@" acl remove --principal User:frank --group g1 --operation read
	adm 0 "$@" acl list --principal User:erin
	[ "$ADM_OUT" = "no ACL bindings match" ] || kaas_fail "acl list after the removals: $ADM_OUT"
	adm 2 "$@" acl add --principal User:erin --topic x --operation frobnicate
}

admin_tour() {
	ADM_BOOT=$1
	local out=$2 s="$KAAS_SCRATCH/summary" i
	: >"$s"
	# a topic with 6 partitions and retention.ms, described
	adm 0 topic create tour --partitions 6 --config retention.ms=3600000
	adm 2 topic create tour --partitions 6
	echo "create-again $(adm_err_name)" >>"$s"
	adm 0 topic describe tour --json
	[ "$(adm_py "d['topics'][0]['partition_count']")" = 6 ] || kaas_fail "tour: not 6 partitions: $ADM_OUT"
	[ "$(adm_py "d['topics'][0]['configs']")" = "{'retention.ms': '3600000'}" ] ||
		kaas_fail "tour: configs $(adm_py "d['topics'][0]['configs']")"
	adm 0 topic describe tour
	grep -q "PartitionCount: 6  Configs: retention.ms=3600000" <<<"$ADM_OUT" || kaas_fail "describe table: $ADM_OUT"
	# configs altered: one set, one set then deleted; a bad key refused
	adm 0 topic alter-config tour --set retention.ms=7200000 --set retention.bytes=1073741824
	adm 0 topic alter-config tour --delete retention.bytes
	adm 0 topic describe tour --json
	echo "configs $(adm_py "sorted(d['topics'][0]['configs'].items())")" >>"$s"
	[ "$(adm_py "d['topics'][0]['configs']")" = "{'retention.ms': '7200000'}" ] ||
		kaas_fail "tour: configs after alter $(adm_py "d['topics'][0]['configs']")"
	adm 2 topic alter-config tour --set retenton.ms=5
	echo "bad-config $(adm_err_name)" >>"$s"
	# partitions added to another topic, which is then deleted
	adm 0 topic create tour2 --partitions 1
	adm 0 topic add-partitions tour2 2
	adm 0 topic describe tour2 --json
	echo "tour2-partitions $(adm_py "d['topics'][0]['partition_count']")" >>"$s"
	adm 0 topic delete tour2
	for i in $(seq 1 40); do # the deletion reaches every broker's metadata
		rc=0
		timeout 60 "$KAASCTL" --bootstrap "$ADM_BOOT" topic describe tour2 >/dev/null 2>"$KAAS_SCRATCH/adm.err" || rc=$?
		[ $rc = 2 ] && break
		sleep 0.5
	done
	ADM_ERR=$(cat "$KAAS_SCRATCH/adm.err")
	echo "deleted-describe $(adm_err_name)" >>"$s"
	adm 2 topic delete tour2
	echo "delete-again $(adm_err_name)" >>"$s"
	# produce (keyed: the same partitions on any broker) and consume as a group
	for i in $(seq 1 120); do echo "k$i:v$i"; done |
		timeout 60 kcat -b "$ADM_BOOT" -P -t tour -K: -X acks=all || kaas_fail "produce 120"
	local n
	n=$(timeout 90 kcat -b "$ADM_BOOT" -G tourgrp -X auto.offset.reset=earliest -e -q tour | wc -l)
	[ "$n" = 120 ] || kaas_fail "the group consumed $n records, not 120"
	for i in $(seq 121 150); do echo "k$i:v$i"; done |
		timeout 60 kcat -b "$ADM_BOOT" -P -t tour -K: -X acks=all || kaas_fail "produce 30"
	# the group described with lag: 120 committed, 30 behind
	adm 0 group describe tourgrp --json
	[ "$(adm_py "d['state']")" = Empty ] || kaas_fail "tourgrp: $(adm_py "d['state']")"
	[ "$(adm_py "sum(o['committed'] for o in d['offsets'])")" = 120 ] || kaas_fail "committed: $ADM_OUT"
	[ "$(adm_py "sum(o['lag'] for o in d['offsets'])")" = 30 ] || kaas_fail "lag: $ADM_OUT"
	[ "$(adm_py "all(o['committed'] + o['lag'] == o['log_end_offset'] for o in d['offsets'])")" = True ] ||
		kaas_fail "lag is not log end - committed: $ADM_OUT"
	echo "offsets $(adm_py "[(o['partition'], o['committed'], o['log_end_offset'], o['lag']) for o in d['offsets']]")" >>"$s"
	adm 0 group describe tourgrp
	grep -Eq '^tour +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ' <<<"$ADM_OUT" || kaas_fail "group table: $ADM_OUT"
	# a member: its assignment shown; offsets not reset under it
	timeout 120 kcat -b "$ADM_BOOT" -G tourgrp -q tour >/dev/null 2>&1 &
	local kpid=$!
	kaas_on_exit "kill $kpid"
	admin_wait_state tourgrp Stable 1
	[ "$(adm_py "sorted(p for m in d['members'] for a in m['assignment'] for p in a['partitions'])")" = "[0, 1, 2, 3, 4, 5]" ] ||
		kaas_fail "the member's assignment: $ADM_OUT"
	[ "$(adm_py "all(o['member_id'] == d['members'][0]['member_id'] for o in d['offsets'])")" = True ] ||
		kaas_fail "partitions without their member: $ADM_OUT"
	adm 2 group reset-offsets tourgrp --topic tour --to-earliest
	grep -q "Stable with 1 member" <<<"$ADM_ERR" || kaas_fail "reset under a member: $ADM_ERR"
	kill -TERM $kpid
	wait $kpid 2>/dev/null || true
	admin_wait_state tourgrp Empty 0
	# reset to earliest: every partition back to its log start, lag 150
	adm 0 group reset-offsets tourgrp --topic tour --to-offset 2 --dry-run --json
	[ "$(adm_py "sorted(set(o['offset'] for o in d['offsets']))")" = "[2]" ] || kaas_fail "dry run: $ADM_OUT"
	adm 0 group reset-offsets tourgrp --topic tour --to-earliest
	adm 0 group describe tourgrp --json
	[ "$(adm_py "sum(o['committed'] for o in d['offsets'])")" = 0 ] || kaas_fail "after reset: $ADM_OUT"
	[ "$(adm_py "sum(o['lag'] for o in d['offsets'])")" = 150 ] || kaas_fail "lag after reset: $ADM_OUT"
	echo "reset $(adm_py "[(o['partition'], o['committed'], o['lag']) for o in d['offsets']]")" >>"$s"
	adm 2 group reset-offsets tourgrp --topic nosuchtopic --to-earliest
	echo "reset-unknown-topic $(adm_err_name)" >>"$s"
	# deleted, and then unknown
	adm 0 group delete tourgrp
	adm 2 group delete tourgrp
	echo "group-delete-again $(adm_err_name)" >>"$s"
	adm 0 group describe tourgrp --json
	echo "deleted-group $(adm_py "(d['state'], d['offsets'])")" >>"$s"
	# the cluster
	adm 0 cluster describe --json
	[ "$(adm_py "len(d['brokers'])")" = 1 ] || kaas_fail "cluster: $ADM_OUT"
	[ "$(adm_py "d['controller'] >= 0")" = True ] || kaas_fail "no controller: $ADM_OUT"
	adm 0 topic delete tour
	cp "$s" "$out"
}
