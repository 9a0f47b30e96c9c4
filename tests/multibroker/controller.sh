#!/bin/bash
# Three brokers on one shared directory; kill -9 the controller: a survivor
# becomes controller within the liveness timeout (plus a few heartbeats)
# and the assignment converges (every partition led by a survivor, and
# producible).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
for id in 0 1 2; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" six 6 || kaas_fail "create topic"
mb_wait_led 20 six 6 0 0 1 2 || kaas_fail "six: not every partition led"
ctrl=$(mb_controller)
[ -n "$ctrl" ] || kaas_fail "no controller in the metadata"
# Placement spreads the slots (partitions and coordinator slots) over the
# brokers.
spread=$(for p in 0 1 2 3 4 5; do mb_leader six $p; done | sort -u | wc -l)
[ "$spread" -ge 2 ] || kaas_fail "six: partitions on $spread broker(s)"

t0=$(mb_now_ms)
mb_kill "$ctrl"
survivors=()
for id in 0 1 2; do [ "$id" != "$ctrl" ] && survivors+=("$id"); done
new=
for i in $(seq 1 200); do
	new=$(mb_controller "${survivors[0]}")
	[ -n "$new" ] && [ "$new" != "$ctrl" ] && [ "$new" != -1 ] && break
	sleep 0.05
done
t1=$(mb_now_ms)
[ -n "$new" ] && [ "$new" != "$ctrl" ] || kaas_fail "no new controller after killing $ctrl"
echo "controller $ctrl killed; broker $new controller after $((t1 - t0)) ms (liveness timeout $MB_LIVENESS_MS ms)"
[ $((t1 - t0)) -le $((MB_LIVENESS_MS * 3)) ] || kaas_fail "new controller took $((t1 - t0)) ms"
# Both survivors agree.
for i in $(seq 1 50); do
	[ "$(mb_controller "${survivors[1]}")" = "$new" ] && break
	sleep 0.1
done
[ "$(mb_controller "${survivors[1]}")" = "$new" ] || { mb_metadata "${survivors[1]}" | head -5 >&2; grep -h "cluster:" "$KAAS_SCRATCH"/kaasd.*.log >&2; kaas_fail "survivors disagree on the controller"; }
mb_wait_led 20 six 6 "${survivors[0]}" "${survivors[@]}" || kaas_fail "assignment did not converge on the survivors"
mb_wait_led 20 six 6 "${survivors[1]}" "${survivors[@]}" || kaas_fail "assignment did not converge on the survivors"
for p in 0 1 2 3 4 5; do
	echo "after-$p" | timeout 30 kcat -b "$(mb_bootstrap)" -P -t six -p $p -X acks=all ||
		kaas_fail "produce to six/$p after the controller change"
done
# The killed broker comes back and gets work again (gradually).
mb_start "$ctrl"
slots_of() {
	grep -o "\"leader\":[ ]*$1[,}]" "$MB_DATA/__cluster/assignment.json" 2>/dev/null | wc -l
}
kaas_wait_for 20 bash -c "[ \$(grep -o '\"leader\":[ ]*$ctrl[,}]' '$MB_DATA/__cluster/assignment.json' | wc -l) -ge 5 ]" ||
	kaas_fail "the restarted broker $ctrl got $(slots_of "$ctrl") slot(s) back, want at least 5 of 22"
echo "restarted broker $ctrl leads $(slots_of "$ctrl") of 22 slots again"
echo PASS
