#!/bin/bash
# A short chaos run (issue 9, "In CI"): scripts/chaos for two seeds of 30 s
# each, about a minute each with the transactional read-back (three brokers
# on faultfs, idempotent and transactional producers, the key-value
# workload on a compacted topic, the consumer group,
# chaos-d deleted and re-created, the seeded nemesis); every seed must end
# with no violation.  Run by scripts/test after the normal build's suite (not
# by make check, not under sanitizers: a sanitizer build passes it with a
# message).  CHAOS_SEEDS, CHAOS_DURATION and CHAOS_FAULTS (scripts/chaos
# --faults; default: every fault of the nfs-floor profile) choose the
# baseline.  Each seed's summary is in the log; a failing seed reruns by hand
# with the command printed.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/chaos/chaos-lib.sh"
chaos_preflight
fails=0
faults=${CHAOS_FAULTS:+--faults $CHAOS_FAULTS}
for seed in ${CHAOS_SEEDS:-1 2}; do
	o=$KAAS_SCRATCH/seed-$seed
	# timeout's SIGTERM makes scripts/chaos log where it was and what
	# still ran (at-stop.txt), clean up, and exit
	KAAS_BUILD_DIR=$KAAS_TOP_BUILDDIR timeout -k 60 600 "$KAAS_TOP_SRCDIR/scripts/chaos" --seed "$seed" \
		--duration "${CHAOS_DURATION:-30}" $faults --out "$o" 2>"$KAAS_SCRATCH/seed-$seed.err"
	rc=$?
	if [ $rc != 0 ]; then
		echo "seed $seed: exit $rc$([ $rc = 124 ] && echo " (timed out after 600 s)") (rerun: scripts/chaos --seed $seed --duration ${CHAOS_DURATION:-30} $faults)"
		echo "-- its last nemesis log lines (the stage it was in):"
		tail -n 15 "$o/nemesis.log" 2>/dev/null | sed 's/^/   /'
		[ -s "$o/at-stop.txt" ] && { echo "-- still running when it was stopped:"; sed 's/^/   /' "$o/at-stop.txt"; }
		echo "-- its stderr (last lines):"
		tail -n 15 "$KAAS_SCRATCH/seed-$seed.err" | sed 's/^/   /'
		# kept for a look (the scratch directory goes at exit)
		keep=$(mktemp -d "${TMPDIR:-/tmp}/kaas-chaos-failed-seed-$seed.XXXXXX")
		cp -a "$o" "$keep/" 2>/dev/null && echo "-- the seed's files: $keep"
		fails=$((fails + 1))
	else
		grep -q WARNING "$o/summary.txt" 2>/dev/null && grep WARNING "$o/summary.txt"
	fi
done
[ $fails = 0 ] || kaas_fail "$fails seed(s) with violations or a broken run"
echo PASS
