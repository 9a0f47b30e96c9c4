# check_acked ACKFILE CONSUMED [exactly-once] — every acknowledged sequence
# number is in CONSUMED, in increasing order; prints duplicate counts.
# Returns 1 on a lost or reordered message, and with "exactly-once" also on
# a duplicate (sourced helper).
check_acked() {
	awk -v ackf="$1" -v strict="${3:-}" '
		BEGIN { while ((getline l < ackf) > 0) { split(l, f, " "); acked[f[1]] = 1; nacked++ } }
		{ v = $1 + 0; if (v in seen) { dup++; if (dup < 5) print "duplicate " v > "/dev/stderr"; next } seen[v] = 1
		  if (v < max) { bad++; if (bad < 5) print "out of order: " v " after " max > "/dev/stderr" }
		  max = v > max ? v : max }
		END { for (k in acked) if (!(k in seen)) { lost++; if (lost < 5) print "lost acknowledged " k > "/dev/stderr" }
		      printf "acknowledged %d, consumed %d distinct, duplicates %d, lost %d, reordered %d\n", nacked, length(seen), dup + 0, lost + 0, bad + 0
		      exit (lost + bad + (strict == "exactly-once" ? dup : 0)) > 0 }' "$2"
}

# check_acked_offsets ACKFILE CONSUMED — what a broker guarantees whatever
# the producer: CONSUMED ("OFFSET VALUE" lines, kcat -f '%o %s\n') is
# served in increasing offset order, and every acknowledgement ("SEQ
# OFFSET ..." in ACKFILE) names an offset that holds that SEQ (nothing
# acknowledged is lost or moved).  Prints how many acknowledged messages a
# non-idempotent producer sent after a later one (librdkafka re-sends a
# batch answered with a retriable error after the batches queued behind
# it: the producer's order, not the broker's) and how many duplicates.
# Returns 1 on a violation (sourced helper).
check_acked_offsets() {
	awk -v ackf="$1" '
		{ o = $1 + 0; if (NR > 1 && o <= last) { bad++; if (bad < 5) print "offset " o " served after offset " last > "/dev/stderr" }
		  last = o; val[o] = $2; if ($2 in seen) dup++; seen[$2] = 1 }
		END { while ((getline l < ackf) > 0) {
			split(l, f, " "); n++
			if (!(f[2] in val)) { lost++; if (lost < 5) print "acknowledged " f[1] " at offset " f[2] ": offset not served" > "/dev/stderr" }
			else if (val[f[2]] != f[1]) { moved++; if (moved < 5) print "acknowledged " f[1] " at offset " f[2] ": the offset holds " val[f[2]] > "/dev/stderr" }
			ack[f[2] + 0] = f[1] + 0 }
		      m = -1; late = 0
		      for (o = 0; o <= last; o++) if (o in ack) { if (ack[o] < m) late++; else m = ack[o] }
		      printf "acknowledged %d, served %d offsets, duplicates %d, acknowledged lost %d, moved %d, offsets out of order %d; sent late by the producer %d\n", n, NR, dup + 0, lost + 0, moved + 0, bad + 0, late
		      exit (lost + moved + bad) > 0 }' "$2"
}
