/*
 * chaos_check.c — the checker of a chaos run (scripts/chaos).
 *
 *   chaos_check [OPTIONS] ACKS CONSUMED
 *
 * ACKS: "TOPIC PARTITION OFFSET VALUE" per acknowledged record (chaos_client
 * produce); CONSUMED: the same per record read back after healing
 * (chaos_client consume).  VALUE is "PRODUCER-SEQ".  Checks, per partition:
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
 * OPTIONS:
 *   --incarnation TOPIC=PREFIX  every record read back from TOPIC has a
 *       value starting with PREFIX (the current incarnation's producer);
 *       others are stale_incarnation (records of a deleted incarnation).
 *   --group-topics T1,T2,...  --group-consumed FILE  every acknowledged
 *       record of these topics is in FILE (what the group's members were
 *       given, same format as CONSUMED); else group_skipped.
 *   --commits FILE  "GROUP TOPIC PARTITION OFFSET SENT_US ACKED_US MEMBER"
 *       per acknowledged commit: a commit sent after another one was
 *       acknowledged never has a lower offset (commit_backwards).
 *   --hwm FILE  "MEMBER TOPIC PARTITION HWM" in observation order per
 *       member: never lower than that member's previous one (hwm_backwards).
 *   --extra KIND FILE  each line of FILE is a violation of KIND (leftover:
 *       .trash or silly-renamed files after healing; corrupt_document: a
 *       broker read a torn or missing document; stuck_delete: a deleted
 *       topic could not be re-created).
 *   --kv SENT ACKS READ  the key-value workload of a compacted topic
 *       (chaos_kv.c: kv_lost, kv_stale, kv_phantom, kv_mismatch, kv_moved,
 *       kv_duplicate, kv_order); its counts are the output's "kv" object.
 *       Its topic's records are not in ACKS nor CONSUMED.
 * Prints one JSON object on stdout: {"topics","partitions","acknowledged",
 * "consumed",...,"violation_count","by_kind":{...},"violations":[first 10000,
 * with evidence]}.  Exit 0 when there is no violation, 1 when there are, 2
 * on bad input.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_check.h"

struct chaos_part *chaos_parts;
static int nparts;

struct rec {
	int k; /* partition key (chaos_parts[k]) */
	long long off;
	char *val;
	char *prod; /* VALUE up to its last '-' */
	long seq;   /* after it (-1 when VALUE has no '-') */
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

#define MAX_SHOWN 10000
static long nviol, unknown_off;
static int shown;
static const char *kinds[NKINDS] = { "lost",	       "moved",		 "duplicate",
				     "double_ack",     "reorder",	 "gap",
				     "non_monotonic",  "stale_incarnation", "group_skipped",
				     "commit_backwards", "hwm_backwards",	 "leftover",
				     "corrupt_document", "stuck_delete",	 "kv_lost",
				     "kv_stale",	 "kv_phantom",	 "kv_mismatch",
				     "kv_moved",	 "kv_duplicate",	 "kv_order" };
static long by_kind[NKINDS];

void *chaos_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "chaos_check: out of memory\n");
		exit(2);
	}
	return p;
}

char *chaos_xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fprintf(stderr, "chaos_check: out of memory\n");
		exit(2);
	}
	return d;
}


int chaos_check_part(const char *topic, int p)
{
	static int last = -1;
	if (last >= 0 && chaos_parts[last].p == p && !strcmp(chaos_parts[last].topic, topic))
		return last;
	for (int i = 0; i < nparts; i++)
		if (chaos_parts[i].p == p && !strcmp(chaos_parts[i].topic, topic))
			return last = i;
	chaos_parts = chaos_xrealloc(chaos_parts, sizeof(*chaos_parts) * (size_t)(nparts + 1));
	chaos_parts[nparts].topic = chaos_xstrdup(topic);
	chaos_parts[nparts].p = p;
	return last = nparts++;
}

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

void chaos_violation(int kind, int k, const char *fmt, ...)
{
	nviol++;
	by_kind[kind]++;
	if (shown >= MAX_SHOWN)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%s{\"kind\":\"%s\",", shown ? "," : "", kinds[kind]);
	if (k >= 0) {
		printf("\"topic\":");
		json_str(chaos_parts[k].topic);
		printf(",\"partition\":%d,", chaos_parts[k].p);
	}
	printf("\"evidence\":");
	json_str(buf);
	putchar('}');
	shown++;
}

