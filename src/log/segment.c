/* segment.c — segment files: names, scanning batches, sparse indexes. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "contract/contract.h"
#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/crc32c.h"
#include "util/lock_rank.h"

int kaas_seg_parse_name(const char *name, int64_t *base, uint32_t *epoch, uint32_t *gen,
			const char **ext)
{
	/* 20 digits, '-', 10 digits, optionally '-' and 10 digits (the
	 * cleaning generation), '.', extension */
	for (int i = 0; i < 20; i++)
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
	if (name[20] != '-')
		return -EINVAL;
	for (int i = 21; i < 31; i++)
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
	uint64_t b = 0, e = 0, g = 0;
	int dot = 31;
	if (name[31] == '-') {
		for (int i = 32; i < 42; i++) {
			if (name[i] < '0' || name[i] > '9')
				return -EINVAL;
			g = g * 10 + (uint64_t)(name[i] - '0');
		}
		if (g == 0 || g > UINT32_MAX)
			return -EINVAL; /* generation 0 is the name without one */
		dot = 42;
	}
	if (name[dot] != '.')
		return -EINVAL;
	for (int i = 0; i < 20; i++)
		b = b * 10 + (uint64_t)(name[i] - '0');
	for (int i = 21; i < 31; i++)
		e = e * 10 + (uint64_t)(name[i] - '0');
	if (b > INT64_MAX || e > UINT32_MAX)
		return -EINVAL;
	*base = (int64_t)b;
	*epoch = (uint32_t)e;
	*gen = (uint32_t)g;
	*ext = name + dot + 1;
	return 0;
}

char *kaas_seg_path(const char *dir, int64_t base, uint32_t epoch, uint32_t gen, const char *ext)
{
	char name[80];
	if (gen)
		snprintf(name, sizeof name, "%020" PRId64 "-%010" PRIu32 "-%010" PRIu32 ".%s", base,
			 epoch, gen, ext);
	else
		snprintf(name, sizeof name, "%020" PRId64 "-%010" PRIu32 ".%s", base, epoch, ext);
	return kaas_path_join(dir, name);
}

struct segment *kaas_seg_new(const char *dir, int64_t base, uint32_t epoch, uint32_t gen)
{
	struct segment *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->path = kaas_seg_path(dir, base, epoch, gen, "log");
	if (!s->path) {
		free(s);
		return NULL;
	}
	s->base = base;
	s->next = base;
	s->epoch = epoch;
	s->gen = gen;
	s->max_ts = -1;
	atomic_init(&s->refs, 1);
	s->created_ms = kaas_logi_now_ms_wall();
	pthread_mutex_init(&s->rlock, NULL);
	pthread_mutex_init(&s->ilock, NULL);
	kaas_logi_fslot_init(&s->rslot, &s->rlock, KAAS_RANK_SEG_READ, &s->refs);
	return s;
}

void kaas_seg_ref(struct segment *s)
{
	int old = atomic_fetch_add(&s->refs, 1);
	assert(old > 0); /* a segment with no reference may already be unlinked */
	(void)old;
}

void kaas_seg_unref(struct segment *s)
{
	int old = atomic_fetch_sub(&s->refs, 1);
	assert(old > 0);
	(void)old;
}

void kaas_seg_ref_zero(struct segment *s)
{
	int old = atomic_fetch_add(&s->refs, 1);
	assert(old == 0); /* only the reaper, giving a doomed segment back its list's reference */
	(void)old;
}

void kaas_seg_free(struct segment *s)
{
	if (!s)
		return;
	kaas_lock(&s->rlock, KAAS_RANK_SEG_READ); /* the file cache closes under it */
	kaas_logi_fslot_close(&s->rslot);
	kaas_unlock(&s->rlock);
	kaas_segidx_free(&s->ix);
	pthread_mutex_destroy(&s->rlock);
	pthread_mutex_destroy(&s->ilock);
	free(s->path);
	free(s);
}

