#!/bin/bash
# A topic created through one broker is answered by every other broker at
# once, not after their next cluster round lists it.  Broker 1 runs rounds
# only every 4 s; right after the create through broker 0, a Metadata
# request naming the topic (no auto-creation) sent to broker 1 must already
# answer it with its partition count.  A consumer group leader that read
# "unknown" there would assign nothing, and librdkafka would not ask again
# before its periodic metadata refresh (5 minutes by default).  A name that
# exists nowhere is still answered unknown, and quickly.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
MB_LIVENESS_MS=20000
. "$KAAS_TOP_SRCDIR/tests/multibroker/mb-lib.sh"
mb_start 0 --auto-create-topics false
MB_HEARTBEAT_MS=4000 mb_start 1 --auto-create-topics false
# Both brokers in the cluster view before the create.
for i in $(seq 1 100); do
	[ "$(mb_metadata 0 | grep -c '^ *broker [01] at')" = 2 ] && break
	sleep 0.1
done
"$MBCLIENT" create "$(mb_bootstrap 0)" lag 3 || kaas_fail "create topic lag through broker 0"
start=$(mb_now_ms)
md=$(mb_metadata 1 -t lag)
took=$(( $(mb_now_ms) - start ))
echo "$md" | grep -i "topic \"lag\"" >&2
echo "$md" | grep -q 'topic "lag" with 3 partitions' ||
	kaas_fail "broker 1 did not answer the new topic with its 3 partitions (${took} ms): $md"
echo "broker 1 answered the topic created through broker 0 in ${took} ms"
grep -q "topic lag: listed" "$KAAS_SCRATCH/kaasd.1.1.log" ||
	kaas_fail "broker 1 did not list the topic"
start=$(mb_now_ms)
md=$(mb_metadata 1 -t nowhere)
took=$(( $(mb_now_ms) - start ))
echo "$md" | grep -q 'topic "nowhere" with 0 partitions' ||
	kaas_fail "a topic that exists nowhere was not answered unknown: $md"
[ "$took" -lt 2000 ] || kaas_fail "unknown topic answered after ${took} ms"
echo PASS