/* Reads FILE ("TOPIC PARTITION OFFSET VALUE" lines) into R; returns 0, or
 * -errno / -EINVAL (a malformed line, named on stderr). */
static int load(const char *file, struct recs *r)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "chaos_check: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	char line[1024], topic[256];
	long lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t len = strcspn(line, "\n");
		line[len] = 0;
		int p, used = 0;
		long long off;
		if (sscanf(line, "%255s %d %lld %n", topic, &p, &off, &used) != 3 || used == 0 ||
		    !line[used] || p < 0) {
			fprintf(stderr, "chaos_check: %s:%ld: malformed line '%s'\n", file, lineno, line);
			fclose(f);
			return -EINVAL;
		}
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 4096;
			r->v = chaos_xrealloc(r->v, r->cap * sizeof(*r->v));
		}
		struct rec *x = &r->v[r->n++];
		x->k = chaos_check_part(topic, p);
		x->off = off;
		x->val = chaos_xstrdup(line + used);
		x->prod = chaos_xstrdup(line + used);
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

static void free_recs(struct recs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].val);
		free(r->v[i].prod);
	}
	free(r->v);
}

static int by_p_off(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int by_p_val(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return strcmp(x->val, y->val);
}

static int by_p_prod_seq(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	int c = strcmp(x->prod, y->prod);
	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct rec *sorted_copy(const struct recs *r, int (*cmp)(const void *, const void *))
{
	struct rec *v = chaos_xrealloc(NULL, (r->n + 1) * sizeof(*v));
	if (r->n) /* r->v is NULL when nothing was loaded */
		memcpy(v, r->v, r->n * sizeof(*v));
	qsort(v, r->n, sizeof(*v), cmp);
	return v;
}

/* --- commits ------------------------------------------------------------ */
struct commit {
	char *gkey; /* "GROUP TOPIC PARTITION" */
	long long off, sent, acked;
	char *member;
	int k;
};
static struct commit *commits;
static size_t ncommits;

static int load_commits(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "chaos_check: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	char line[1024], g[256], t[256], m[256];
	long lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		int p;
		long long off, sent, acked;
		if (sscanf(line, "%255s %255s %d %lld %lld %lld %255s", g, t, &p, &off, &sent, &acked,
			   m) != 7 ||
		    p < 0) {
			fprintf(stderr, "chaos_check: %s:%ld: malformed commit line\n", file, lineno);
			fclose(f);
			return -EINVAL;
		}
		commits = chaos_xrealloc(commits, sizeof(*commits) * (ncommits + 1));
		struct commit *c = &commits[ncommits++];
		char gk[800];
		snprintf(gk, sizeof(gk), "%s %s %d", g, t, p);
		c->gkey = chaos_xstrdup(gk);
		c->off = off;
		c->sent = sent;
		c->acked = acked;
		c->member = chaos_xstrdup(m);
		c->k = chaos_check_part(t, p);
	}
	fclose(f);
	return 0;
}

static int by_sent(const void *a, const void *b)
{
	const struct commit *x = *(struct commit *const *)a, *y = *(struct commit *const *)b;
	return x->sent < y->sent ? -1 : x->sent > y->sent;
}

static int by_acked(const void *a, const void *b)
{
	const struct commit *x = *(struct commit *const *)a, *y = *(struct commit *const *)b;
	return x->acked < y->acked ? -1 : x->acked > y->acked;
}

/* A commit sent after another one of the same group partition was
 * acknowledged must not have a lower offset. */
static void check_commits(void)
{
	struct commit **s = chaos_xrealloc(NULL, sizeof(*s) * (ncommits + 1));
	struct commit **a = chaos_xrealloc(NULL, sizeof(*a) * (ncommits + 1));
	for (size_t i = 0; i < ncommits; i++)
		s[i] = a[i] = &commits[i];
	qsort(s, ncommits, sizeof(*s), by_sent);
	qsort(a, ncommits, sizeof(*a), by_acked);
	/* best[j]: the highest acknowledged commit so far of distinct gkey j */
	struct commit **best = NULL;
	size_t nbest = 0, j = 0;
	for (size_t i = 0; i < ncommits; i++) {
		for (; j < ncommits && a[j]->acked < s[i]->sent; j++) {
			size_t b;
			for (b = 0; b < nbest && strcmp(best[b]->gkey, a[j]->gkey); b++)
				;
			if (b == nbest) {
				best = chaos_xrealloc(best, sizeof(*best) * (nbest + 1));
				best[nbest++] = a[j];
			} else if (a[j]->off > best[b]->off) {
				best[b] = a[j];
			}
		}
		for (size_t b = 0; b < nbest; b++)
			if (!strcmp(best[b]->gkey, s[i]->gkey) && s[i]->off < best[b]->off)
				chaos_violation(COMMIT_BACKWARDS, s[i]->k,
					  "group %s: %s committed offset %lld (sent at %lld us) after %s's "
					  "commit of %lld was acknowledged (at %lld us)",
					  s[i]->gkey, s[i]->member, s[i]->off, s[i]->sent, best[b]->member,
					  best[b]->off, best[b]->acked);
	}
	free(best);
	free(s);
	free(a);
}

/* --- high watermarks ------------------------------------------------------ */
static int check_hwm(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "chaos_check: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	struct seen {
		char *mkey;
		long long hwm;
	} *seen = NULL;
	size_t nseen = 0;
	char line[1024], m[256], t[256];
	long lineno = 0;
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		int p;
		long long h;
		if (sscanf(line, "%255s %255s %d %lld", m, t, &p, &h) != 4 || p < 0) {
			fprintf(stderr, "chaos_check: %s:%ld: malformed high watermark line\n", file,
				lineno);
			rc = -EINVAL;
			break;
		}
		char mk[800];
		snprintf(mk, sizeof(mk), "%s %s %d", m, t, p);
		size_t i;
		for (i = 0; i < nseen && strcmp(seen[i].mkey, mk); i++)
			;
		if (i == nseen) {
			seen = chaos_xrealloc(seen, sizeof(*seen) * (nseen + 1));
			seen[nseen].mkey = chaos_xstrdup(mk);
			seen[nseen++].hwm = h;
		} else {
			if (h < seen[i].hwm)
				chaos_violation(HWM_BACKWARDS, chaos_check_part(t, p),
					  "consumer %s saw the high watermark go from %lld to %lld", m,
					  seen[i].hwm, h);
			if (h > seen[i].hwm)
				seen[i].hwm = h;
		}
	}
	fclose(f);
	for (size_t i = 0; i < nseen; i++)
		free(seen[i].mkey);
	free(seen);
	return rc;
}