int kaas_seg_open_read(struct kaas_substrate *sub, struct segment *s)
{
	assert_held(&s->rlock);
	return kaas_logi_fslot_open(sub, &s->rslot, s->path, KAAS_O_READ);
}

/* ------------------------------------------------------------ index */

int kaas_segidx_push(struct seg_index *ix, uint32_t rel, uint32_t pos, int64_t ts)
{
	struct idx_entry *ne = kaas_grow(ix->e, &ix->cap, ix->n, sizeof *ix->e, 64);
	if (!ne)
		return -ENOMEM;
	ix->e = ne;
	ix->e[ix->n++] = (struct idx_entry){ .rel = rel, .pos = pos, .ts = ts };
	ix->last_pos = pos;
	return 0;
}

void kaas_segidx_free(struct seg_index *ix)
{
	free(ix->e);
	memset(ix, 0, sizeof *ix);
}

const struct idx_entry *kaas_segidx_floor_rel(const struct seg_index *ix, uint32_t rel)
{
	size_t lo = 0, hi = ix->n; /* first entry with e.rel > rel */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ix->e[mid].rel <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ix->e[lo - 1] : NULL;
}

const struct idx_entry *kaas_segidx_floor_ts(const struct seg_index *ix, int64_t ts)
{
	size_t lo = 0, hi = ix->n; /* entries' ts never decrease */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ix->e[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ix->e[lo - 1] : NULL;
}

/* ------------------------------------------------------------- scan */

/* Read the scan's window: up to cap bytes (no more than room) at pos into
 * buf, which then holds [*bpos, *bpos + *blen).  0 or -errno. */
static int scan_window(struct kaas_file *f, unsigned char *buf, size_t cap, uint64_t room, uint64_t pos,
		       uint64_t *bpos, size_t *blen)
{
	size_t want = room < cap ? (size_t)room : cap;
	ssize_t n = kaas_sub_pread_full(f, buf, want, pos);
	if (n < 0)
		return (int)n;
	*bpos = pos;
	*blen = (size_t)n;
	return 0;
}

int kaas_seg_scan(struct kaas_file *f, uint64_t pos, int64_t expect, uint64_t limit, int check_crc,
	     int want_body, scan_cb cb, void *arg, uint64_t *end_pos, int64_t *next_offset)
{
	int body = check_crc || want_body;
	size_t cap = body ? (1u << 20) : (16u << 10);
	unsigned char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	uint64_t bpos = 0; /* file position of buf[0] */
	size_t blen = 0;
	int rc = 0;
	for (;;) {
		if (pos >= limit)
			break;
		uint64_t room = limit - pos;
		if (room < KAAS_BATCH_HEADER_LEN)
			break;
		if (pos < bpos || pos + KAAS_BATCH_HEADER_LEN > bpos + blen) {
			rc = scan_window(f, buf, cap, room, pos, &bpos, &blen);
			if (rc < 0 || blen < KAAS_BATCH_HEADER_LEN)
				break;
		}
		struct kaas_batch_header h;
		if (kaas_batch_parse_header(buf + (pos - bpos), blen - (pos - bpos), &h) < 0)
			break;
		uint64_t total = (uint64_t)h.batch_length + 12;
		if (total > room)
			break;
		/* A CRC scan (a tail) takes batches in exact succession; below a
		 * recorded end a cleaned segment has gaps: offsets only grow. */
		if (expect >= 0 && (check_crc ? h.base_offset != expect : h.base_offset < expect))
			break;
		const unsigned char *bb = NULL;
		if (body) {
			if (pos + total > bpos + blen) {
				if (total > cap) {
					unsigned char *nb = realloc(buf, (size_t)total);
					if (!nb) {
						rc = -ENOMEM;
						break;
					}
					buf = nb;
					cap = (size_t)total;
				}
				rc = scan_window(f, buf, cap, room, pos, &bpos, &blen);
				if (rc < 0 || blen < total)
					break;
			}
			bb = buf + (pos - bpos);
			if (check_crc && !kaas_batch_crc_ok(bb, (size_t)total))
				break;
		}
		if (cb) {
			rc = cb(arg, &h, pos, bb, (size_t)total);
			if (rc < 0)
				break;
			if (rc > 0) { /* stop before this batch */
				rc = 0;
				break;
			}
		}
		pos += total;
		expect = h.base_offset + h.last_offset_delta + 1;
	}
	free(buf);
	if (rc < 0)
		return rc;
	*end_pos = pos;
	*next_offset = expect;
	return 0;
}

/* -------------------------------------------------- index files */

#define IDX_HDR 32

static void idx_header(unsigned char *p, const char *magic, int64_t base, uint64_t end,
		       uint32_t count, uint32_t crc)
{
	memcpy(p, magic, 8);
	wr64(p + 8, (uint64_t)base);
	wr64(p + 16, end);
	wr32(p + 24, count);
	wr32(p + 28, crc);
}

int kaas_seg_index_write(struct kaas_substrate *sub, struct segment *s)
{
	size_t n = s->ix.n;
	size_t olen = IDX_HDR + n * 8, tlen = IDX_HDR + n * 8;
	unsigned char *o = malloc(olen), *t = malloc(tlen);
	char *op = NULL, *tp = NULL;
	int rc = -ENOMEM;
	if (!o || !t)
		goto out;
	for (size_t i = 0; i < n; i++) {
		wr32(o + IDX_HDR + i * 8, s->ix.e[i].rel);
		wr32(o + IDX_HDR + i * 8 + 4, s->ix.e[i].pos);
		wr64(t + IDX_HDR + i * 8, (uint64_t)s->ix.e[i].ts);
	}
	idx_header(o, "KAASIX01", s->base, s->end, (uint32_t)n,
		   kaas_crc32c(0, o + IDX_HDR, n * 8));
	idx_header(t, "KAASTI01", s->base, s->end, (uint32_t)n,
		   kaas_crc32c(0, t + IDX_HDR, n * 8));
	size_t pl = strlen(s->path);
	op = malloc(pl + 8);
	tp = malloc(pl + 12);
	if (!op || !tp)
		goto out;
	memcpy(op, s->path, pl - 3);
	strcpy(op + pl - 3, "index");
	memcpy(tp, s->path, pl - 3);
	strcpy(tp + pl - 3, "timeindex");
	rc = kaas_replace(sub, op, o, olen);
	if (rc == 0)
		rc = kaas_replace(sub, tp, t, tlen);
out:
	free(o);
	free(t);
	free(op);
	free(tp);
	return rc;
}

/* Read one index file: 0 and malloc'd entries (8 bytes each), or < 0. */
static int idx_file_load(struct kaas_substrate *sub, const struct segment *s, const char *ext,
			 const char *magic, unsigned char **ent, uint32_t *count, uint64_t *covered)
{
	size_t pl = strlen(s->path);
	char *p = malloc(pl + 12);
	if (!p)
		return -ENOMEM;
	memcpy(p, s->path, pl - 3);
	strcpy(p + pl - 3, ext);
	char *buf = NULL;
	size_t len = 0;
	int rc = kaas_sub_read_all(sub, p, 256u << 20, &buf, &len);
	free(p);
	if (rc < 0)
		return rc;
	const unsigned char *u = (const unsigned char *)buf;
	rc = -EBADMSG;
	/* An index covering a prefix of the segment is fine (written at a
	 * checkpoint of the then active segment): the bytes below its end
	 * never change. */
	if (len < IDX_HDR || memcmp(u, magic, 8) != 0 || (int64_t)rd64(u + 8) != s->base ||
	    rd64(u + 16) > s->end)
		goto out;
	*covered = rd64(u + 16);
	uint32_t n = rd32(u + 24);
	if ((size_t)n * 8 != len - IDX_HDR || kaas_crc32c(0, u + IDX_HDR, (size_t)n * 8) != rd32(u + 28))
		goto out;
	*ent = malloc((size_t)n * 8 + 1);
	if (!*ent) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*ent, u + IDX_HDR, (size_t)n * 8);
	*count = n;
	rc = 0;
out:
	free(buf);
	return rc;
}

