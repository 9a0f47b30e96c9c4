#!/bin/bash
# An exclusive create of a fence claim that succeeded but was answered
# EEXIST (a lost reply, NFS's non-idempotent retransmit) does not leave the
# partition or the group unserved (issue 33, defect 6).
#
# The in-process fault model (fault+ data URL; the cluster view is a second
# model with the same rules) loses the reply of the first exclusive create
# of topic lost's partition 0 fence claim, and of the first two in group
# lg's and transactional id ltx's coordinator fences (the first may be a
# skipped epoch below the slot's, whose EEXIST is fine): each claim file
# exists, empty, and its creator is told EEXIST.  The broker must come to
# serve all three (under a new epoch: nobody can tell whose the empty
# claim is): a produce, a group's commits and a transaction succeed, and
# the records are read back.  Before the fix the claim's
# EEXIST was "someone else owns this epoch", the log failed for good
# (KAAS_LOG_EFENCED is final) and nothing asked for a new epoch: produce
# answered NOT_LEADER_OR_FOLLOWER while Metadata named this broker, for
# good, and the group and the transactional id answered NOT_COORDINATOR.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/txn/txn-lib.sh"
kaas_scratch
vol="$KAAS_SCRATCH/vol"
mkdir -p "$vol"

cat >"$KAAS_SCRATCH/rules.json" <<'EOF'
{"rules":[{"op":"create","path":"lost/0/fence/epoch-*","times":1,"fault":"lost_reply"},
          {"op":"create","path":"groups/lg/fence/epoch-*","times":2,"fault":"lost_reply"},
          {"op":"create","path":"txns/ltx/fence/epoch-*","times":2,"fault":"lost_reply"}]}
EOF
kaasd_start --num-partitions 2 --data "fault+$vol?seed=1&config=$KAAS_SCRATCH/rules.json"

# The produce auto-creates the topic; the first open of partition 0 loses
# its claim's reply.  librdkafka retries NOT_LEADER for message.timeout.ms.
start=$SECONDS
echo a | kc -P -t lost -p 0 -X message.timeout.ms=20000 -X retry.backoff.ms=250 ||
	{ tail -n 30 "$KAASD_LOG" >&2; kaas_fail "lost/0 was not served within 20 s of a lost reply on its fence claim"; }
echo "lost/0 served $((SECONDS - start)) s after the first produce"
grep -q "lost/0/fence: epoch 1 is not ours: its exclusive create answered EEXIST; its claim records no owner" "$KAASD_LOG" ||
	{ cat "$KAASD_LOG" >&2; kaas_fail "the lost_reply rule on the partition's fence never fired"; }
echo b | kc -P -t lost -p 0 -X message.timeout.ms=10000 ||
	{ tail -n 20 "$KAASD_LOG" >&2; kaas_fail "produce of the next record"; }
kc -C -t lost -p 0 -o beginning -e -f '%s\n' 2>/dev/null >"$KAAS_SCRATCH/got.txt"
printf 'a\nb\n' | cmp -s - "$KAAS_SCRATCH/got.txt" ||
	{ cat "$KAAS_SCRATCH/got.txt" >&2; kaas_fail "lost/0 does not hold a b exactly once"; }

# The group: a member reads both records and commits (automatically, and
# at close); its coordinator's first fence claim, made for the first
# commit, loses its reply.  A second member of the group then starts from
# the committed offsets and reads nothing.
start=$SECONDS
timeout 40 kcat -b "$BROKER" -G lg -X auto.offset.reset=earliest -X auto.commit.interval.ms=200 \
	-X session.timeout.ms=6000 -e -f '%s\n' lost >"$KAAS_SCRATCH/group.txt" 2>"$KAAS_SCRATCH/group.err" || true
grep -c . "$KAAS_SCRATCH/group.txt" | grep -qx 2 ||
	{ cat "$KAAS_SCRATCH/group.err" >&2; tail -n 30 "$KAASD_LOG" >&2;
	  kaas_fail "group lg's first member did not read a b"; }
grep -q "epoch [0-9]* of __coordinator/[0-9]* cannot be claimed (lost)" "$KAASD_LOG" ||
	{ cat "$KAASD_LOG" >&2; kaas_fail "the lost_reply rule on the group's fence never fired"; }
for i in $(seq 1 20); do
	timeout 40 kcat -b "$BROKER" -G lg -X auto.offset.reset=earliest -X session.timeout.ms=6000 \
		-e -f '%s\n' lost >"$KAAS_SCRATCH/group2.txt" 2>"$KAAS_SCRATCH/group2.err" || true
	[ -s "$KAAS_SCRATCH/group2.txt" ] || break
	sleep 1
done
[ -s "$KAAS_SCRATCH/group2.txt" ] &&
	{ cat "$KAAS_SCRATCH/group2.txt" "$KAAS_SCRATCH/group.err" >&2; tail -n 30 "$KAASD_LOG" >&2;
	  kaas_fail "group lg's commits were not served after a lost reply on its coordinator's fence claim"; }
echo "group lg served $((SECONDS - start)) s after its first commit"

# The transactional id: InitProducerId takes it over (its fence claim
# loses its reply), then a transaction over ltxa and ltxb commits.
start=$SECONDS
out=$(txn_client "$BROKER" ltx commit ltxa ltxb t1 2>"$KAAS_SCRATCH/txn.err") ||
	{ tail -n 30 "$KAASD_LOG" >&2; cat "$KAAS_SCRATCH/txn.err" >&2; kaas_fail "transactional id ltx was not served: $out"; }
[ "$out" = ok ] || kaas_fail "transaction over ltx: $out"
grep -q "transactional id ltx: cannot take over at epoch [0-9]*: fenced" "$KAASD_LOG" ||
	{ cat "$KAASD_LOG" >&2; kaas_fail "the lost_reply rule on the transactional id's fence never fired"; }
echo "transactional id ltx served $((SECONDS - start)) s after its first request"
[ "$(txn_read "$BROKER" read_committed ltxa ltxb | wc -l)" -gt 0 ] ||
	kaas_fail "read_committed does not see the committed transaction"
kaasd_stop
echo "PASS"
