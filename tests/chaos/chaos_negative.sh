#!/bin/bash
# A short negative-control run (issue 9, "Teeth"): scripts/chaos with a
# disqualified-substrate switch of faultfs on; the checker must report
# violations (scripts/chaos exit 1) in every seed.  A checker that catches
# nothing here is broken.  Run by scripts/test after the normal build's suite
# (not by make check, not under sanitizers).  CHAOS_NEG_SWITCH (default
# rename_copy), CHAOS_NEG_SEEDS (default "1 2"), CHAOS_NEG_DURATION (default
# 30) and CHAOS_NEG_KINDS (violation kinds that count as caught; default:
# any but duplicate, which the broker showed without a switch before the
# idempotence fix: a switch must be caught by something else).
# CHAOS_NEG_ENV="NAME=VALUE": a deliberately broken broker instead of a
# switch (the brokers run with it in their environment), e.g.
# KAAS_TEST_BREAK_TXN=abort-as-commit (every abort marker written as a
# commit: the transaction and consume-transform-produce checks must catch
# it).  The violation kinds of every checker count (check.json,
# txn-check.json, ctp-check.json).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/chaos/chaos-lib.sh"
chaos_preflight
sw=${CHAOS_NEG_SWITCH:-rename_copy}
env_args=() sw_args=(--switch "$sw")
if [ -n "${CHAOS_NEG_ENV:-}" ]; then
	env_args=("$CHAOS_NEG_ENV") sw_args=() sw=$CHAOS_NEG_ENV
fi
missed=0
for seed in ${CHAOS_NEG_SEEDS:-1 2}; do
	o=$KAAS_SCRATCH/seed-$seed
	env "${env_args[@]}" KAAS_BUILD_DIR="$KAAS_TOP_BUILDDIR" timeout 600 \
		"$KAAS_TOP_SRCDIR/scripts/chaos" --seed "$seed" --duration "${CHAOS_NEG_DURATION:-30}" \
		"${sw_args[@]}" --out "$o" 2>/dev/null
	rc=$?
	caught=0
	if [ $rc = 1 ]; then
		for k in $(sed -n 's/.*"by_kind":{\([^}]*\)}.*/\1/p' "$o/check.json" \
			$([ -f "$o/txn-check.json" ] && echo "$o/txn-check.json") \
			$([ -f "$o/ctp-check.json" ] && echo "$o/ctp-check.json") | tr ',' '\n' |
			sed -n 's/^"\([a-z_]*\)":[1-9][0-9]*$/\1/p'); do
			if [ -n "${CHAOS_NEG_KINDS:-}" ]; then
				[[ ",$CHAOS_NEG_KINDS," == *",$k,"* ]] && caught=1
			else
				[ "$k" != duplicate ] && caught=1
			fi
		done
	fi
	if [ $caught = 1 ]; then
		echo "seed $seed: switch $sw caught"
	else
		echo "seed $seed: switch $sw NOT caught (exit $rc; rerun: ${env_args[*]} scripts/chaos --seed $seed --duration ${CHAOS_NEG_DURATION:-30} ${sw_args[*]})"
		missed=$((missed + 1))
	fi
done
[ $missed = 0 ] || kaas_fail "the checker missed switch $sw in $missed seed(s)"
echo PASS
