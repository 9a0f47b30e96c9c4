/*
 * chaos_check.c — the checker of a chaos run (scripts/chaos).
 *
 *   chaos_check ACKS CONSUMED NPART
 *
 * ACKS: "PARTITION OFFSET VALUE" per acknowledged record (chaos_client
 * produce); CONSUMED: the same per record read back (chaos_client consume).
 * VALUE is "PRODUCER-SEQ".  Checks, per partition:
 *   - offsets read back start at 0 and are dense and monotonic (gap,
 *     non_monotonic);
 *   - every acknowledged record is at its acknowledged offset (lost: the
 *     offset is missing or holds another record and the value is nowhere;
 *     moved: the value is at another offset);
 *   - no value is in the log twice (duplicate) nor acknowledged twice
 *     (double_ack);
 *   - a producer's acknowledged records have offsets in sequence order
 *     (reorder).
 * An acknowledgement with offset -1 (librdkafka's answer to a duplicate
 * sequence) only needs its value in the log (counted in
 * acknowledged_without_offset).
 * Prints one JSON object on stdout: {"partitions","acknowledged","consumed",
 * "violation_count","by_kind":{...},"violations":[first 100, with evidence]}.
 * Exit 0 when there is no violation, 1 when there are, 2 on bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	int p;
	long long off;
	char *val;
	char *prod; /* VALUE up to its last '-' */
	long seq;   /* after it (-1 when VALUE has no '-') */
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

#define MAX_SHOWN 100
static long nviol, unknown_off;
static int shown;
static const char *kinds[] = { "lost", "moved", "duplicate", "double_ack", "reorder", "gap",
			       "non_monotonic", "bad_partition" };
static long by_kind[sizeof(kinds) / sizeof(kinds[0])];

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* One violation: KIND, partition, then a free-form evidence string. */
static void violation(int kind, int p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void violation(int kind, int p, const char *fmt, ...)
{
	nviol++;
	by_kind[kind]++;
	if (shown >= MAX_SHOWN)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%s{\"kind\":\"%s\",\"partition\":%d,\"evidence\":", shown ? "," : "", kinds[kind], p);
	json_str(buf);
	putchar('}');
	shown++;
}

/* Reads FILE into R; returns 0, or -errno / -EINVAL (a malformed line). */
static int load(const char *file, struct recs *r, int npart)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -errno;
	char line[1024];
	long lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t len = strcspn(line, "\n");
		line[len] = 0;
		int p, used = 0;
		long long off;
		if (sscanf(line, "%d %lld %n", &p, &off, &used) != 2 || used == 0) {
			fprintf(stderr, "chaos_check: %s:%ld: malformed line '%s'\n", file, lineno, line);
			fclose(f);
			return -EINVAL;
		}
		if (p < 0 || p >= npart) {
			fprintf(stderr, "chaos_check: %s:%ld: partition %d out of range\n", file, lineno, p);
			fclose(f);
			return -EINVAL;
		}
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 4096;
			r->v = realloc(r->v, r->cap * sizeof(*r->v));
			if (!r->v) {
				fclose(f);
				return -ENOMEM;
			}
		}
		struct rec *x = &r->v[r->n++];
		x->p = p;
		x->off = off;
		x->val = strdup(line + used);
		x->prod = strdup(line + used);
		char *dash = strrchr(x->prod, '-');
		x->seq = -1;
		if (dash) {
			*dash = 0;
			x->seq = strtol(dash + 1, NULL, 10);
		}
	}
	fclose(f);
	return 0;
}