static int idx_load(struct kaas_substrate *sub, struct segment *s)
{
	unsigned char *o = NULL, *t = NULL;
	uint32_t no = 0, nt = 0;
	uint64_t co = 0, ct = 0;
	int rc = idx_file_load(sub, s, "index", "KAASIX01", &o, &no, &co);
	if (rc == 0)
		rc = idx_file_load(sub, s, "timeindex", "KAASTI01", &t, &nt, &ct);
	if (rc == 0 && (no != nt || co != ct))
		rc = -EBADMSG;
	struct seg_index ix = { 0 };
	for (uint32_t i = 0; rc == 0 && i < no; i++) {
		uint32_t rel = rd32(o + i * 8), pos = rd32(o + i * 8 + 4);
		int64_t ts = (int64_t)rd64(t + i * 8);
		/* Doubtful entries (out of order, past the end) reject the file. */
		if (pos >= co || (ix.n && (rel <= ix.e[ix.n - 1].rel || pos <= ix.e[ix.n - 1].pos ||
					      ts < ix.e[ix.n - 1].ts)))
			rc = -EBADMSG;
		else
			rc = kaas_segidx_push(&ix, rel, pos, ts);
	}
	free(o);
	free(t);
	if (rc < 0) {
		kaas_segidx_free(&ix);
		return rc;
	}
	ix.covered = co;
	kaas_segidx_free(&s->ix);
	s->ix = ix;
	return 0;
}

