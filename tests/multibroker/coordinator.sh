#!/bin/bash
# Group coordinators follow the cluster assignment.  Two brokers on one
# shared directory: the broker leading the group's coordinator slot commits;
# the other answers NOT_COORDINATOR (16) to OffsetCommit and OffsetFetch and
# never writes the group's offsets; FindCoordinator on either names the
# slot's leader.  After the coordinator is killed -9 the survivor becomes
# coordinator and a consumer of the group resumes at the committed offset.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
RAW="$KAAS_TOP_BUILDDIR/tests/groups/offsets_raw"
raw() { timeout 30 "$RAW" "127.0.0.1:${MB_PORT[$1]}" "${@:2}"; }

for id in 0 1; do mb_start $id; done
"$MBCLIENT" create "$(mb_bootstrap)" ct 1 || kaas_fail "create topic"
mb_wait_led 20 ct 1 0 0 1 || kaas_fail "ct/0 has no leader"
seq 0 9 | sed 's/^/m/' | timeout 30 kcat -b "$(mb_bootstrap)" -P -t ct -p 0 ||
	kaas_fail "produce"

# Which broker coordinates group cg: the one whose commit is accepted.
coord= other=
for i in $(seq 1 100); do
	a=$(raw 0 commit cg ct 0 5) || true
	b=$(raw 1 commit cg ct 0 5) || true
	if [ "$a" = 0 ] && [ "$b" = 16 ]; then coord=0 other=1; break; fi
	if [ "$b" = 0 ] && [ "$a" = 16 ]; then coord=1 other=0; break; fi
	sleep 0.2
done
[ -n "$coord" ] || kaas_fail "no single coordinator for cg (broker 0 answered '$a', broker 1 '$b')"
echo "coordinator of cg: broker $coord"

out=$(raw "$other" commit cg ct 0 7)
[ "$out" = 16 ] || kaas_fail "the other broker answered $out to a commit, expected NOT_COORDINATOR (16)"
out=$(raw "$other" fetch cg ct 0)
[ "$out" = "-1 16" ] || kaas_fail "the other broker answered '$out' to a fetch, expected '-1 16'"
out=$(raw "$coord" fetch cg ct 0)
[ "$out" = "5 0" ] || kaas_fail "the coordinator reads '$out', expected '5 0'"
# Every offsets document of cg was written by the coordinator: one epoch.
docs=$(find "$MB_DATA" -path '*/groups/cg/offsets-*' | wc -l)
[ "$docs" = 1 ] || { find "$MB_DATA" -path '*/groups/cg/*' >&2; kaas_fail "$docs offsets documents for cg, expected 1"; }

# FindCoordinator on either broker names the coordinator.
for id in 0 1; do
	got=$(timeout 30 kcat -b "127.0.0.1:${MB_PORT[$id]}" -G cg -X session.timeout.ms=6000 \
		-X auto.offset.reset=earliest -e -f '%s\n' ct 2>/dev/null | tr '\n' ' ') || true
	[ "$got" = "m5 m6 m7 m8 m9 " ] ||
		kaas_fail "a consumer bootstrapped at broker $id read '$got', expected m5..m9"
	out=
	for i in $(seq 1 50); do # rewind for the next round (once the consumer left)
		out=$(raw "$coord" commit cg ct 0 5) || true
		[ "$out" = 0 ] && break
		sleep 0.2
	done
	[ "$out" = 0 ] || kaas_fail "rewinding cg answered '$out'"
done

mb_kill "$coord"
out=
for i in $(seq 1 150); do
	out=$(raw "$other" fetch cg ct 0) || true
	[ "$out" = "5 0" ] && break
	sleep 0.2
done
[ "$out" = "5 0" ] || kaas_fail "the survivor did not take the group over (fetch answered '$out')"
echo "survivor broker $other coordinates cg after $i tries"
got=$(timeout 60 kcat -b "127.0.0.1:${MB_PORT[$other]}" -G cg -X session.timeout.ms=6000 \
	-X auto.offset.reset=earliest -e -f '%s\n' ct 2>/dev/null | tr '\n' ' ')
[ "$got" = "m5 m6 m7 m8 m9 " ] || kaas_fail "after failover the consumer read '$got', expected m5..m9"
out=$(raw "$other" commit cg ct 0 8)
[ "$out" = 0 ] || kaas_fail "commit on the new coordinator answered $out"

# The killed broker comes back; the controller may move slots to it (then
# the survivor drops its in-memory group).  Either way exactly one broker
# coordinates cg and it serves the last commit.
mb_start "$coord"
sleep 2
ok=
for i in $(seq 1 150); do
	a=$(raw 0 fetch cg ct 0) || true
	b=$(raw 1 fetch cg ct 0) || true
	if { [ "$a" = "8 0" ] && [ "$b" = "-1 16" ]; } || { [ "$b" = "8 0" ] && [ "$a" = "-1 16" ]; }; then
		ok=1
		break
	fi
	sleep 0.2
done
[ -n "$ok" ] || kaas_fail "after the restart: broker 0 answered '$a', broker 1 '$b'"
[ "$a" = "8 0" ] && now=0 || now=1
echo "after broker $coord restarted, broker $now coordinates cg"
out=$(raw "$now" commit cg ct 0 9)
[ "$out" = 0 ] || kaas_fail "commit after the restart answered $out"
out=$(raw "$now" fetch cg ct 0)
[ "$out" = "9 0" ] || kaas_fail "fetch after the restart answered '$out'"
echo PASS
