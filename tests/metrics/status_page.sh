#!/bin/bash
# The status page (issue 39): kaasd with --http-listen on 127.0.0.1, a
# topic of 3 partitions with 20 records on partition 0, a consumer group
# that read them (committed offsets, lag 0) and a group with a live member
# whose name is hostile markup (<script>alert(1)</script>).
#   1. curl: / is HTML showing the topic and both groups, the hostile name
#      escaped (never raw markup); /status.json has the high watermark 20,
#      the committed offset and lag, the member and its assignment;
#      unknown paths 404, POST 405.
#   2. headless Chromium (Debian's chromium driven by playwright-core from
#      npm, playwright-lib.sh): the page loads, shows the topic and the
#      groups, no script of the name runs; 25 records are produced and the
#      page's own refresh shows the higher watermark; a PNG screenshot is
#      kept (build dir: tests/metrics/status_page.png).
#   3. curl again: high watermark 45, the group's lag 25.
# No snapshot is taken before the first request, and at most one a second
# after it (kaas_status_snapshot_duration_seconds_count on /metrics).
# The browser is not sanitized, so both suites run all of it (about 15 s,
# most of it the browser's start and one 5 s refresh).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/metrics/metrics-lib.sh"
. "$KAAS_TOP_SRCDIR/tests/metrics/playwright-lib.sh"
command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"

TOPIC=status-demo
GROUP=status-readers
HOSTILE='<script>alert(1)</script>'
LOG=$KAAS_SCRATCH/kaasd.log
mkdir -p "$KAAS_SCRATCH/data"
"$KAASD" --data "$KAAS_SCRATCH/data" --listen 127.0.0.1:0 --num-partitions 3 \
	--http-listen 127.0.0.1:0 2>"$LOG" &
PID=$!
kaas_on_exit "kill -9 $PID"
http_port "$LOG"
kaas_wait_for 30 grep -q "listening on" "$LOG" || { cat "$LOG" >&2; kaas_fail "kaasd did not start"; }
KPORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$LOG" | head -n1)
BROKER=127.0.0.1:$KPORT
BASE=http://127.0.0.1:$HTTP_PORT

seq 1 20 | timeout 30 kcat -b "$BROKER" -P -t "$TOPIC" -p 0 || kaas_fail "produce"
# a group that read everything and left (its offsets committed at close)
timeout 30 kcat -b "$BROKER" -G "$GROUP" -X auto.offset.reset=earliest -e -q "$TOPIC" >/dev/null 2>&1 ||
	kaas_fail "kcat -G $GROUP"
# a group with a live member, named as markup
timeout 120 kcat -b "$BROKER" -G "$HOSTILE" -q "$TOPIC" >/dev/null 2>&1 &
KCAT=$!
kaas_on_exit "kill $KCAT"

json() { curl -sf -m 5 "$BASE/status.json"; }
hostile_member() {
	json | jq -e --arg g "$HOSTILE" '.groups[] | select(.group == $g and .state == "Stable")
		| .members[0].assignment | test("status-demo: 0,1,2")' >/dev/null
}
committed() { # TOPIC-PARTITION-0 committed offset of $GROUP
	json | jq -r --arg g "$GROUP" '.groups[] | select(.group == $g) | .offsets[]
		| select(.partition == 0) | "\(.committed) \(.lag)"'
}
hw() { json | jq -r --arg t "$TOPIC" '.topics[] | select(.name == $t) | .shown[0].high_watermark'; }
snapshots() { scrape | sed -n 's/^kaas_status_snapshot_duration_seconds_count \([0-9]*\)$/\1/p'; }
[ -z "$(snapshots)" ] || kaas_fail "status snapshots taken ($(snapshots)) before anyone asked for the page"
T0=$SECONDS
kaas_wait_for 30 hostile_member || { json >&2; kaas_fail "the hostile group's member never showed, assigned"; }
kaas_wait_for 10 test "$(committed)" = "20 0" || { json >&2; kaas_fail "$GROUP: committed/lag '$(committed)', expected '20 0'"; }

# 1. curl
PAGE=$KAAS_SCRATCH/page.html
code=$(curl -s -m 5 -o "$PAGE" -w '%{http_code} %{content_type}' "$BASE/")
[ "$code" = "200 text/html; charset=utf-8" ] || kaas_fail "GET /: $code"
grep -q "$TOPIC" "$PAGE" || kaas_fail "the page does not show $TOPIC"
grep -q "$GROUP" "$PAGE" || kaas_fail "the page does not show $GROUP"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' "$PAGE" || kaas_fail "the hostile group name is not shown escaped"
grep -qiF '<script' "$PAGE" && kaas_fail "the page holds a <script> element (the group name, unescaped?)"
[ "$(hw)" = 20 ] || kaas_fail "status.json: high watermark '$(hw)', expected 20"
json | jq -e '.controller == .broker and (.brokers | length) == 1 and .brokers[0].alive
	and .ready and (.events | length) >= 1' >/dev/null || { json >&2; kaas_fail "status.json: brokers/controller"; }
json | grep -qF '\u003cscript\u003e' || kaas_fail "status.json does not escape < and > in names"
[ "$(http_code nope)" = 404 ] || kaas_fail "GET /nope is not 404"
[ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' -X POST "$BASE/")" = 405 ] || kaas_fail "POST / is not 405"

# 2. the browser
pw_require
PNG=$KAAS_SCRATCH/status_page.png
START=$SECONDS
timeout 120 node "$KAAS_TOP_SRCDIR/tests/metrics/status_page.mjs" "$PW_DIR" "$BASE/" "$TOPIC" "$GROUP" \
	"$HOSTILE" "$PNG" "seq 21 45 | timeout 30 kcat -b $BROKER -P -t $TOPIC -p 0" ||
	kaas_fail "the status page in headless Chromium"
echo "browser part: $((SECONDS - START)) s"
[ -s "$PNG" ] || kaas_fail "no screenshot"
mkdir -p "$KAAS_TOP_BUILDDIR/tests/metrics"
cp "$PNG" "$KAAS_TOP_BUILDDIR/tests/metrics/status_page.png"

# 3. the data behind it
[ "$(hw)" = 45 ] || kaas_fail "status.json: high watermark '$(hw)' after the produce, expected 45"
kaas_wait_for 10 test "$(committed)" = "20 25" || kaas_fail "$GROUP: committed/lag '$(committed)', expected '20 25'"
# the loop copies at most once a second, however often the page is asked
# for (the waits above poll every 0.1 s)
n=$(snapshots)
[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le $((SECONDS - T0 + 2)) ] ||
	kaas_fail "$n status snapshots in $((SECONDS - T0)) s"
kill -TERM $PID
kaas_wait_for 30 grep -q "stopped cleanly" "$LOG" || { tail -n 20 "$LOG" >&2; kaas_fail "kaasd did not stop cleanly"; }
rc=0
wait $PID || rc=$?
grep -E "runtime error|Sanitizer" "$LOG" >&2 && kaas_fail "kaasd: sanitizer reports (above)"
[ $rc = 0 ] || { tail -n 20 "$LOG" >&2; kaas_fail "kaasd exited $rc"; }
