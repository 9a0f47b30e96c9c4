#!/bin/bash
# Delete and re-create a topic 20 times (MB_GENERATIONS; 8 in the sanitizer
# suite, each of the four modes twice) under load (an idempotent producer
# on another topic all along),
# each broker on its own faultfs host view, the deletes interrupted at
# random steps.  In turn: no fault; EIO on every rename, unlink and rmdir
# of the topic's files from the deleting broker's host (the controller:
# admin requests go there) from its Nth such op (N random) for a random
# moment; the deleting broker SIGKILLed by faultfs at its Nth
# rename/unlink/rmdir of the topic's files (N random); kill -9 after a
# random delay (then restarted).  A delete that did not take is issued
# again, as a client would.  Each incarnation shows exactly its own
# messages, never an earlier one's; .trash empties once the faults stop;
# every acknowledged message of the load topic is there, in order.
#   MB_SEED=N reproduces a run's random choices.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/faultfs/fuse_lib.sh"
ffs_require_fuse
ffs_start rf 3 --seed 20
MB_HOSTS_DIR=$M
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/multibroker/check_acked.sh"
S=$KAAS_SCRATCH
: "${MB_SEED:=$$}"
RANDOM=$MB_SEED
: "${MB_GENERATIONS:=$([ -n "${KAAS_SANITIZERS:-}" ] && echo 8 || echo 20)}"
echo "seed $MB_SEED, $MB_GENERATIONS generations"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" load 1 || kaas_fail "create the load topic"
mb_wait_led 20 load 1 0 0 1 2 || kaas_fail "load/0 has no leader"
ACKS=$S/acks.txt
: >"$ACKS"
"$MBCLIENT" produce --idempotent "$(mb_bootstrap)" load 1000000 "$ACKS" 2000 2>"$S/producer.log" &
PROD=$!
kaas_on_exit "kill -9 $PROD"

lists_dr() { timeout 10 kcat -b "127.0.0.1:${MB_PORT[$1]}" -L 2>/dev/null | grep -q 'topic "dr"'; }
# Restart a broker faultfs or the test killed.
revive() {
	local id=$1
	if [ -n "${MB_PID[$id]:-}" ] && ! kill -0 "${MB_PID[$id]}" 2>/dev/null; then
		wait "${MB_PID[$id]}" 2>/dev/null
		unset "MB_PID[$id]"
	fi
	[ -n "${MB_PID[$id]:-}" ] || { mb_start "$id"; echo "  broker $id restarted"; }
}
rule() { # rule JSON -> id
	ffs_ctl set "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'
}
FILES_OPS='"op":"rename,unlink,rmdir","path":"*dr*"'
# The DeleteTopics client in the background; reaped once it answered or
# the deleting broker died (its answer then never comes), bounded.
delete_bg() {
	"$MBCLIENT" delete "127.0.0.1:${MB_PORT[$del]}" dr 2>/dev/null &
	DPID=$!
}
delete_reap() {
	local i
	for i in $(seq 1 300); do
		kill -0 $DPID 2>/dev/null && kill -0 "${MB_PID[$del]:-none}" 2>/dev/null || break
		sleep 0.1
	done
	kill $DPID 2>/dev/null
	wait $DPID 2>/dev/null
}

