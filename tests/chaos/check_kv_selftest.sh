#!/bin/bash
# chaos_check --kv (the key-value check of a compacted topic, chaos/chaos_kv.c)
# on hand-made logs: a good compacted read passes (superseded values gone, a
# removed tombstone, a removed unacknowledged tombstone after the last
# acknowledged put, an unacknowledged later value, an acknowledgement without
# an offset); a bad read reports each violation kind (kv_lost, kv_stale,
# kv_phantom, kv_mismatch, kv_moved, kv_duplicate, kv_order) with its count;
# a malformed line exits 2.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
CHECK="$KAAS_TOP_BUILDDIR/chaos/chaos_check"
cd "$KAAS_SCRATCH" || kaas_fail "cd scratch"
kind() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" out.json; }
: >acks
: >log
# The good run.  Partition 0: k01 a.0-1@0 a.0-2@1, k03 a.0-5@2 a.0-6@3 (not
# acknowledged).  Partition 1: k02 a.0-3@0 a.0-4@1 (del), k05 a.0-9@2
# (acknowledged without an offset), k06 a.0-10@3 (del, still there).
# Partition 2: k04 a.0-7@0, a.0-8@1 (del, not acknowledged, removed).
cat >sent <<'E'
t 0 -1 k01 put a.0-1
t 0 -1 k01 put a.0-2
t 1 -1 k02 put a.0-3
t 1 -1 k02 del a.0-4
t 0 -1 k03 put a.0-5
t 0 -1 k03 put a.0-6
t 2 -1 k04 put a.0-7
t 2 -1 k04 del a.0-8
t 1 -1 k05 put a.0-9
t 1 -1 k06 del a.0-10
E
cat >kvacks <<'E'
t 0 0 k01 put a.0-1
t 0 1 k01 put a.0-2
t 1 0 k02 put a.0-3
t 1 1 k02 del a.0-4
t 0 2 k03 put a.0-5
t 2 0 k04 put a.0-7
t 1 -1 k05 put a.0-9
t 1 3 k06 del a.0-10
E
cat >kvread <<'E'
t 0 1 k01 put a.0-2
t 0 3 k03 put a.0-6
t 1 2 k05 put a.0-9
t 1 3 k06 del a.0-10
E
"$CHECK" --kv sent kvacks kvread acks log >out.json || kaas_fail "good run: $(cat out.json)"
[ "$(kind violation_count)" = 0 ] || kaas_fail "good run has violations"
for kv in writes=10 keys=6 live_keys=3 tombstones_read=1 absent_keys=2 \
	acknowledged_without_offset=0 keys_last_acknowledged_deleted=2; do
	got=$(kind "${kv%=*}")
	[ "$got" = "${kv#*=}" ] || kaas_fail "good run ${kv%=*}: got '$got', expected ${kv#*=}: $(cat out.json)"
done
# Without the removed tombstone a.0-8, k04's last acknowledged value a.0-7
# (a put) is lost when the key is absent.
grep -v a.0-8 sent >sent2
"$CHECK" --kv sent2 kvacks kvread acks log >out.json
[ $? = 1 ] && [ "$(kind kv_lost)" = 1 ] || kaas_fail "an absent put must be kv_lost: $(cat out.json)"

# The bad run.  Partition 0: k01 b.0-1@0, k03 b.0-4@1, k06 b.0-7@2 b.0-8@3
# (not acknowledged), k11 b.0-15@5 b.0-16 (not acknowledged).  Partition 1:
# k02 b.0-2@0 b.0-3@1 (del), k07 b.0-9@2, k08 b.0-10@3 b.0-11 (not
# acknowledged).  Partition 2: k04 b.0-5@0, k05 b.0-6@1 b.0-12 (not
# acknowledged), k10 b.0-13 (not acknowledged) b.0-14@4.
cat >sent <<'E'
t 0 -1 k01 put b.0-1
t 1 -1 k02 put b.0-2
t 1 -1 k02 del b.0-3
t 0 -1 k03 put b.0-4
t 2 -1 k04 put b.0-5
t 2 -1 k05 put b.0-6
t 0 -1 k06 put b.0-7
t 0 -1 k06 put b.0-8
t 1 -1 k07 put b.0-9
t 1 -1 k08 put b.0-10
t 1 -1 k08 put b.0-11
t 2 -1 k05 put b.0-12
t 2 -1 k10 put b.0-13
t 2 -1 k10 put b.0-14
t 0 -1 k11 put b.0-15
t 0 -1 k11 put b.0-16
E
cat >kvacks <<'E'
t 0 0 k01 put b.0-1
t 1 0 k02 put b.0-2
t 1 1 k02 del b.0-3
t 0 1 k03 put b.0-4
t 2 0 k04 put b.0-5
t 2 1 k05 put b.0-6
t 0 2 k06 put b.0-7
t 1 2 k07 put b.0-9
t 1 3 k08 put b.0-10
t 2 4 k10 put b.0-14
t 0 5 k11 put b.0-15
E
# kv_lost: k01 absent; k11's b.0-15@5 holds b.0-16.  kv_stale: k02 reads
# b.0-2 (its tombstone removed, the older value kept); k10 reads b.0-13
# above b.0-14, sent before it by the same producer.  kv_phantom: zz.0-1.
# kv_mismatch: b.0-9 read as a del; b.0-10 acknowledged at 3, read at 4.
# kv_moved: b.0-5 (partition 2) read in partition 0.  kv_duplicate: b.0-12
# twice.  kv_order: partition 0's offset 2 after 3.
cat >kvread <<'E'
t 0 1 k03 put b.0-4
t 0 3 k06 put b.0-8
t 0 2 k06 put b.0-7
t 0 4 k04 put b.0-5
t 0 5 k11 put b.0-16
t 1 0 k02 put b.0-2
t 1 2 k07 del b.0-9
t 1 4 k08 put b.0-10
t 1 5 k99 put zz.0-1
t 2 1 k05 put b.0-6
t 2 2 k05 put b.0-12
t 2 3 k05 put b.0-12
t 2 5 k10 put b.0-13
E
"$CHECK" --kv sent kvacks kvread acks log >out.json
[ $? = 1 ] || kaas_fail "kv violations must exit 1: $(cat out.json)"
for kv in kv_lost=2 kv_stale=2 kv_phantom=1 kv_mismatch=2 kv_moved=1 kv_duplicate=1 kv_order=1 \
	violation_count=10; do
	got=$(kind "${kv%=*}")
	[ "$got" = "${kv#*=}" ] || kaas_fail "${kv%=*}: got '$got', expected ${kv#*=}: $(cat out.json)"
done
echo 't 0 0 k01 maybe a.0-1' >bad
"$CHECK" --kv sent bad kvread acks log >/dev/null 2>err
[ $? = 2 ] && grep -q malformed err || kaas_fail "a malformed key-value line must exit 2 naming it"
echo PASS
