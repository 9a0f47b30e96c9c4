#!/bin/bash
# A short chaos run: scripts/chaos for three seeds of 30 s each (three
# brokers on faultfs, idempotent producers, the seeded nemesis); every seed
# must end with no violation.  CHAOS_SEEDS, CHAOS_DURATION and CHAOS_FAULTS
# (scripts/chaos --faults) override the defaults.  Each seed's summary is in the test log; a
# failing seed reruns by hand with the command printed.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
[ -c /dev/fuse ] || kaas_skip "no /dev/fuse: FUSE is not available here"
command -v fusermount3 >/dev/null 2>&1 || kaas_skip "fusermount3 is not installed (package fuse3)"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
fails=0
for seed in ${CHAOS_SEEDS:-1 2 3}; do
	KAAS_BUILD_DIR=$KAAS_TOP_BUILDDIR timeout 400 "$KAAS_TOP_SRCDIR/scripts/chaos" --seed "$seed" \
		--duration "${CHAOS_DURATION:-30}" --faults "${CHAOS_FAULTS:-kill,stop,crash,latency,eio}" --out "$KAAS_SCRATCH/seed-$seed" 2>/dev/null
	rc=$?
	if [ $rc != 0 ]; then
		echo "seed $seed: exit $rc (rerun: scripts/chaos --seed $seed --duration ${CHAOS_DURATION:-30})"
		fails=$((fails + 1))
	fi
done
[ $fails = 0 ] || kaas_fail "$fails seed(s) with violations or a broken run"
echo PASS
