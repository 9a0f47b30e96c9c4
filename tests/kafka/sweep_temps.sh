#!/bin/bash
# Dead writers' temps and exclusive-create link names are swept by writer
# incarnation, not by pid (issue 13, defect 10, temp part).  Temps of a dead
# incarnation -- pid 1, as every containerised broker has -- are planted in
# brokers/, topics/, controller/ and a topic's directory, plus a temp of the
# running broker's own incarnation (a live writer, as another process of the
# broker would name it).  The controller's sweep (every 30 s, after a grace
# of 2 x liveness for incarnations it has not seen alive) must remove the
# dead ones and keep the live one.  Before the fix nothing swept these
# directories at all, and a temp with the sweeper's own pid never.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
kaas_scratch
data="$KAAS_SCRATCH/data"
cl="$data/__cluster"
mkdir -p "$cl/brokers" "$cl/topics" "$cl/controller" "$cl/acls" "$cl/credentials/SCRAM-SHA-512"
dead=00000000deadbee1
stale=("$cl/brokers/.tmp.7.json.otherhost.1.$dead.3"
	"$cl/topics/.tmp.gone.json.otherhost.1.$dead.4"
	"$cl/controller/.kaas-excl.otherhost.1.$dead.5"
	"$cl/acls/.tmp.0123.json.otherhost.1.$dead.11"
	"$cl/credentials/SCRAM-SHA-512/.tmp.bob.json.otherhost.1.$dead.12"
	"$cl/brokers/.tmp.8.json.otherhost.1.6")   # the format before incarnations
for f in "${stale[@]}"; do echo stale >"$f"; done

kaasd_start
echo first | kc -P -t sw -p 0 || kaas_fail "create topic sw"
[ -d "$data/sw" ] || kaas_fail "no topic directory $data/sw"
echo stale >"$data/sw/.tmp.x.json.otherhost.1.$dead.7"
stale+=("$data/sw/.tmp.x.json.otherhost.1.$dead.7")
inc=$(sed -n 's/.*broker 0 (incarnation \([0-9a-f]*\)) joined.*/\1/p' "$KAASD_LOG" | head -n1)
[ ${#inc} -eq 16 ] || { cat "$KAASD_LOG" >&2; kaas_fail "no incarnation in the log"; }
live="$cl/brokers/.tmp.0.json.otherhost.1.$inc.9"
echo live >"$live"

gone() {
	for f in "${stale[@]}"; do [ ! -e "$f" ] || return 1; done
}
kaas_wait_for 90 gone || { ls -la "$cl/brokers" "$cl/topics" "$cl/controller" "$data/sw" >&2;
	tail -n 20 "$KAASD_LOG" >&2; kaas_fail "dead writers' temps were not swept within 90 s"; }
grep -q "swept [0-9]* dead writers" "$KAASD_LOG" || kaas_fail "no sweep logged"
[ -e "$live" ] || kaas_fail "a live incarnation's temp was swept"
echo second | kc -P -t sw -p 0 || kaas_fail "produce after the sweep"
n=$(kc -C -t sw -p 0 -o beginning -e -f '%s\n' 2>/dev/null | wc -l)
[ "$n" -eq 2 ] || kaas_fail "sw/0 holds $n records, not 2"
kaasd_stop
echo "PASS"
