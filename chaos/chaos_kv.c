/*
 * chaos_kv.c — the key-value check of a chaos run (chaos_check --kv): what a
 * full read of a compacted topic returns against what was written.
 *
 * Inputs ("TOPIC PARTITION OFFSET KEY put|del ID" lines): SENT, every write
 * in the order it was sent (offset -1; a write the broker may hold is always
 * there); ACKS, the acknowledged ones; READ, a read of every partition from
 * its beginning to its end after the heal.  ID is unique per write
 * ("TAG.GEN-SEQ": one producer instance TAG.GEN sends SEQ 1, 2, ...).
 *
 * Per record read:
 *   kv_phantom   its ID was never sent (or an acknowledgement of an ID never
 *                sent);
 *   kv_mismatch  it was sent with another key or kind (put/del), or it was
 *                acknowledged at another offset;
 *   kv_moved     it is in another partition than it was sent to;
 *   kv_duplicate its ID is read twice;
 *   kv_order     a partition's offsets do not increase in read order.
 * Per key, with La its acknowledged write of the highest offset (an
 * acknowledgement without an offset takes the offset it is read at) and Lr
 * the record of the key read last (highest offset):
 *   kv_lost   La is a put and the key is absent (and no unacknowledged
 *             tombstone of the key was sent after La), or La's offset holds
 *             another record;
 *   kv_stale  Lr is older than La (La is missing: a compaction removed it,
 *             or a tombstone, while an older record stayed), or Lr is an
 *             unacknowledged write above La that La's own producer instance
 *             sent before La.
 * A tombstone La may be read as a tombstone or be absent (removed after
 * delete.retention.ms); an unacknowledged write above La is the key's value
 * (its acknowledgement was lost).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_check.h"

struct kv {
	int k;          /* partition key (chaos_parts[k]) */
	long long off;  /* -1: unknown */
	char *key;      /* "TOPIC KEY" */
	int del;        /* a tombstone */
	char *id;
	long pos;       /* line number in its file (SENT: the send order) */
};

struct kvs {
	struct kv *v;
	size_t n, cap;
};

static struct kvs sent, acks, rd;
static struct {
	long unresolved, keys, live, tombstones, absent, deleted;
} st;

/* Reads FILE into R; 0, or -errno / -EINVAL (a malformed line, named). */
static int load(const char *file, struct kvs *r)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "chaos_check: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	char line[1024], topic[256], key[256], kind[8], id[256];
	long lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		int p;
		long long off;
		if (sscanf(line, "%255s %d %lld %255s %7s %255s", topic, &p, &off, key, kind, id) != 6 ||
		    p < 0 || (strcmp(kind, "put") && strcmp(kind, "del"))) {
			fprintf(stderr, "chaos_check: %s:%ld: malformed key-value line '%s'\n", file,
				lineno, line);
			fclose(f);
			return -EINVAL;
		}
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 4096;
			r->v = chaos_xrealloc(r->v, r->cap * sizeof(*r->v));
		}
		struct kv *x = &r->v[r->n++];
		char tk[520];
		snprintf(tk, sizeof(tk), "%s %s", topic, key);
		x->k = chaos_check_part(topic, p);
		x->off = off < 0 ? -1 : off;
		x->key = chaos_xstrdup(tk);
		x->del = !strcmp(kind, "del");
		x->id = chaos_xstrdup(id);
		x->pos = lineno;
	}
	fclose(f);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->id, ((const struct kv *)b)->id);
}

