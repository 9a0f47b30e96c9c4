#!/bin/bash
# A broker that lost the reply to its fence claim asks the controller, on
# another broker, for a new epoch (issue 33, defect 6).
#
# Two brokers on two faultfs host views of one volume; broker 0 is the
# controller.  A rule on host 1 only loses the reply of the first exclusive
# create of a partition fence claim of topic lm (4 partitions): that claim
# exists, empty, and broker 1 is told EEXIST.  Broker 1 must put the epoch
# in its brokers/1.json (lost_epochs), broker 0 must hand it the partition
# again at a new epoch, and every partition must take a record within 20 s.
# On the old code the partition answered NOT_LEADER_OR_FOLLOWER for good
# (tests/kafka/fence_lost_reply.sh shows it on one broker).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
ffs_start lm 2 --seed 5
MB_HOSTS_DIR=$M
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
ffs_ctl set '{"op":"create","path":"lm/*/fence/epoch-*","host":1,"times":1,"fault":"lost_reply"}' >/dev/null
mb_start 0
kaas_wait_for 10 grep -q "controller with epoch" "$KAAS_SCRATCH/kaasd.0.1.log" ||
	kaas_fail "broker 0 did not become the controller"
mb_start 1
"$MBCLIENT" create "$(mb_bootstrap)" lm 4 || kaas_fail "create topic lm"
mb_wait_led 20 lm 4 0 0 1 ||
	{ tail -n 20 "$KAAS_SCRATCH"/kaasd.*.log >&2; kaas_fail "lm has a partition without a leader"; }
for p in 0 1 2 3; do
	echo "r$p" | timeout 60 kcat -b "$(mb_bootstrap)" -P -t lm -p "$p" -X message.timeout.ms=20000 \
		-X retry.backoff.ms=250 ||
		{ tail -n 30 "$KAAS_SCRATCH"/kaasd.*.log >&2; kaas_fail "lm/$p took no record within 20 s"; }
done
grep -q '"path":"lm/[0-9]*/fence/epoch-[0-9]*","fault":"lost_reply"' "$M/.faultfs-events.jsonl" ||
	kaas_fail "the lost_reply rule never fired"
grep -q "epoch [0-9]* of lm/[0-9]* cannot be claimed (lost)" "$KAAS_SCRATCH/kaasd.1.1.log" ||
	{ cat "$KAAS_SCRATCH/kaasd.1.1.log" >&2; kaas_fail "broker 1 did not report its lost epoch"; }
grep -q "broker 1 cannot claim epoch [0-9]* of lm/[0-9]* (lost); handing it a new epoch" \
	"$KAAS_SCRATCH/kaasd.0.1.log" ||
	{ cat "$KAAS_SCRATCH/kaasd.0.1.log" >&2; kaas_fail "the controller did not hand out a new epoch"; }
for p in 0 1 2 3; do
	got=$(timeout 30 kcat -b "$(mb_bootstrap)" -C -t lm -p "$p" -o beginning -e -q -f '%s\n' 2>/dev/null)
	[ "$got" = "r$p" ] || kaas_fail "lm/$p holds '$got', not r$p"
done
echo PASS
