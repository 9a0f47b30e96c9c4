#!/bin/bash
# Issue 33, defect 4 and the topic-document part of 7: two admins never
# silently overwrite each other's change to a topic document, on POSIX and
# with each broker its own client of the fault model (fault+).  Broker 1
# stops (SIGSTOP) at a named step of its rewrite while broker 0 changes the
# same document, then goes on:
#  A. topics.doc.before-rewrite, in IncrementalAlterConfigs SET
#     retention.ms; meanwhile SET segment.ms and CreatePartitions 3 -> 6
#     through broker 0.  The document must hold both keys and 6 partitions.
#     (Before: broker 1 wrote its cached overrides and the count it had read,
#     so segment.ms was lost and the count fell back to 3.)
#  B. topics.doc.before-rewrite, in CreatePartitions 6 -> 7; meanwhile
#     CreatePartitions 6 -> 8 through broker 0.  Broker 1 must answer
#     INVALID_PARTITIONS and the document keep 8 (before: 7).
#  C. topics.doc.before-replace, in IncrementalAlterConfigs of topic tdc;
#     meanwhile broker 0 deletes tdc, re-creates it and acknowledges a
#     record.  Broker 1 must answer UNKNOWN_TOPIC_OR_PARTITION and leave
#     the new incarnation's document alone (before: it wrote the old
#     incarnation's id over it, and the new directory's stamp no longer
#     matched the document).
# kaas-test-timeout: 400
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
S=$KAAS_SCRATCH
PY=/usr/bin/python3
[ -x "$PY" ] || kaas_skip "no python3"
[ -x "$MBCLIENT" ] || kaas_skip "no mbclient (built without librdkafka)"
ADM="$KAAS_TOP_SRCDIR/tests/multibroker/topic_doc_admin.py"
adm() { timeout 120 "$PY" "$ADM" "$@"; }

# Each broker its own client: the volume directly, or a fault+ host view.
mb_data() { if [ "$SUB" = posix ]; then echo "$VOL"; else echo "fault+$VOL?seed=1&host=$1"; fi; }

# Start broker 1 (again) stopping at step $1.
start_paused() {
	[ -n "${MB_PID[1]:-}" ] && mb_kill 1
	KAAS_PAUSE_AT=$1 mb_start 1
	PAUSE_LOG="$S/kaasd.1.${MB_RUNS[1]}.log"
}

# Wait until broker 1 stopped at step $1.
await_pause() {
	kaas_wait_for 30 grep -q "kaas-step: pause at $1" "$PAUSE_LOG" ||
		{ tail -n 20 "$PAUSE_LOG" >&2; kaas_fail "$SUB: broker 1 never stopped at $1"; }
}

# Wait until broker $1 lists topic $2 with $3 partitions.
await_listed() {
	local i
	for i in $(seq 1 150); do
		timeout 5 kcat -b "127.0.0.1:${MB_PORT[$1]}" -L -t "$2" 2>/dev/null |
			grep -q "\"$2\" with $3 partitions" && return 0
		sleep 0.2
	done
	kaas_fail "$SUB: broker $1 does not list $2 with $3 partitions"
}

expect_err() { # what got want
	local code=${2%% *}
	[ "$code" = "err=$3" ] || kaas_fail "$SUB: $1 answered '$2', want err=$3"
}

