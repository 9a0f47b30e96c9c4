#!/bin/bash
# A coordinator that takes a group over answers its committed offsets even
# when its host holds a stale "no such name" for the group's directory
# (chaos seed 1, issue 33 follow-up).
#
# Three brokers on three faultfs host views of one volume (nfs-floor,
# negative lookup cache 60 s); broker 2 is the controller.  Before anything
# is committed, hosts 0 and 1 look groups/ up and are told it is missing —
# as a broker's own discovery and OffsetFetch do when they run before the
# first commit (broker 1 in chaos seed 1: it started before the group's
# first commit); the client keeps that answer (a negative dentry) until it
# revalidates the parent by opening or listing it, which a broker that is
# not the controller has no reason to do (the controller does: its
# assignment.json writes open the root to fsync it).  Broker 0 coordinates
# a few groups, commits offset 42 in each and is killed; brokers 1 and 2
# take its slots over.  Every OffsetFetch must answer 42.  On 7229f3f
# (failed 8 of 9 runs here; the other passed, something having revalidated
# the root on host 1 first) broker 1 answered -1 (no offset) for each
# group it took over:
# kaas_group_has_state and the takeover's discovery took the cached ENOENT
# of a lookup by name for "never committed", and a consumer started again
# from the beginning (chaos: commit_backwards).  A fetch of a name nobody
# committed to still makes nothing.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
echo '{"profile": "nfs-floor", "neg_timeout_ms": 60000}' >"$KAAS_SCRATCH/cfg.json"
ffs_start gn 3 --seed 11 --config "$KAAS_SCRATCH/cfg.json"
MB_HOSTS_DIR=$M
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
OFF="$MB_OFFSETS_RAW"
[ -x "$OFF" ] || kaas_fail "no offsets_raw at $OFF"

mb_start 2
kaas_wait_for 10 grep -q "controller with epoch" "$KAAS_SCRATCH/kaasd.2.1.log" ||
	kaas_fail "broker 2 did not become the controller"
mb_start 0
mb_start 1
"$MBCLIENT" create "$(mb_bootstrap)" gt 1 || kaas_fail "create topic gt"
mb_wait_led 20 gt 1 2 0 1 2 || kaas_fail "gt/0 has no leader"

# Groups broker 0 coordinates (nothing committed yet: fetching makes
# nothing), enough to cover its slots: they go to the less loaded of 1 and
# 2 one by one, so some reach broker 1.  The slots balanced first.
sleep 2
groups=()
for i in $(seq 0 150); do
	[ "$(mb_coordinator "neg$i")" = 0 ] && groups+=("neg$i")
	[ ${#groups[@]} -ge 20 ] && break
done
[ ${#groups[@]} -ge 4 ] || kaas_fail "only ${#groups[@]} group names coordinated by broker 0"
[ ! -e "$FFS_LOWER/__cluster/groups" ] || kaas_fail "fetches made __cluster/groups"

# Hosts 0 and 1 look groups/ up before it exists: a cached ENOENT.
for h in 0 1; do
	stat "$M/host$h/__cluster/groups" >/dev/null 2>&1 && kaas_fail "groups/ exists before a commit"
done
committed=()
for g in "${groups[@]}"; do
	out=$("$OFF" "127.0.0.1:${MB_PORT[0]}" commit "$g" gt 0 42) || kaas_fail "commit $g through broker 0"
	[ "$out" = 16 ] && continue # NOT_COORDINATOR: its slot moved meanwhile
	[ "$out" = 0 ] || kaas_fail "commit of $g through broker 0 answered $out"
	[ -d "$FFS_LOWER/__cluster/groups/$g" ] || kaas_fail "the commit made no groups/$g"
	committed+=("$g")
done
[ ${#committed[@]} -ge 4 ] || kaas_fail "only ${#committed[@]} groups committed through broker 0"
groups=("${committed[@]}")
# Informational: broker 1 itself may have revalidated (the fixed code does
# when its own lookup says "missing", e.g. a discovery after a slot move).
if stat "$M/host1/__cluster/groups" >/dev/null 2>&1; then
	echo "note: host 1 already sees groups/ (revalidated before the takeover)"
else
	echo "ok: host 1 still holds its cached \"no such name\" for groups/"
fi

# Broker 0 dies; brokers 1 and 2 take its slots over and must answer 42.
mb_kill 0
on1=0 bad=
for g in "${groups[@]}"; do
	got= by=
	for i in $(seq 1 150); do
		for b in 1 2; do
			got=$("$OFF" "127.0.0.1:${MB_PORT[$b]}" fetch "$g" gt 0 2>/dev/null) || got=
			case $got in *" 0") by=$b; break 2 ;; esac
		done
		sleep 0.1
	done
	[ -n "$by" ] || { tail -n 30 "$KAAS_SCRATCH"/kaasd.[12].1.log >&2; kaas_fail "nobody coordinates $g"; }
	echo "$g: broker $by fetched $got"
	[ "$by" = 1 ] && on1=$((on1 + 1))
	[ "$got" = "42 0" ] || bad="$bad $g(broker $by: $got)"
done
[ -z "$bad" ] || { tail -n 30 "$KAAS_SCRATCH"/kaasd.1.1.log >&2; kaas_fail "after the takeover, committed offsets answered as absent or older:$bad"; }
[ $on1 -gt 0 ] || kaas_skip "broker 1 took none of the groups over: the stale lookup was not exercised"
echo "ok: $on1 group(s) taken over by broker 1 fetched 42"

# A name nobody committed to, looked up by host 1 before: still nothing made.
n=
for i in $(seq 0 60); do
	[ "$(mb_coordinator "never$i")" = 1 ] && { n=never$i; break; }
done
[ -n "$n" ] || kaas_fail "no group name coordinated by broker 1"
stat "$M/host1/__cluster/groups/$n" >/dev/null 2>&1 && kaas_fail "groups/$n exists"
out=$("$OFF" "127.0.0.1:${MB_PORT[1]}" fetch "$n" gt 0) || kaas_fail "fetch $n"
[ "$out" = "-1 0" ] || kaas_fail "fetch of $n answered '$out'"
[ ! -e "$FFS_LOWER/__cluster/groups/$n" ] || kaas_fail "a fetch of $n made groups/$n"
echo PASS