struct rebuild {
	struct segment *s;
	uint32_t interval;
	int64_t run_max;
	int err;
};

static int rebuild_cb(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		      const unsigned char *batch, size_t len)
{
	struct rebuild *r = arg;
	if (h->max_timestamp > r->run_max)
		r->run_max = h->max_timestamp;
	struct seg_index *ix = &r->s->ix;
	if (ix->n == 0 || pos - ix->last_pos >= r->interval)
		return kaas_segidx_push(ix, (uint32_t)(h->base_offset - r->s->base), (uint32_t)pos, r->run_max);
	return 0;
}

int kaas_seg_index_ensure(struct kaas_substrate *sub, struct segment *s, uint32_t interval,
		     int may_write)
{
	if (s->index_ready)
		return 0;
	if (idx_load(sub, s) == 0 && s->ix.covered == s->end) {
		s->index_ready = true;
		return 0;
	}
	/* Rebuild from the segment (lengths only: the bytes below a recorded
	 * end were CRC-checked when written or recovered) — from the last entry
	 * of a prefix index when there is one, else from the start. */
	struct rebuild r = { .s = s, .interval = interval ? interval : 4096, .run_max = -1 };
	uint64_t from = 0;
	int64_t expect = s->base;
	if (s->ix.n && s->ix.covered <= s->end) {
		const struct idx_entry *last = &s->ix.e[s->ix.n - 1];
		from = last->pos;
		expect = s->base + last->rel;
		r.run_max = last->ts;
	} else {
		kaas_segidx_free(&s->ix);
	}
	int rc = 0;
	kaas_lock(&s->rlock, KAAS_RANK_SEG_READ);
	rc = kaas_seg_open_read(sub, s);
	uint64_t end = 0;
	int64_t next = 0;
	if (rc == 0)
		rc = kaas_seg_scan(s->rslot.f, from, expect, s->end, 0, 0, rebuild_cb, &r, &end, &next);
	kaas_unlock(&s->rlock);
	if (rc == 0 && end != s->end)
		rc = kaas_sub_fail(EUCLEAN, "segment %s: batches end at %" PRIu64
				   " but the manifest records %" PRIu64, s->path, end, s->end);
	if (rc < 0) {
		kaas_segidx_free(&s->ix);
		return rc;
	}
	s->ix.covered = s->end;
	s->index_ready = true;
	if (may_write)
		kaas_seg_index_write(sub, s); /* derived data: a failure only costs a rebuild later */
	return 0;
}