for gen in $(seq 1 "$MB_GENERATIONS"); do
	via=$((gen % 3)) mode=$((gen % 4))
	T0=$(mb_now_ms)
	ok=
	for i in $(seq 1 60); do
		"$MBCLIENT" create "127.0.0.1:${MB_PORT[$via]}" dr 2 2>"$S/admin.log" && { ok=1; break; }
		grep -q "being deleted\|already exists\|unreadable" "$S/admin.log" || { cat "$S/admin.log" >&2; kaas_fail "generation $gen: create"; }
		sleep 0.5
	done
	[ -n "$ok" ] || kaas_fail "generation $gen: the name never became free"
	# Every broker lists it with its leaders (a broker that has not picked
	# the new topic up yet answers UNKNOWN_TOPIC_OR_PARTITION, on which
	# kcat -e gives up).
	mb_wait_led 20 dr 2 0 0 1 2 & w0=$!
	mb_wait_led 20 dr 2 1 0 1 2 & w1=$!
	mb_wait_led 20 dr 2 2 0 1 2 & w2=$!
	for w in $w0 $w1 $w2; do wait $w || kaas_fail "generation $gen: not led in every broker's metadata"; done
	T1=$(mb_now_ms)
	# 40 messages spread over both partitions by the client; one consumer
	# reads both back: exactly this incarnation's, each partition in order.
	# Idempotent: a retry after a leader move (the brokers restarted by
	# the last generation rejoin now) is never written twice, so any extra
	# or missing line is the incarnation's fault, not the client's.
	seq 1 40 | sed "s/^/g$gen-/" | timeout 60 kcat -b "$(mb_bootstrap)" -P -t dr -X acks=all \
		-X enable.idempotence=true ||
		kaas_fail "generation $gen: produce"
	timeout 60 kcat -b "$(mb_bootstrap)" -C -t dr -o beginning -e -f '%p %s\n' \
		>"$S/got.txt" 2>"$S/consume.err" || { tail -n 5 "$S/consume.err" >&2; kaas_fail "generation $gen: consume"; }
	seq 1 40 | sed "s/^/g$gen-/" >"$S/want.txt"
	cut -d' ' -f2 "$S/got.txt" | sort | cmp -s - <(sort "$S/want.txt") ||
		{ diff <(cut -d' ' -f2 "$S/got.txt" | sort) <(sort "$S/want.txt") | head -n 10 >&2
		  kaas_fail "generation $gen: not exactly this incarnation's messages (< read, > produced)"; }
	awk '{ split($2, f, "-"); if (f[2] + 0 <= last[$1]) bad = 1; last[$1] = f[2] + 0 } END { exit bad }' "$S/got.txt" ||
		kaas_fail "generation $gen: a partition out of order"
	T2=$(mb_now_ms)
	# DeleteTopics goes to the controller (librdkafka sends admin
	# requests there): that broker does the delete.
	# (right after a broker restart the controller may be being elected:
	# Metadata names none for a moment; 10 s at most)
	del=
	for _ in $(seq 1 100); do
		del=$(mb_controller)
		[ -n "$del" ] && [ "$del" -ge 0 ] && break
		sleep 0.1
	done
	[ -n "$del" ] && [ "$del" -ge 0 ] || kaas_fail "generation $gen: no controller in 10 s"
	case $mode in
	0)	what="no fault"
		"$MBCLIENT" delete "127.0.0.1:${MB_PORT[$del]}" dr 2>/dev/null ;;
	1)	ms=$((50 + RANDOM % 600)) n=$((RANDOM % 6))
		what="EIO on host $del from its op $n on the topic's files for $ms ms"
		id=$(rule "{$FILES_OPS,\"host\":$del,\"prob\":1,\"after\":$n,\"times\":-1,\"fault\":\"EIO\"}")
		[ -n "$id" ] || kaas_fail "faultfs rule"
		delete_bg
		sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
		ffs_ctl clear "$id" >/dev/null
		delete_reap ;;
	2)	n=$((RANDOM % 6))
		what="faultfs kills broker $del at its op $n on the topic's files"
		id=$(rule "{$FILES_OPS,\"host\":$del,\"prob\":1,\"after\":$n,\"times\":1,\"fault\":\"kill\"}")
		[ -n "$id" ] || kaas_fail "faultfs rule"
		delete_bg
		delete_reap
		ffs_ctl clear "$id" >/dev/null ;;
	3)	ms=$((RANDOM % 900))
		what="kill -9 of broker $del after $ms ms"
		delete_bg
		sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
		mb_kill "$del"
		delete_reap ;;
	esac
	kill -0 "${MB_PID[$del]:-none}" 2>/dev/null || what="$what (killed)"
	for id in 0 1 2; do revive $id; done
	# Until no broker lists it; a delete that did not take is issued again.
	t0=$SECONDS gone= again=$SECONDS
	while [ $((SECONDS - t0)) -lt 40 ]; do
		lists_dr 0 & l0=$!
		lists_dr 1 & l1=$!
		lists_dr 2 & l2=$!
		gone=1
		for l in $l0 $l1 $l2; do wait $l && gone=; done
		[ -n "$gone" ] && break
		if [ $SECONDS -gt $again ]; then
			"$MBCLIENT" delete "$(mb_bootstrap)" dr >/dev/null 2>&1
			again=$SECONDS
		fi
		sleep 0.2
	done
	[ -n "$gone" ] || kaas_fail "generation $gen ($what): the topic is still listed after 40 s"
	echo "generation $gen: $what; gone after $((SECONDS - t0)) s; create+led $((T1-T0)) ms, data $((T2-T1)) ms, delete $(( $(mb_now_ms) - T2)) ms"
done
ffs_ctl clear >/dev/null
kaas_wait_for 40 bash -c "[ -z \"\$(ls -A '$FFS_LOWER/.trash' 2>/dev/null)\" ]" ||
	kaas_fail ".trash did not drain: $(ls "$FFS_LOWER/.trash" | head -3)"
kill -TERM $PROD
wait $PROD || { tail -n 20 "$S/producer.log" >&2; kaas_fail "load producer: not every message acknowledged"; }
timeout 60 kcat -b "$(mb_bootstrap)" -C -t load -p 0 -o beginning -e -f '%s\n' \
	>"$S/load.txt" 2>/dev/null || kaas_fail "consume the load topic"
# Duplicates are counted, not failed: a leader moved while its append was
# under way can leave a batch in the log that the new leader's producer
# state does not know, so the client's retry is appended again (a known
# gap of the idempotence/log-recovery layer, not of the deletes tested
# here).
check_acked "$ACKS" "$S/load.txt" || kaas_fail "load topic: acknowledged messages lost or reordered"
echo "interrupted steps seen in the broker logs: $(cat "$S"/kaasd.*.log | grep -c "renaming its directory aside failed\|not finished\|finishing its deletion\|re-driving the removal\|storage error") (renames retried, removals re-driven, deletes finished at restart)"
echo "$MB_GENERATIONS incarnations, each with only its own data; .trash empty"
echo PASS