static int by_key_off(const void *a, const void *b)
{
	const struct kv *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int by_key_pos(const void *a, const void *b)
{
	const struct kv *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static struct kv *sorted(const struct kvs *r, int (*cmp)(const void *, const void *))
{
	struct kv *v = chaos_xrealloc(NULL, (r->n + 1) * sizeof(*v));
	if (r->n) /* r->v is NULL when nothing was loaded */
		memcpy(v, r->v, r->n * sizeof(*v));
	qsort(v, r->n, sizeof(*v), cmp);
	return v;
}

static const struct kv *find_id(const struct kv *v, size_t n, const char *id)
{
	struct kv probe = { .id = (char *)id };
	return bsearch(&probe, v, n, sizeof(*v), by_id);
}

/* The producer instance of ID ("TAG.GEN") has length *plen; its SEQ. */
static long seq_of(const char *id, size_t *plen)
{
	const char *dash = strrchr(id, '-');
	*plen = dash ? (size_t)(dash - id) : strlen(id);
	return dash ? strtol(dash + 1, NULL, 10) : -1;
}

/* [*lo, *hi) of V (sorted by key) holding KEY, searched from *lo. */
static void key_range(const struct kv *v, size_t n, const char *key, size_t *lo, size_t *hi)
{
	while (*lo < n && strcmp(v[*lo].key, key) < 0)
		(*lo)++;
	*hi = *lo;
	while (*hi < n && !strcmp(v[*hi].key, key))
		(*hi)++;
}

static void check_records(const struct kv *sid, const struct kv *aid)
{
	int nk = 0;
	for (size_t j = 0; j < rd.n; j++)
		if (rd.v[j].k >= nk)
			nk = rd.v[j].k + 1;
	long long *last = chaos_xrealloc(NULL, sizeof(*last) * (size_t)(nk + 1));
	for (int k = 0; k < nk; k++)
		last[k] = -1;
	for (size_t j = 0; j < rd.n; j++) {
		const struct kv *r = &rd.v[j];
		if (r->off <= last[r->k])
			chaos_violation(KV_ORDER, r->k, "offset %lld (%s) read after offset %lld", r->off,
					r->id, last[r->k]);
		else
			last[r->k] = r->off;
		const struct kv *s = find_id(sid, sent.n, r->id);
		const struct kv *a = find_id(aid, acks.n, r->id);
		if (!s)
			chaos_violation(KV_PHANTOM, r->k, "offset %lld holds %s of %s: never written",
					r->off, r->id, r->key);
		else if (strcmp(s->key, r->key) || s->del != r->del)
			chaos_violation(KV_MISMATCH, r->k,
					"offset %lld holds %s as a %s of %s; it was written as a %s of %s",
					r->off, r->id, r->del ? "del" : "put", r->key,
					s->del ? "del" : "put", s->key);
		else if (s->k != r->k)
			chaos_violation(KV_MOVED, r->k, "offset %lld holds %s of %s, written to partition %d",
					r->off, r->id, r->key, chaos_parts[s->k].p);
		else if (a && a->off >= 0 && a->off != r->off)
			chaos_violation(KV_MISMATCH, r->k, "%s of %s acknowledged at offset %lld, read at %lld",
					r->id, r->key, a->off, r->off);
	}
	free(last);
	struct kv *rid = sorted(&rd, by_id);
	for (size_t j = 1; j < rd.n; j++)
		if (!strcmp(rid[j].id, rid[j - 1].id))
			chaos_violation(KV_DUPLICATE, rid[j].k, "%s of %s read at offsets %lld and %lld",
					rid[j].id, rid[j].key, rid[j - 1].off, rid[j].off);
	free(rid);
	for (size_t j = 0; j < acks.n; j++)
		if (!find_id(sid, sent.n, acks.v[j].id))
			chaos_violation(KV_PHANTOM, acks.v[j].k, "%s of %s acknowledged, never sent",
					acks.v[j].id, acks.v[j].key);
}

/* One key: its sends s[0..ns), acknowledgements a[0..na) and records read
 * r[0..nr) (each by offset). */
static void check_key(const struct kv *s, size_t ns, const struct kv *a, size_t na,
		      const struct kv *r, size_t nr, const struct kv *sid, const struct kv *aid)
{
	const struct kv *la = NULL, *lr = nr ? &r[nr - 1] : NULL;
	for (size_t j = 0; j < na; j++)
		if (a[j].off >= 0)
			la = &a[j];
	st.keys++;
	if (!lr)
		st.absent++;
	else if (lr->del)
		st.tombstones++;
	else
		st.live++;
	if (!la)
		return;
	if (la->del)
		st.deleted++;
	const struct kv *ls = find_id(sid, sent.n, la->id);
	long la_pos = ls ? ls->pos : 0;
	if (!lr) {
		if (la->del)
			return;
		for (size_t j = 0; j < ns; j++)
			if (s[j].del && s[j].pos > la_pos && !find_id(aid, acks.n, s[j].id))
				return; /* a later tombstone, unacknowledged, may have landed */
		chaos_violation(KV_LOST, la->k, "%s: %s acknowledged at offset %lld (the last); the key "
				"is absent", la->key, la->id, la->off);
	} else if (lr->off == la->off) {
		if (strcmp(lr->id, la->id))
			chaos_violation(KV_LOST, la->k, "%s: %s acknowledged at offset %lld (the last); "
					"that offset holds %s", la->key, la->id, la->off, lr->id);
	} else if (lr->off < la->off) {
		chaos_violation(KV_STALE, la->k, "%s: %s (%s) acknowledged at offset %lld (the last); "
				"the key's last record read is %s at offset %lld", la->key, la->id,
				la->del ? "del" : "put", la->off, lr->id, lr->off);
	} else if (!find_id(aid, acks.n, lr->id)) {
		size_t pa, pr;
		long qa = seq_of(la->id, &pa), qr = seq_of(lr->id, &pr);
		if (pa == pr && !strncmp(la->id, lr->id, pa) && qr < qa)
			chaos_violation(KV_STALE, la->k, "%s: %s read last at offset %lld, above %s "
					"acknowledged at %lld that its producer sent after it", la->key,
					lr->id, lr->off, la->id, la->off);
	}
}

int chaos_kv_check(const char *sent_file, const char *acks_file, const char *read_file)
{
	int rc;
	if ((rc = load(sent_file, &sent)) < 0 || (rc = load(acks_file, &acks)) < 0 ||
	    (rc = load(read_file, &rd)) < 0)
		return rc;
	struct kv *sid = sorted(&sent, by_id), *aid = sorted(&acks, by_id);
	/* An acknowledgement without an offset (a duplicate's answer) takes
	 * the offset its record is read at; else it cannot be placed. */
	struct kv *rid = sorted(&rd, by_id);
	for (size_t j = 0; j < acks.n; j++) {
		struct kv *a = &acks.v[j];
		if (a->off >= 0)
			continue;
		const struct kv *r = find_id(rid, rd.n, a->id);
		if (r)
			a->off = r->off;
		else
			st.unresolved++;
	}
	free(rid);
	free(aid);
	aid = sorted(&acks, by_id);
	check_records(sid, aid);
	struct kv *sk = sorted(&sent, by_key_pos), *ak = sorted(&acks, by_key_off),
		  *rk = sorted(&rd, by_key_off);
	size_t alo = 0, ahi, rlo = 0, rhi;
	for (size_t j = 0; j < sent.n;) {
		size_t e = j;
		while (e < sent.n && !strcmp(sk[e].key, sk[j].key))
			e++;
		key_range(ak, acks.n, sk[j].key, &alo, &ahi);
		key_range(rk, rd.n, sk[j].key, &rlo, &rhi);
		check_key(sk + j, e - j, ak + alo, ahi - alo, rk + rlo, rhi - rlo, sid, aid);
		j = e;
	}
	free(sk);
	free(ak);
	free(rk);
	free(sid);
	free(aid);
	return 0;
}

void chaos_kv_stats(void)
{
	long acked_del = 0;
	for (size_t j = 0; j < acks.n; j++)
		acked_del += acks.v[j].del;
	printf("{\"writes\":%zu,\"acknowledged\":%zu,\"acknowledged_tombstones\":%ld,"
	       "\"acknowledged_without_offset\":%ld,\"read\":%zu,\"keys\":%ld,\"live_keys\":%ld,"
	       "\"tombstones_read\":%ld,\"absent_keys\":%ld,\"keys_last_acknowledged_deleted\":%ld}",
	       sent.n, acks.n, acked_del, st.unresolved, rd.n, st.keys, st.live, st.tombstones,
	       st.absent, st.deleted);
	struct kvs *all[] = { &sent, &acks, &rd };
	for (int i = 0; i < 3; i++) {
		for (size_t j = 0; j < all[i]->n; j++) {
			free(all[i]->v[j].key);
			free(all[i]->v[j].id);
		}
		free(all[i]->v);
	}
}
