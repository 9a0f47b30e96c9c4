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