static int extra(int kind, const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "chaos_check: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			chaos_violation(kind, -1, "%s", line);
	}
	fclose(f);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: chaos_check [--incarnation TOPIC=PREFIX]... [--group-topics T1,T2 "
			"--group-consumed FILE] [--commits FILE] [--hwm FILE] [--extra KIND FILE]... "
			"[--kv SENT ACKS READ] ACKS CONSUMED\n");
	return 2;
}

static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *s = list; s && *s;) {
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == n && !strncmp(s, name, n))
			return 1;
		s = e ? e + 1 : NULL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *inc[16], *group_topics = NULL, *group_consumed = NULL, *commits_file = NULL,
			    *hwm_file = NULL, *extra_kind[16], *extra_file[16], *kv[3] = { 0 };
	int ninc = 0, nextra = 0, i;
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(o, "--incarnation") && ninc < 16 && strchr(argv[i + 1], '='))
			inc[ninc++] = argv[++i];
		else if (!strcmp(o, "--group-topics"))
			group_topics = argv[++i];
		else if (!strcmp(o, "--group-consumed"))
			group_consumed = argv[++i];
		else if (!strcmp(o, "--commits"))
			commits_file = argv[++i];
		else if (!strcmp(o, "--hwm"))
			hwm_file = argv[++i];
		else if (!strcmp(o, "--kv") && i + 3 < argc) {
			kv[0] = argv[i + 1];
			kv[1] = argv[i + 2];
			kv[2] = argv[i + 3];
			i += 3;
		}
		else if (!strcmp(o, "--extra") && nextra < 16 && i + 2 < argc) {
			int k;
			for (k = 0; k < NKINDS && strcmp(kinds[k], argv[i + 1]); k++)
				;
			if (k == NKINDS) {
				fprintf(stderr, "chaos_check: unknown kind '%s'\n", argv[i + 1]);
				return 2;
			}
			extra_kind[nextra] = kinds[k];
			extra_file[nextra++] = argv[i + 2];
			i += 2;
		} else {
			fprintf(stderr, "chaos_check: bad option '%s'\n", o);
			return usage();
		}
	}
	if (argc - i != 2)
		return usage();
	struct recs acks = { 0 }, log = { 0 }, grp = { 0 };
	if (load(argv[i], &acks) < 0 || load(argv[i + 1], &log) < 0 ||
	    (group_consumed && load(group_consumed, &grp) < 0) ||
	    (commits_file && load_commits(commits_file) < 0))
		return 2;
	printf("{\"violations\":[");

	/* Offsets as read (in read order): dense from 0, monotonic. */
	long long *next = chaos_xrealloc(NULL, sizeof(*next) * (size_t)(nparts + 1));
	memset(next, 0, sizeof(*next) * (size_t)(nparts + 1));
	for (size_t j = 0; j < log.n; j++) {
		struct rec *x = &log.v[j];
		if (x->off > next[x->k])
			chaos_violation(GAP, x->k, "offsets %lld..%lld missing (next read was %lld, value %s)",
				  next[x->k], x->off - 1, x->off, x->val);
		else if (x->off < next[x->k])
			chaos_violation(NON_MONOTONIC, x->k, "offset %lld read after offset %lld (value %s)",
				  x->off, next[x->k] - 1, x->val);
		if (x->off >= next[x->k])
			next[x->k] = x->off + 1;
	}

	/* Records of another incarnation of a re-created topic. */
	for (int n = 0; n < ninc; n++) {
		const char *eq = strchr(inc[n], '=');
		size_t tl = (size_t)(eq - inc[n]), pl = strlen(eq + 1);
		for (size_t j = 0; j < log.n; j++) {
			struct rec *x = &log.v[j];
			if (strlen(chaos_parts[x->k].topic) == tl && !strncmp(chaos_parts[x->k].topic, inc[n], tl) &&
			    strncmp(x->val, eq + 1, pl))
				chaos_violation(STALE_INCARNATION, x->k,
					  "offset %lld holds %s; the current incarnation writes %s*", x->off,
					  x->val, eq + 1);
		}
	}

	/* Duplicates in the log; then each value's offsets by value lookup. */
	struct rec *byval = sorted_copy(&log, by_p_val), *byoff = sorted_copy(&log, by_p_off);
	for (size_t j = 1; j < log.n; j++)
		if (byval[j].k == byval[j - 1].k && !strcmp(byval[j].val, byval[j - 1].val))
			chaos_violation(DUPLICATE, byval[j].k, "value %s at offsets %lld and %lld", byval[j].val,
				  byval[j - 1].off, byval[j].off);

	/* Every acknowledged record at its offset. */
	for (size_t j = 0; j < acks.n; j++) {
		struct rec *a = &acks.v[j];
		if (a->off < 0) {
			/* Acknowledged without an offset (librdkafka reports -1
			 * for a DUPLICATE_SEQUENCE_NUMBER answer): present is
			 * enough; the duplicate check covers "exactly once". */
			unknown_off++;
			if (!bsearch(a, byval, log.n, sizeof(*byval), by_p_val))
				chaos_violation(LOST, a->k, "value %s acknowledged (offset unknown); not in the log",
					  a->val);
			continue;
		}
		struct rec *at = bsearch(a, byoff, log.n, sizeof(*byoff), by_p_off);
		if (at && !strcmp(at->val, a->val))
			continue;
		struct rec *elsewhere = bsearch(a, byval, log.n, sizeof(*byval), by_p_val);
		if (elsewhere)
			chaos_violation(MOVED, a->k, "value %s acknowledged at offset %lld, found at offset %lld",
				  a->val, a->off, elsewhere->off);
		else if (at)
			chaos_violation(LOST, a->k, "value %s acknowledged at offset %lld; that offset holds %s",
				  a->val, a->off, at->val);
		else
			chaos_violation(LOST, a->k, "value %s acknowledged at offset %lld; log read has %lld records",
				  a->val, a->off, next[a->k]);
	}

	/* Acknowledged twice; a producer's records in sequence order. */
	struct rec *ackv = sorted_copy(&acks, by_p_val);
	for (size_t j = 1; j < acks.n; j++)
		if (ackv[j].k == ackv[j - 1].k && !strcmp(ackv[j].val, ackv[j - 1].val))
			chaos_violation(DOUBLE_ACK, ackv[j].k, "value %s acknowledged at offsets %lld and %lld",
				  ackv[j].val, ackv[j - 1].off, ackv[j].off);
	qsort(ackv, acks.n, sizeof(*ackv), by_p_prod_seq);
	for (size_t j = 1; j < acks.n; j++) {
		struct rec *x = &ackv[j - 1], *y = &ackv[j];
		if (x->k == y->k && !strcmp(x->prod, y->prod) && x->seq != y->seq && x->off >= 0 &&
		    y->off >= 0 && y->off <= x->off)
			chaos_violation(REORDER, y->k, "%s-%ld acknowledged at offset %lld, before %s-%ld at %lld",
				  y->prod, y->seq, y->off, x->prod, x->seq, x->off);
	}

	/* The group: every acknowledged record of its topics was given to a
	 * member (resuming from committed offsets skipped none). */
	if (group_consumed) {
		struct rec *gv = sorted_copy(&grp, by_p_val);
		for (size_t j = 0; j < acks.n; j++) {
			struct rec *a = &acks.v[j];
			if (in_list(group_topics, chaos_parts[a->k].topic) &&
			    !bsearch(a, gv, grp.n, sizeof(*gv), by_p_val))
				chaos_violation(GROUP_SKIPPED, a->k,
					  "value %s acknowledged at offset %lld; no group member was given it",
					  a->val, a->off);
		}
		free(gv);
	}
	if (commits_file)
		check_commits();
	int rc = 0;
	if (hwm_file && check_hwm(hwm_file) < 0)
		rc = 2;
	if (!rc && kv[0] && chaos_kv_check(kv[0], kv[1], kv[2]) < 0)
		rc = 2;
	for (int n = 0; n < nextra && !rc; n++) {
		int k;
		for (k = 0; strcmp(kinds[k], extra_kind[n]); k++)
			;
		if (extra(k, extra_file[n]) < 0)
			rc = 2;
	}

	printf("],\"topics\":[");
	int nt = 0;
	for (int k = 0; k < nparts; k++) {
		int first = 1;
		for (int m = 0; m < k; m++)
			first &= strcmp(chaos_parts[m].topic, chaos_parts[k].topic) != 0;
		if (first) {
			printf("%s", nt++ ? "," : "");
			json_str(chaos_parts[k].topic);
		}
	}
	printf("],\"partitions\":%d,\"acknowledged\":%zu,\"consumed\":%zu,\"group_consumed\":%zu,"
	       "\"commits\":%zu,\"violation_count\":%ld,\"acknowledged_without_offset\":%ld,"
	       "\"by_kind\":{",
	       nparts, acks.n, log.n, grp.n, ncommits, nviol, unknown_off);
	for (int k = 0; k < NKINDS; k++)
		printf("%s\"%s\":%ld", k ? "," : "", kinds[k], by_kind[k]);
	printf("}");
	if (kv[0] && !rc) {
		printf(",\"kv\":");
		chaos_kv_stats();
	}
	printf("}\n");
	free_recs(&acks);
	free_recs(&log);
	free_recs(&grp);
	for (size_t j = 0; j < ncommits; j++) {
		free(commits[j].gkey);
		free(commits[j].member);
	}
	free(commits);
	for (int k = 0; k < nparts; k++)
		free(chaos_parts[k].topic);
	free(chaos_parts);
	free(next);
	free(byval);
	free(byoff);
	free(ackv);
	if (rc)
		return rc;
	return nviol ? 1 : 0;
}