run_case() {
	SUB=$1 VOL="$S/$1-vol"
	echo "== $SUB"
	mkdir -p "$VOL"
	MB_PORT=()
	mb_start 0
	start_paused topics.doc.before-rewrite
	B0=127.0.0.1:${MB_PORT[0]} B1=127.0.0.1:${MB_PORT[1]}
	kaas_wait_for 20 bash -c "timeout 5 kcat -b $B0 -L 2>/dev/null | grep -q '(controller)'" ||
		kaas_fail "$SUB: no controller"
	CL="$VOL/__cluster"

	# --- A: a config change and a grow made while broker 1 rewrites
	"$MBCLIENT" create "$B0" tda 3 || kaas_fail "$SUB: create tda"
	await_listed 1 tda 3
	adm set "$B1" tda retention.ms 2592000000 >"$S/a1.out" 2>&1 &
	local a1=$!
	await_pause topics.doc.before-rewrite
	expect_err "SET segment.ms through broker 0" "$(adm set "$B0" tda segment.ms 3600000)" 0
	expect_err "CreatePartitions 6 through broker 0" "$(adm grow "$B0" tda 6)" 0
	kill -CONT "${MB_PID[1]}"
	wait $a1 || { cat "$S/a1.out" >&2; kaas_fail "$SUB: the request to broker 1"; }
	expect_err "SET retention.ms through broker 1" "$(cat "$S/a1.out")" 0
	doc=$(adm doc "$CL" tda)
	echo "A: $doc"
	case "$doc" in *retention.ms=2592000000*) ;; *) kaas_fail "$SUB: A: retention.ms lost: $doc" ;; esac
	case "$doc" in *segment.ms=3600000*) ;; *) kaas_fail "$SUB: A: segment.ms, acknowledged through broker 0, lost: $doc" ;; esac
	case "$doc" in *partitions=6\ *) ;; *) kaas_fail "$SUB: A: the partition count is not 6: $doc" ;; esac

	# --- B: a stale grow
	start_paused topics.doc.before-rewrite
	B1=127.0.0.1:${MB_PORT[1]}
	await_listed 1 tda 6
	adm grow "$B1" tda 7 >"$S/b1.out" 2>&1 &
	local b1=$!
	await_pause topics.doc.before-rewrite
	expect_err "CreatePartitions 8 through broker 0" "$(adm grow "$B0" tda 8)" 0
	kill -CONT "${MB_PID[1]}"
	wait $b1 || { cat "$S/b1.out" >&2; kaas_fail "$SUB: the request to broker 1"; }
	doc=$(adm doc "$CL" tda)
	echo "B: broker 1 answered $(cat "$S/b1.out"); $doc"
	case "$doc" in *partitions=8\ *) ;; *) kaas_fail "$SUB: B: the partition count is not 8: $doc" ;; esac
	expect_err "the stale CreatePartitions 7 through broker 1" "$(cat "$S/b1.out")" 37

	# --- C: delete and re-create while broker 1 rewrites
	start_paused topics.doc.before-replace
	B1=127.0.0.1:${MB_PORT[1]}
	"$MBCLIENT" create "$B0" tdc 1 || kaas_fail "$SUB: create tdc"
	await_listed 1 tdc 1
	adm set "$B1" tdc retention.ms 1000 >"$S/c1.out" 2>&1 &
	local c1=$!
	await_pause topics.doc.before-replace
	"$MBCLIENT" delete "$B0" tdc || kaas_fail "$SUB: delete tdc through broker 0"
	"$MBCLIENT" create "$B0" tdc 1 || kaas_fail "$SUB: re-create tdc through broker 0"
	echo c-new | timeout 60 kcat -b "$B0" -P -t tdc -p 0 -X acks=all -X message.timeout.ms=50000 ||
		kaas_fail "$SUB: C: produce to the new tdc"
	id2=$(adm stamp "$VOL" tdc)
	kill -CONT "${MB_PID[1]}"
	wait $c1 || { cat "$S/c1.out" >&2; kaas_fail "$SUB: the request to broker 1"; }
	doc=$(adm doc "$CL" tdc)
	echo "C: broker 1 answered $(cat "$S/c1.out"); $doc; the directory's stamp $id2"
	case "$doc" in id=$id2\ *) ;; *) kaas_fail "$SUB: C: the document no longer names the new incarnation $id2: $doc" ;; esac
	case "$doc" in *retention.ms=1000*) kaas_fail "$SUB: C: the old incarnation's change landed on the new one: $doc" ;; esac
	expect_err "the change to the deleted incarnation through broker 1" "$(cat "$S/c1.out")" 3
	got=$(timeout 60 kcat -b "$B0,$B1" -C -t tdc -o beginning -e -f '%s\n' 2>/dev/null)
	[ "$got" = c-new ] || kaas_fail "$SUB: C: the new tdc reads back '$got'"
	grep -q 'AddressSanitizer\|runtime error' "$S"/kaasd.*.log && kaas_fail "$SUB: sanitizer report"
	mb_kill 0
	mb_kill 1
}
run_case posix
run_case fault+
echo PASS