static int by_p_off(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int by_p_val(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return strcmp(x->val, y->val);
}

static int by_p_prod_seq(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	int c = strcmp(x->prod, y->prod);
	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int main(int argc, char **argv)
{
	if (argc != 4 || atoi(argv[3]) <= 0) {
		fprintf(stderr, "usage: chaos_check ACKS CONSUMED NPART\n");
		return 2;
	}
	int npart = atoi(argv[3]);
	struct recs acks = { 0 }, log = { 0 };
	int rc;
	if ((rc = load(argv[1], &acks, npart)) < 0 || (rc = load(argv[2], &log, npart)) < 0) {
		if (rc != -EINVAL)
			fprintf(stderr, "chaos_check: %s\n", strerror(-rc));
		return 2;
	}
	printf("{\"violations\":[");

	/* Offsets as read (in read order): dense from 0, monotonic. */
	long long *next = calloc((size_t)npart, sizeof(*next));
	for (size_t i = 0; i < log.n; i++) {
		struct rec *x = &log.v[i];
		if (x->off > next[x->p])
			violation(5, x->p, "offsets %lld..%lld missing (next read was %lld, value %s)",
				  next[x->p], x->off - 1, x->off, x->val);
		else if (x->off < next[x->p])
			violation(6, x->p, "offset %lld read after offset %lld (value %s)", x->off,
				  next[x->p] - 1, x->val);
		if (x->off >= next[x->p])
			next[x->p] = x->off + 1;
	}

	/* Duplicates in the log; then each value's offsets by value lookup. */
	struct rec *byval = malloc((log.n + 1) * sizeof(*byval));
	memcpy(byval, log.v, log.n * sizeof(*byval));
	qsort(byval, log.n, sizeof(*byval), by_p_val);
	for (size_t i = 1; i < log.n; i++)
		if (byval[i].p == byval[i - 1].p && !strcmp(byval[i].val, byval[i - 1].val))
			violation(2, byval[i].p, "value %s at offsets %lld and %lld", byval[i].val,
				  byval[i - 1].off, byval[i].off);
	struct rec *byoff = malloc((log.n + 1) * sizeof(*byoff));
	memcpy(byoff, log.v, log.n * sizeof(*byoff));
	qsort(byoff, log.n, sizeof(*byoff), by_p_off);

	/* Every acknowledged record at its offset. */
	for (size_t i = 0; i < acks.n; i++) {
		struct rec *a = &acks.v[i];
		if (a->off < 0) {
			/* Acknowledged without an offset (librdkafka reports -1
			 * for a DUPLICATE_SEQUENCE_NUMBER answer): present is
			 * enough; the duplicate check covers "exactly once". */
			unknown_off++;
			if (!bsearch(a, byval, log.n, sizeof(*byval), by_p_val))
				violation(0, a->p, "value %s acknowledged (offset unknown); not in the log",
					  a->val);
			continue;
		}
		struct rec *at = bsearch(a, byoff, log.n, sizeof(*byoff), by_p_off);
		if (at && !strcmp(at->val, a->val))
			continue;
		struct rec *elsewhere = bsearch(a, byval, log.n, sizeof(*byval), by_p_val);
		if (elsewhere)
			violation(1, a->p, "value %s acknowledged at offset %lld, found at offset %lld",
				  a->val, a->off, elsewhere->off);
		else if (at)
			violation(0, a->p, "value %s acknowledged at offset %lld; that offset holds %s",
				  a->val, a->off, at->val);
		else
			violation(0, a->p, "value %s acknowledged at offset %lld; log read has %lld records",
				  a->val, a->off, next[a->p]);
	}

	/* Acknowledged twice; a producer's records in sequence order. */
	struct rec *ackv = malloc((acks.n + 1) * sizeof(*ackv));
	memcpy(ackv, acks.v, acks.n * sizeof(*ackv));
	qsort(ackv, acks.n, sizeof(*ackv), by_p_val);
	for (size_t i = 1; i < acks.n; i++)
		if (ackv[i].p == ackv[i - 1].p && !strcmp(ackv[i].val, ackv[i - 1].val))
			violation(3, ackv[i].p, "value %s acknowledged at offsets %lld and %lld",
				  ackv[i].val, ackv[i - 1].off, ackv[i].off);
	qsort(ackv, acks.n, sizeof(*ackv), by_p_prod_seq);
	for (size_t i = 1; i < acks.n; i++) {
		struct rec *x = &ackv[i - 1], *y = &ackv[i];
		if (x->p == y->p && !strcmp(x->prod, y->prod) && x->seq != y->seq && x->off >= 0 &&
		    y->off >= 0 && y->off <= x->off)
			violation(4, y->p, "%s-%ld acknowledged at offset %lld, before %s-%ld at %lld",
				  y->prod, y->seq, y->off, x->prod, x->seq, x->off);
	}

	printf("],\"partitions\":%d,\"acknowledged\":%zu,\"consumed\":%zu,\"violation_count\":%ld,"
	       "\"acknowledged_without_offset\":%ld,\"by_kind\":{",
	       npart, acks.n, log.n, nviol, unknown_off);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		printf("%s\"%s\":%ld", k ? "," : "", kinds[k], by_kind[k]);
	printf("}}\n");
	for (size_t i = 0; i < acks.n; i++) {
		free(acks.v[i].val);
		free(acks.v[i].prod);
	}
	for (size_t i = 0; i < log.n; i++) {
		free(log.v[i].val);
		free(log.v[i].prod);
	}
	free(acks.v);
	free(log.v);
	free(next);
	free(byval);
	free(byoff);
	free(ackv);
	return nviol ? 1 : 0;
}
