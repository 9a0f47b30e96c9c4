/* log_read.c — reads by offset and by time, waiting for new data. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/lock_rank.h"

/* Segment index holding `offset` (mu held): the last with base <= offset,
 * moved forward past segments that end at or before it.  -1 if none. */
static long find_seg(struct kaas_log *log, int64_t offset)
{
	assert_held(&log->mu);
	size_t lo = 0, hi = log->nsegs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (log->segs[mid]->base <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return log->nsegs ? 0 : -1;
	size_t i = lo - 1;
	while (i < log->nsegs && log->segs[i]->next <= offset)
		i++;
	return i < log->nsegs ? (long)i : -1;
}

struct locate {
	int64_t offset;
	size_t max;
	int found;
	uint64_t pos;
	size_t len;
	int64_t first, next;
	int64_t ts;        /* time lookup: first batch with max ts >= ts */
	int by_time;
	int64_t below;     /* offset lookup: no batch starting at or past this */
};

static int locate_cb(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		     const unsigned char *batch, size_t len)
{
	struct locate *l = arg;
	int64_t last = h->base_offset + h->last_offset_delta;
	if (!l->found) {
		/* by time: also skip batches wholly below the log start */
		if (last < l->offset || (l->by_time && h->max_timestamp < l->ts))
			return 0;
		/* past a gap of a cleaned segment, the first batch kept may
		 * start at or beyond the bound: nothing to read below it */
		if (!l->by_time && h->base_offset >= l->below)
			return 1;
		l->found = 1;
		l->pos = pos;
		l->len = len;
		l->first = h->base_offset;
		l->next = last + 1;
		l->ts = h->max_timestamp;
		return l->by_time ? 1 : 0;
	}
	if (l->len + len > l->max || h->base_offset >= l->below)
		return 1;
	l->len += len;
	l->next = last + 1;
	return 0;
}

/* Scan segment s from its index floor for `l` (s referenced). */
/* Keep at most cfg.max_loaded_indexes sealed segments' indexes in memory:
 * drop the least recently used other than `keep` (it is rebuilt, from its
 * files, on its next use).  No lock held on entry. */
void kaas_logi_evict_indexes(struct kaas_log *log, struct segment *keep)
{
	struct segment *victim = NULL;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	uint32_t loaded = 0;
	uint64_t oldest = UINT64_MAX;
	for (size_t i = 0; i < log->nsegs; i++) {
		struct segment *c = log->segs[i];
		if (!atomic_load(&c->ix_loaded))
			continue;
		loaded++;
		uint64_t u = atomic_load(&c->used);
		if (c != keep && u < oldest) {
			oldest = u;
			victim = c;
		}
	}
	if (loaded <= log->cfg.max_loaded_indexes)
		victim = NULL;
	if (victim)
		kaas_seg_ref(victim);
	kaas_unlock(&log->mu);
	if (!victim)
		return;
	kaas_lock(&victim->ilock, KAAS_RANK_SEG_INDEX);
	if (victim->sealed && victim->index_ready) {
		kaas_segidx_free(&victim->ix);
		victim->index_ready = false;
		atomic_store(&victim->ix_loaded, false);
	}
	kaas_unlock(&victim->ilock);
	kaas_seg_unref(victim);
}

static int seg_locate(struct kaas_log *log, struct segment *s, uint64_t limit, struct locate *l)
{
	kaas_lock(&s->ilock, KAAS_RANK_SEG_INDEX);
	int was_ready = s->index_ready;
	int rc = kaas_seg_index_ensure(log->sub, s, log->cfg.index_interval_bytes, s->sealed);
	int loaded_now = rc == 0 && !was_ready && s->sealed;
	if (loaded_now)
		atomic_store(&s->ix_loaded, true);
	atomic_store(&s->used, atomic_fetch_add(&log->tick, 1) + 1);
	const struct idx_entry *e = NULL;
	if (rc == 0) {
		if (l->by_time)
			e = kaas_segidx_floor_ts(&s->ix, l->ts);
		else
			e = kaas_segidx_floor_rel(&s->ix, (uint32_t)(l->offset - s->base));
	}
	uint64_t pos = e ? e->pos : 0;
	int64_t expect = e ? s->base + e->rel : s->base;
	kaas_unlock(&s->ilock);
	if (rc < 0)
		return rc;
	if (loaded_now)
		kaas_logi_evict_indexes(log, s);
	kaas_lock(&s->rlock, KAAS_RANK_SEG_READ);
	rc = kaas_seg_open_read(log->sub, s);
	uint64_t end;
	int64_t next;
	if (rc == 0)
		rc = kaas_seg_scan(s->rslot.f, pos, expect, limit, 0, 0, locate_cb, l, &end, &next);
	kaas_unlock(&s->rlock);
	return rc;
}

int kaas_log_read(struct kaas_log *log, int64_t offset, size_t max_bytes, struct kaas_log_slice *out)
{
	return kaas_log_read_below(log, offset, max_bytes, INT64_MAX, out);
}

int kaas_log_read_below(struct kaas_log *log, int64_t offset, size_t max_bytes, int64_t end,
			struct kaas_log_slice *out)
{
	memset(out, 0, sizeof *out);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	if (offset < log->log_start || offset > log->hwm) {
		int64_t ls = log->log_start, hw = log->hwm;
		kaas_unlock(&log->mu);
		return kaas_sub_fail(ERANGE, "read %s: offset %lld outside [%lld, %lld]", log->dir,
				     (long long)offset, (long long)ls, (long long)hw);
	}
	out->first_offset = out->next_offset = offset;
	if (offset == log->hwm || offset >= end) {
		kaas_unlock(&log->mu);
		return 0;
	}
	/* A cleaned segment (log_clean.c) has gaps: an offset it no longer
	 * holds is read from the next batch above it, in this segment or a
	 * later one (a consumer inside a removed range continues at the next
	 * retained offset). */
	int64_t probe = offset;
	struct segment *s = NULL;
	struct locate l;
	int rc = 0;
	for (;;) {
		long i = find_seg(log, probe);
		if (i < 0 || probe >= log->hwm || probe >= end) {
			kaas_unlock(&log->mu);
			/* Nothing retained from offset up to the high watermark
			 * (or the bound asked for). */
			if (probe > end)
				probe = end;
			out->next_offset = probe > offset ? probe : offset;
			return 0;
		}
		s = log->segs[i];
		uint64_t limit = s->end;
		kaas_seg_ref(s);
		kaas_unlock(&log->mu);
		/* probe is >= the segment's base: the index floor is relative */
		l = (struct locate){ .offset = probe, .max = max_bytes, .below = end };
		rc = seg_locate(log, s, limit, &l);
		if (rc < 0 || l.found)
			break;
		if (!s->gen) { /* only a cleaned segment has gaps */
			rc = kaas_sub_fail(EUCLEAN, "read %s: offset %lld not found below the recorded "
					   "end", s->path, (long long)offset);
			kaas_seg_unref(s);
			return rc;
		}
		probe = s->next;
		kaas_seg_unref(s);
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	}
	if (rc < 0) {
		kaas_seg_unref(s);
		return rc;
	}
	out->file = s->rslot.f; /* stays open: the slice pins the segment */
	out->path = s->path;
	out->pos = l.pos;
	out->len = l.len;
	out->first_offset = l.first;
	out->next_offset = l.next;
	out->seg_ = s;
	return 0;
}

ssize_t kaas_log_slice_sendfile(struct kaas_log_slice *s, int sockfd, size_t off, size_t len)
{
	struct segment *seg = s->seg_;
	if (!seg || off > s->len || len > s->len - off)
		return -EINVAL;
	kaas_lock(&seg->rlock, KAAS_RANK_SEG_READ);
	ssize_t n = kaas_sub_sendfile(seg->rslot.f, sockfd, s->pos + off, len);
	kaas_unlock(&seg->rlock);
	return n;
}

void kaas_log_slice_readahead(struct kaas_log_slice *s, size_t ahead)
{
	struct segment *seg = s->seg_;
	if (!seg || !s->len)
		return;
	uint64_t from = s->pos, to = s->pos + s->len + ahead;
	kaas_lock(&seg->rlock, KAAS_RANK_SEG_READ);
	if (seg->ra_end > from)
		from = seg->ra_end;
	if (to > from) {
		seg->ra_end = to;
		(void)kaas_sub_readahead(seg->rslot.f, from, to - from);
	}
	kaas_unlock(&seg->rlock);
}

ssize_t kaas_log_slice_pread(struct kaas_log_slice *s, void *buf, size_t len, size_t off)
{
	struct segment *seg = s->seg_;
	if (!seg || off > s->len || len > s->len - off)
		return -EINVAL;
	kaas_lock(&seg->rlock, KAAS_RANK_SEG_READ);
	ssize_t n = kaas_sub_pread_full(seg->rslot.f, buf, len, s->pos + off);
	kaas_unlock(&seg->rlock);
	if (n >= 0 && (size_t)n < len)
		return kaas_sub_fail(EIO, "%s: short read inside the recorded end", seg->path);
	return n;
}

void kaas_log_slice_release(struct kaas_log_slice *s)
{
	if (!s || !s->seg_)
		return;
	struct segment *seg = s->seg_;
	s->seg_ = NULL;
	s->file = NULL;
	kaas_seg_unref(seg);
}

int kaas_log_read_copy(struct kaas_log *log, int64_t offset, size_t max_bytes, void **buf,
		       size_t *len, int64_t *first_offset)
{
	*buf = NULL;
	*len = 0;
	struct kaas_log_slice s;
	int rc = kaas_log_read(log, offset, max_bytes, &s);
	if (rc < 0)
		return rc;
	if (first_offset)
		*first_offset = s.first_offset;
	if (s.len) {
		*buf = malloc(s.len);
		ssize_t n = *buf ? kaas_log_slice_pread(&s, *buf, s.len, 0) : -ENOMEM;
		if (n < 0) {
			free(*buf);
			*buf = NULL;
			rc = (int)n;
		} else {
			*len = s.len;
		}
	}
	kaas_log_slice_release(&s);
	return rc;
}

int kaas_log_offset_for_time(struct kaas_log *log, int64_t ts, int64_t *offset, int64_t *timestamp)
{
	return kaas_log_offset_for_time_from(log, ts, 0, offset, timestamp);
}

int kaas_log_offset_for_time_from(struct kaas_log *log, int64_t ts, int64_t from, int64_t *offset,
				  int64_t *timestamp)
{
	int64_t after = -1; /* look at segments with base above this */
	for (;;) {
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		int64_t start = log->log_start > from ? log->log_start : from;
		struct segment *s = NULL;
		for (size_t i = 0; i < log->nsegs && !s; i++) {
			struct segment *c = log->segs[i];
			if (c->base > after && c->next > start && c->end > 0 && c->max_ts >= ts)
				s = c;
		}
		if (!s) {
			kaas_unlock(&log->mu);
			return -ENOENT;
		}
		uint64_t limit = s->end;
		kaas_seg_ref(s);
		kaas_unlock(&log->mu);
		struct locate l = { .by_time = 1, .ts = ts, .offset = start };
		int rc = seg_locate(log, s, limit, &l);
		after = s->base;
		kaas_seg_unref(s);
		if (rc < 0)
			return rc;
		if (l.found && l.next > start) {
			if (offset)
				*offset = l.first < start ? start : l.first;
			if (timestamp)
				*timestamp = l.ts;
			return 0;
		}
	}
}

int kaas_log_max_timestamp(struct kaas_log *log, int64_t *timestamp)
{
	int64_t max = -1;
	int any = 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	for (size_t i = 0; i < log->nsegs; i++) {
		struct segment *c = log->segs[i];
		if (c->next > log->log_start && c->end > 0 && (!any || c->max_ts > max)) {
			max = c->max_ts;
			any = 1;
		}
	}
	kaas_unlock(&log->mu);
	if (!any)
		return -ENOENT;
	*timestamp = max;
	return 0;
}

int kaas_log_wait(struct kaas_log *log, int64_t offset, int timeout_ms)
{
	struct timespec dl;
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
	}
	int rc = 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	while (log->hwm <= offset && !log->failed && !log->stop) {
		if (timeout_ms < 0)
			pthread_cond_wait(&log->data_cv, &log->mu);
		else if (pthread_cond_timedwait(&log->data_cv, &log->mu, &dl) != 0)
			break;
	}
	if (log->hwm > offset)
		rc = 1;
	else if (log->failed)
		rc = log->failed;
	kaas_unlock(&log->mu);
	return rc;
}
