#!/bin/bash
# Committed offsets survive a clean restart and a SIGKILL of the broker: a
# consumer of the group resumes exactly where the group committed.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch

consume() {
	timeout 60 kcat -b "$BROKER" -G og -X auto.offset.reset=earliest \
		-X session.timeout.ms=6000 -e -f '%s\n' ot 2>>"$KAAS_SCRATCH/consumer.err" | sort
}
check() { # check WANT-FILE GOT-FILE WHAT
	cmp -s "$1" "$2" || { tail -n 20 "$KAASD_LOG" >&2;
		kaas_fail "$3: consumed $(wc -l <"$2") messages, expected $(wc -l <"$1")"; }
}

kaasd_start --num-partitions 6
seq 1 300 | sed 's/^/a/' | kc -P -t ot || kaas_fail "produce a"
seq 1 300 | sed 's/^/a/' | sort >"$KAAS_SCRATCH/want1"
consume >"$KAAS_SCRATCH/got1"
check "$KAAS_SCRATCH/want1" "$KAAS_SCRATCH/got1" "first consumer"

kaasd_stop
kaasd_start --num-partitions 6
seq 1 100 | sed 's/^/b/' | kc -P -t ot || kaas_fail "produce b"
seq 1 100 | sed 's/^/b/' | sort >"$KAAS_SCRATCH/want2"
consume >"$KAAS_SCRATCH/got2"
check "$KAAS_SCRATCH/want2" "$KAAS_SCRATCH/got2" "after a clean restart"

kaasd_kill
kaasd_start --num-partitions 6
seq 1 100 | sed 's/^/c/' | kc -P -t ot || kaas_fail "produce c"
seq 1 100 | sed 's/^/c/' | sort >"$KAAS_SCRATCH/want3"
consume >"$KAAS_SCRATCH/got3"
check "$KAAS_SCRATCH/want3" "$KAAS_SCRATCH/got3" "after SIGKILL"

# Nothing new: a consumer reads nothing.
consume >"$KAAS_SCRATCH/got4"
[ ! -s "$KAAS_SCRATCH/got4" ] || kaas_fail "re-read $(wc -l <"$KAAS_SCRATCH/got4") committed messages"
kaasd_stop
echo "PASS"
