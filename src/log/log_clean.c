/* log_clean.c — the log cleaner (issue 21): one pass over the sealed
 * segments of a compacted partition, run by its leader.
 *
 * 1. Choose: the sealed segments from the front up to the first one whose
 *    newest timestamp is within min_compaction_lag_ms or that reaches the
 *    last stable offset (the active segment never); clean when the bytes
 *    never cleaned (generation 0) reach min_cleanable_dirty_ratio of them,
 *    or the oldest uncleaned one passed max_compaction_lag_ms, or a marker's
 *    delete horizon passed, or when forced.  With them: every producer's
 *    latest batch and the aborted transactions below them.
 * 2. Map: key → offset of its latest record over all chosen segments
 *    (aborted transactions' records left out).
 * 3. Write: consecutive chosen segments are merged (while their sizes add up
 *    to at most segment_bytes) into new files named with our epoch and a
 *    new cleaning generation, "<base:020>-<epoch:010>-<gen:010>.log", that
 *    keep the latest record of every key, drop tombstones older than
 *    delete_retention_ms and aborted transactions' records, and keep what
 *    the cleaner does not filter (records without a key; each producer's
 *    latest batch, emptied if need be; markers: write_marker).  Each record keeps
 *    its offset: the files have gaps, and each new segment covers the same
 *    offsets [base, next) as the ones it replaces.  Files and indexes are
 *    fsynced, then the directory.
 * 4. Switch (under wlock): if the pass removed abort markers, first the
 *    aborted index without their entries and the producer snapshot naming
 *    it (write_txn_derived); then the manifest replaced by one rename with the new
 *    list, then the fence checked again: only if no newer leader claimed
 *    the partition by then (any later one reads our manifest, as it reads
 *    after its claim) are the replaced segments doomed — unlinked once no
 *    slice holds them, re-driven by housekeeping while an unlink fails
 *    (an -EBUSY silly file, a transient error).  A fenced pass removes
 *    nothing: its files are orphans to whoever owns the partition.
 * A crash before the rename leaves the old set and orphan new files; after
 * it, the new set and orphan old files.  Orphans are unlinked by the next
 * open (kaas_logi_sweep_orphans) and by the next pass, which sweeps first. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "log/log_clean.h"
#include "util/assert_held.h"
#include "util/step.h"
#include "util/grow.h"
#include "util/lock_rank.h"

#define FLUSH_BYTES (1u << 20)

/* A producer as the pass sees it. */
struct ptrack {
	int64_t pid;
	int64_t keep_last;  /* last offset of its latest batch (-1: none): that
	                       batch stays, emptied if need be, so that producer
	                       state derived from the log keeps its sequence
	                       numbers, epoch and last marker */
	/* The walk (each phase from the front): its transaction. */
	bool in_txn;        /* a transactional batch seen since its last marker */
	bool aborted;       /* that transaction ends in an abort */
	bool has_data;      /* the write phase kept a batch of it */
};

/* The pass. */
struct pass {
	struct kaas_log *log;
	int64_t now;
	int64_t tomb_before;            /* tombstones older than this go */
	int64_t horizon;                /* a marker found empty now goes at this time */
	struct ptrack *prod;            /* by pid */
	size_t nprod;
	struct kaas_log_aborted_txn *aborted; /* the index's transactions that begin below
					       the candidates' end, by marker offset */
	size_t naborted;
	int64_t *gone_aborts;           /* abort markers removed (their index entries go) */
	size_t ngone, capgone;
	int64_t next_due;               /* the earliest horizon of a marker kept
	                                   with one (0: none) */
	bool retain;                    /* the batch being filtered is a producer's last */
	uint32_t interval;              /* index interval */
	struct segment **cand;          /* chosen, referenced, in list order */
	size_t n;
	struct segment **outs;          /* written */
	size_t nouts;
	struct kaas_clean_map *map;
	struct kaas_log_clean_stats st;
	/* Writing one output. */
	struct segment *out;
	struct kaas_file *f;
	unsigned char *buf;             /* bytes not yet written, from file position fpos */
	size_t blen, bcap;
	uint64_t fpos, opos;            /* flushed end; logical end */
	int64_t run_max;
	/* Filtering one batch. */
	const unsigned char *batch;
	size_t batch_len;
	const struct kaas_batch_header *h;
	struct kaas_clean_record *keep;
	size_t nkeep, capkeep, keep_bytes;
	int32_t seen;
	unsigned char *tmp;
	size_t tmpcap;
};

/* --------------------------------------------------- transactions */

static struct ptrack *ptrack_find(const struct pass *p, int64_t pid)
{
	size_t lo = 0, hi = p->nprod;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->prod[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nprod && p->prod[lo].pid == pid ? &p->prod[lo] : NULL;
}

/* Does the transaction of pid that holds offset `at` end in an abort?  Its
 * entry is pid's first one whose marker is at or after `at`. */
static bool is_aborted(const struct pass *p, int64_t pid, int64_t at)
{
	size_t lo = 0, hi = p->naborted;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->aborted[mid].last_offset < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->naborted; i++)
		if (p->aborted[i].producer_id == pid)
			return p->aborted[i].first_offset <= at;
	return false;
}

/* What a batch is to the transactions (both phases walk in offset order). */
enum { B_PLAIN, B_COMMITTED, B_ABORTED, B_MARKER, B_UNKNOWN };

static int txn_class(struct pass *p, const struct kaas_batch_header *h, struct ptrack **tp)
{
	struct ptrack *t = h->producer_id >= 0 ? ptrack_find(p, h->producer_id) : NULL;
	*tp = t;
	if (h->attributes & KAAS_CLEAN_ATTR_CONTROL)
		return t ? B_MARKER : B_UNKNOWN;
	if (!(h->attributes & KAAS_CLEAN_ATTR_TXN))
		return B_PLAIN;
	if (!t)
		return B_UNKNOWN; /* every producer below the LSO is known: not expected */
	if (!t->in_txn) {
		t->in_txn = true;
		t->has_data = false;
		t->aborted = is_aborted(p, t->pid, h->base_offset);
	}
	return t->aborted ? B_ABORTED : B_COMMITTED;
}

static bool is_last_of(const struct ptrack *t, const struct kaas_batch_header *h)
{
	return t && t->keep_last == h->base_offset + h->last_offset_delta;
}

/* ------------------------------------------------------------ map */

static int map_record(void *arg, const struct kaas_clean_record *r)
{
	struct pass *p = arg;
	if (!r || !r->key)
		return 0;
	return kaas_clean_map_put(p->map, r->key, (size_t)r->key_len, r->offset);
}

static int map_batch(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		     const unsigned char *batch, size_t len)
{
	(void)pos;
	struct ptrack *t;
	int cls = txn_class(arg, h, &t);
	if (cls == B_MARKER)
		t->in_txn = false;
	/* Aborted records never hide a key's committed value. */
	if (cls == B_ABORTED || cls == B_MARKER || cls == B_UNKNOWN ||
	    kaas_clean_batch_kind(h) != KAAS_CLEAN_KEYED)
		return 0;
	int rc = kaas_clean_records(batch, len, h, map_record, arg);
	return rc == -EBADMSG ? 0 : rc; /* records that do not parse: the batch stays whole */
}

/* Scan segment s's batches (bodies) with cb. */
static int scan_segment(struct pass *p, struct segment *s, scan_cb cb)
{
	struct kaas_file *f = NULL;
	int rc = kaas_sub_open(p->log->sub, s->path, KAAS_O_READ, 0, &f);
	if (rc < 0)
		return rc == -ENOENT ? kaas_sub_fail(EUCLEAN, "%s: named by the manifest but missing",
						     s->path) : rc;
	uint64_t end = 0;
	int64_t next = 0;
	rc = kaas_seg_scan(f, 0, s->base, s->end, 0, 1, cb, p, &end, &next);
	kaas_sub_close(f);
	if (rc == 0 && end != s->end)
		rc = kaas_sub_fail(EUCLEAN, "clean %s: batches end at %" PRIu64 ", the manifest "
				   "records %" PRIu64, s->path, end, s->end);
	return rc;
}

/* ---------------------------------------------------------- write */

static int flush(struct pass *p)
{
	if (!p->blen)
		return 0;
	int rc = kaas_sub_pwrite_full(p->f, p->buf, p->blen, p->fpos);
	if (rc < 0)
		return rc;
	p->fpos += p->blen;
	p->blen = 0;
	return 0;
}

/* Append one batch (whose header is h) to the output. */
static int emit(struct pass *p, const unsigned char *b, size_t len, const struct kaas_batch_header *h)
{
	if (p->opos + len > UINT32_MAX)
		return kaas_sub_fail(EFBIG, "clean %s: a cleaned segment would pass 4 GiB",
				     p->out->path);
	if (h->max_timestamp > p->run_max)
		p->run_max = h->max_timestamp;
	struct seg_index *ix = &p->out->ix;
	int rc;
	if (ix->n == 0 || p->opos - ix->last_pos >= p->interval) {
		rc = kaas_segidx_push(ix, (uint32_t)(h->base_offset - p->out->base),
					  (uint32_t)p->opos, p->run_max);
		if (rc < 0)
			return rc;
	}
	if (p->blen + len > p->bcap) {
		rc = flush(p);
		if (rc < 0)
			return rc;
		if (len > p->bcap) { /* one batch above the buffer: straight through */
			rc = kaas_sub_pwrite_full(p->f, b, len, p->fpos);
			if (rc < 0)
				return rc;
			p->fpos += len;
			p->opos += len;
			p->st.bytes_out += len;
			return 0;
		}
	}
	memcpy(p->buf + p->blen, b, len);
	p->blen += len;
	p->opos += len;
	p->st.bytes_out += len;
	return 0;
}

static int keep_record(struct pass *p, const struct kaas_clean_record *r)
{
	struct kaas_clean_record *nk = kaas_grow(p->keep, &p->capkeep, p->nkeep, sizeof *nk, 64);
	if (!nk)
		return -ENOMEM;
	p->keep = nk;
	p->keep[p->nkeep++] = *r;
	p->keep_bytes += r->raw_len;
	return 0;
}

static int tmp_room(struct pass *p, size_t need)
{
	if (need <= p->tmpcap)
		return 0;
	unsigned char *nt = realloc(p->tmp, need);
	if (!nt)
		return -ENOMEM;
	p->tmp = nt;
	p->tmpcap = need;
	return 0;
}

/* The end of a filtered batch: write it whole, rebuilt, or not at all
 * (unless it is its producer's last: then at least its header). */
static int finish_batch(struct pass *p)
{
	const struct kaas_batch_header *h = p->h;
	p->st.records_removed += (uint64_t)(p->seen - (int32_t)p->nkeep);
	if (p->nkeep == 0 && !p->retain)
		return 0;
	if (p->nkeep == (size_t)h->record_count && !(h->attributes & KAAS_CLEAN_ATTR_CODEC))
		return emit(p, p->batch, p->batch_len, h);
	int rc = tmp_room(p, KAAS_BATCH_HEADER_LEN + p->keep_bytes);
	if (rc < 0)
		return rc;
	size_t len = kaas_clean_rebuild(p->batch, p->keep, p->nkeep, p->retain, p->tmp);
	return emit(p, p->tmp, len, h);
}

static int filter_record(void *arg, const struct kaas_clean_record *r)
{
	struct pass *p = arg;
	if (!r)
		return finish_batch(p);
	p->seen++;
	if (r->key && kaas_clean_map_get(p->map, r->key, (size_t)r->key_len) != r->offset)
		return 0; /* superseded */
	if (r->key && r->tombstone && r->timestamp < p->tomb_before) {
		p->st.tombstones_removed++;
		return 0;
	}
	return keep_record(p, r);
}

static int note_gone_abort(struct pass *p, int64_t at)
{
	int64_t *ng = kaas_grow(p->gone_aborts, &p->capgone, p->ngone, sizeof *ng, 16);
	if (!ng)
		return -ENOMEM;
	p->gone_aborts = ng;
	p->gone_aborts[p->ngone++] = at;
	return 0;
}

static void due_at(struct pass *p, int64_t horizon)
{
	if (!p->next_due || horizon < p->next_due)
		p->next_due = horizon;
}

/* A marker (its producer t known): it ends t's transaction.  Kept while a
 * batch of the transaction is kept, or while it is the producer's last
 * batch (its epoch and last marker); else the first pass that finds the
 * transaction empty stamps it with a delete horizon, and the first pass
 * after the horizon removes it (and, for an abort, its index entry). */
static int write_marker(struct pass *p, struct ptrack *t, const unsigned char *batch, size_t len,
			const struct kaas_batch_header *h)
{
	bool empty = !(t->in_txn && t->has_data);
	t->in_txn = t->has_data = false;
	int kind = kaas_txn_marker_kind(batch, len);
	if (!empty || kind < 0 || is_last_of(t, h))
		return emit(p, batch, len, h);
	if (h->attributes & KAAS_CLEAN_ATTR_HORIZON) {
		if (h->base_timestamp > p->now) {
			due_at(p, h->base_timestamp);
			return emit(p, batch, len, h);
		}
		p->st.markers_removed++;
		return kind == 0 ? note_gone_abort(p, h->base_offset) : 0;
	}
	int rc = tmp_room(p, len);
	if (rc < 0)
		return rc;
	kaas_clean_set_horizon(batch, len, p->horizon, p->tmp);
	due_at(p, p->horizon);
	return emit(p, p->tmp, len, h);
}

static int write_batch(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		       const unsigned char *batch, size_t len)
{
	struct pass *p = arg;
	(void)pos;
	struct ptrack *t;
	int cls = txn_class(p, h, &t);
	if (cls == B_MARKER)
		return write_marker(p, t, batch, len, h);
	uint64_t before = p->opos;
	int rc;
	p->retain = is_last_of(t, h);
	if (cls == B_ABORTED) {
		p->st.aborted_removed += (uint64_t)h->record_count;
		p->st.records_removed += (uint64_t)h->record_count;
		rc = 0;
		if (p->retain) { /* emptied: its header keeps the producer's sequence */
			rc = tmp_room(p, KAAS_BATCH_HEADER_LEN);
			if (rc == 0)
				rc = emit(p, p->tmp, kaas_clean_rebuild(batch, NULL, 0, 1, p->tmp), h);
		}
	} else if (cls == B_UNKNOWN || kaas_clean_batch_kind(h) != KAAS_CLEAN_KEYED) {
		rc = emit(p, batch, len, h);
	} else {
		p->batch = batch;
		p->batch_len = len;
		p->h = h;
		p->nkeep = p->keep_bytes = 0;
		p->seen = 0;
		rc = kaas_clean_records(batch, len, h, filter_record, p);
		if (rc == -EBADMSG) /* as in map_batch: kept whole (finish_batch never ran) */
			rc = emit(p, batch, len, h);
	}
	if (rc == 0 && t && cls != B_PLAIN && p->opos != before)
		t->has_data = true;
	return rc;
}

/* May the output, now opos bytes, take a source segment of `end` bytes
 * spanning offsets up to `next`?  Sources join while the output stays
 * within segment_bytes, or while it is under half of it (a cleaned source
 * shrinks; at most 1.5 × segment_bytes then), and positions and offsets
 * relative to its base fit the index. */
static bool may_join(const struct pass *p, uint64_t opos, uint64_t end, int64_t next)
{
	uint64_t limit = p->log->cfg.segment_bytes;
	if (next - p->out->base >= INT32_MAX || opos + end >= UINT32_MAX / 2)
		return false;
	return opos + end <= limit || opos < limit / 2;
}

/* Write one output from cand[first ..] with generation gen: *count is set
 * to the number of candidates it replaces. */
static int write_output(struct pass *p, size_t first, uint32_t gen, size_t *count)
{
	struct kaas_log *log = p->log;
	struct segment *o = kaas_seg_new(log->dir, p->cand[first]->base, log->epoch, gen);
	if (!o)
		return -ENOMEM;
	p->outs[p->nouts++] = o; /* freed by the caller on failure */
	o->sealed = true;
	p->out = o;
	p->fpos = p->opos = 0;
	p->blen = 0;
	p->run_max = -1;
	/* The name is unpublished (gen is above every published one): a file
	 * of that name is an orphan of a pass that did not switch. */
	int rc = kaas_sub_open(log->sub, o->path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644,
			       &p->f);
	if (rc < 0)
		return rc;
	size_t i = first;
	do {
		struct segment *s = p->cand[i++];
		if (s->max_ts > o->max_ts)
			o->max_ts = s->max_ts;
		o->next = s->next;
		p->st.bytes_in += s->end;
		rc = scan_segment(p, s, write_batch);
	} while (rc == 0 && i < p->n && may_join(p, p->opos, p->cand[i]->end, p->cand[i]->next));
	*count = i - first;
	if (rc == 0)
		rc = flush(p);
	if (rc == 0)
		rc = kaas_sub_fsync(p->f);
	int c = kaas_sub_close(p->f);
	p->f = NULL;
	if (rc == 0)
		rc = c;
	if (rc < 0)
		return rc;
	o->end = p->opos;
	o->ix.covered = o->end;
	o->index_ready = true;
	atomic_store(&o->ix_loaded, true);
	return kaas_seg_index_write(log->sub, o); /* replace: fsynced */
}

/* -------------------------------------------------------- choose */

/* The last stable offset (mu held): kaas_log_last_stable_offset. */
static int64_t lso_locked(struct kaas_log *log)
{
	assert_held(&log->mu);
	int64_t lso = log->hwm;
	const struct pstate *ps = &log->ps;
	for (size_t i = 0; ps->open_txns && i < ps->nb; i++)
		for (const struct producer *q = ps->tab[i]; q; q = q->next)
			if (q->st.txn_first_offset >= 0 && q->st.txn_first_offset < lso)
				lso = q->st.txn_first_offset;
	return lso;
}

static int by_pid(const void *a, const void *b)
{
	const struct ptrack *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The producers and the aborted transactions that begin below `to` (mu
 * held; the candidates end there, at or below the LSO): 1, or -ENOMEM.
 * An abort marker may lie at or past `to` (the segment rolled between the
 * transaction's data and its abort): the transaction is aborted all the
 * same, and its records in the range must never pass for committed ones
 * (they would hide the key's committed value).  The copy keeps the index's
 * order (by marker offset), which is_aborted searches. */
static int txn_view_locked(struct pass *p, int64_t to)
{
	const struct pstate *ps = &p->log->ps;
	assert_held(&p->log->mu);
	if (ps->count && !(p->prod = calloc(ps->count, sizeof *p->prod)))
		return -ENOMEM;
	for (size_t i = 0; i < ps->nb; i++)
		for (const struct producer *q = ps->tab[i]; q; q = q->next) {
			struct ptrack *t = &p->prod[p->nprod++];
			t->pid = q->st.producer_id;
			t->keep_last = q->st.n ? q->st.batches[q->st.n - 1].last_offset
					       : q->marker_offset;
		}
	if (p->nprod > 1)
		qsort(p->prod, p->nprod, sizeof *p->prod, by_pid);
	size_t na = 0;
	for (size_t i = 0; i < ps->naborted; i++)
		na += ps->aborted[i].first_offset < to;
	if (na && !(p->aborted = malloc(na * sizeof *p->aborted)))
		return -ENOMEM;
	p->naborted = 0;
	for (size_t i = 0; i < ps->naborted; i++)
		if (ps->aborted[i].first_offset < to) {
			assert(!p->naborted || p->aborted[p->naborted - 1].last_offset <=
						       ps->aborted[i].last_offset);
			p->aborted[p->naborted++] = ps->aborted[i];
		}
	assert(p->naborted == na);
	return 1;
}

/* Pick the candidates (mu held): 1 and p->cand filled and referenced, 0
 * when there is nothing to clean, or -ENOMEM. */
static int choose_locked(struct pass *p, int64_t now, int force)
{
	struct kaas_log *log = p->log;
	const struct kaas_log_config *c = &log->cfg;
	size_t n = 0;
	uint64_t total = 0, dirty = 0;
	int64_t oldest_dirty = -1;
	int64_t lso = lso_locked(log);
	for (; n + 1 < log->nsegs; n++) {
		struct segment *s = log->segs[n];
		if (c->min_compaction_lag_ms > 0 && s->max_ts > now - c->min_compaction_lag_ms)
			break;
		if (s->next > lso)
			break; /* an open transaction's batches, or after them */
		total += s->end;
		if (!s->gen) {
			dirty += s->end;
			if (oldest_dirty < 0)
				oldest_dirty = s->max_ts;
		}
	}
	/* Markers stamped by an earlier pass whose delete horizon passed. */
	int markers_due = log->clean_due_ms && log->clean_due_ms <= now;
	if (n == 0 || (!dirty && !force && !markers_due))
		return 0;
	int overdue = markers_due || (c->max_compaction_lag_ms >= 0 && oldest_dirty >= 0 &&
				      oldest_dirty < now - c->max_compaction_lag_ms);
	if (!force && !overdue && (double)dirty < c->min_cleanable_dirty_ratio * (double)total)
		return 0;
	p->cand = malloc(n * sizeof *p->cand);
	p->outs = calloc(n, sizeof *p->outs);
	if (!p->cand || !p->outs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		p->cand[i] = log->segs[i];
		kaas_seg_ref(p->cand[i]);
	}
	p->n = n;
	return txn_view_locked(p, log->segs[n - 1]->next);
}

/* ------------------------------------------------------- switch */

/* Is cand[] still segs[0 .. n) (retention may have dropped some)? (mu held) */
static bool still_listed_locked(const struct pass *p)
{
	if (p->log->nsegs <= p->n)
		return false;
	for (size_t i = 0; i < p->n; i++)
		if (p->log->segs[i] != p->cand[i])
			return false;
	return true;
}

/* Swap segs[0 .. a) for b[0 .. nb) (mu held; room for it checked). */
static void swap_front_locked(struct kaas_log *log, size_t a, struct segment **b, size_t nb)
{
	memmove(log->segs + nb, log->segs + a, (log->nsegs - a) * sizeof *log->segs);
	memcpy(log->segs, b, nb * sizeof *b);
	log->nsegs = log->nsegs - a + nb;
}

/* The aborted-transaction index without the entries of the abort markers
 * the pass removed, and the producer snapshot naming it, written (wlock
 * held).  Before the switch: the old set holds those markers but none of
 * their transactions' records (they were gone when the markers were
 * stamped, in an earlier published pass), so for it too the entries filter
 * nothing; an index rebuilt from the new set's markers equals this one. */
static int write_txn_derived(struct pass *p)
{
	struct kaas_log *log = p->log;
	assert_held(&log->wlock);
	if (!p->ngone)
		return 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	struct pstate *ps = &log->ps;
	size_t w = 0, g = 0;
	for (size_t i = 0; i < ps->naborted; i++) {
		int64_t at = ps->aborted[i].last_offset;
		while (g < p->ngone && p->gone_aborts[g] < at)
			g++;
		if (g < p->ngone && p->gone_aborts[g] == at)
			continue;
		ps->aborted[w++] = ps->aborted[i];
	}
	ps->naborted = w;
	ps->idx_written = SIZE_MAX; /* rewrite the index with the next snapshot */
	kaas_unlock(&log->mu);
	kaas_step("log.clean.txn-derived");
	return kaas_pstate_write(log);
}

/* Publish the outputs in place of the candidates (wlock held).  1 done,
 * 0 the list changed under the pass (nothing published), or -errno. */
static int publish(struct pass *p, uint32_t gen)
{
	struct kaas_log *log = p->log;
	assert_held(&log->wlock);
	int rc = write_txn_derived(p);
	if (rc < 0) {
		if (rc == KAAS_LOG_EFENCED) {
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			kaas_logi_fail_locked(log, rc);
			kaas_unlock(&log->mu);
		}
		return rc;
	}
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	rc = log->failed;
	if (rc == 0 && !still_listed_locked(p))
		rc = 1;
	if (rc == 0 && kaas_logi_doomed_reserve_locked(log, p->n) < 0)
		rc = -ENOMEM;
	if (rc) {
		kaas_unlock(&log->mu);
		return rc == 1 ? 0 : rc;
	}
	uint32_t old_gen = log->clean_gen;
	swap_front_locked(log, p->n, p->outs, p->nouts); /* nouts <= n */
	log->clean_gen = gen;
	kaas_unlock(&log->mu);

	rc = kaas_manifest_write(log);
	if (rc < 0) {
		/* Put the old set back in memory, and on the volume too: the
		 * rename may have landed although the write reported a failure. */
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		swap_front_locked(log, p->nouts, p->cand, p->n);
		log->clean_gen = old_gen > gen ? old_gen : gen; /* never reuse gen */
		kaas_unlock(&log->mu);
		int back = rc == KAAS_LOG_EFENCED ? rc : kaas_manifest_write(log);
		if (back < 0) {
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			kaas_logi_fail_locked(log, back);
			kaas_unlock(&log->mu);
			return back;
		}
		return rc; /* the outputs are orphans now: the caller removes them */
	}
	for (size_t i = 0; i < p->nouts; i++)
		p->outs[i] = NULL; /* the list owns them */
	/* Named step: the new set is published, the old one not yet removed. */
	kaas_step("log.clean.before-remove");
	/* A newer leader that claimed before our rename landed may have read
	 * the old set: then nothing old may go. */
	rc = kaas_manifest_check_epoch(log);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	if (rc < 0)
		kaas_logi_fail_locked(log, rc);
	for (size_t i = 0; i < p->n; i++) {
		p->cand[i]->doomed = true; /* keeps the list's reference */
		p->cand[i]->keep_files = rc < 0; /* fenced: the next owner's files */
		log->doomed[log->ndoomed++] = p->cand[i];
	}
	log->stats.segments = log->nsegs;
	log->clean_due_ms = p->next_due; /* the pass saw every stamped marker */
	kaas_unlock(&log->mu);
	return rc < 0 ? rc : 1;
}

/* Unlink the files of the outputs that were not published. */
static void remove_outputs(struct pass *p)
{
	static const char *const exts[] = { "index", "timeindex", "log" };
	for (size_t i = 0; i < p->nouts; i++) {
		struct segment *o = p->outs[i];
		if (!o)
			continue;
		for (size_t e = 0; e < 3; e++) {
			char *path = kaas_seg_path(p->log->dir, o->base, o->epoch, o->gen, exts[e]);
			if (path)
				(void)kaas_sub_unlink(p->log->sub, path); /* else an orphan: swept later */
			free(path);
		}
		kaas_seg_free(o);
		p->outs[i] = NULL;
	}
}

static void pass_free(struct pass *p)
{
	for (size_t i = 0; i < p->n; i++)
		kaas_seg_unref(p->cand[i]);
	free(p->cand);
	free(p->outs);
	kaas_clean_map_free(p->map);
	free(p->buf);
	free(p->keep);
	free(p->tmp);
	free(p->prod);
	free(p->aborted);
	free(p->gone_aborts);
}

/* Write every output, then make their names durable. */
static int write_all(struct pass *p, uint32_t gen)
{
	for (size_t i = 0; i < p->n;) {
		size_t k = 0;
		int rc = write_output(p, i, gen, &k);
		if (rc < 0)
			return rc;
		p->st.segments_in += k;
		p->st.segments_out++;
		i += k;
	}
	return kaas_sub_fsync_dir(p->log->sub, p->log->dir);
}

int kaas_log_clean(struct kaas_log *log, int64_t now_ms, int force, struct kaas_log_clean_stats *st)
{
	if (st)
		memset(st, 0, sizeof *st);
	if (kaas_trylock(&log->clean_mu, KAAS_RANK_LOG_CLEAN) != 0)
		return 0; /* a pass is running */
	if (!now_ms)
		now_ms = kaas_logi_now_ms_wall();
	struct pass p = { .log = log };
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int rc = log->failed;
	if (rc == 0)
		rc = choose_locked(&p, now_ms, force);
	p.now = now_ms;
	p.tomb_before = now_ms - log->cfg.delete_retention_ms;
	p.horizon = log->cfg.delete_retention_ms > INT64_MAX - now_ms
			    ? INT64_MAX /* never, rather than overflow */
			    : now_ms + log->cfg.delete_retention_ms;
	p.interval = log->cfg.index_interval_bytes;
	kaas_unlock(&log->mu);
	if (rc <= 0)
		goto out;
	/* Leftovers of an earlier pass (or of a crash) first; under wlock no
	 * roll is between creating its segment and naming it. */
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
	uint32_t gen = ++log->clean_gen;
	rc = kaas_logi_sweep_orphans(log);
	kaas_unlock(&log->wlock);
	p.map = kaas_clean_map_new();
	p.bcap = FLUSH_BYTES;
	p.buf = malloc(p.bcap);
	if (rc == 0 && (!p.map || !p.buf))
		rc = -ENOMEM;
	for (size_t i = 0; i < p.n && rc == 0; i++)
		rc = scan_segment(&p, p.cand[i], map_batch);
	for (size_t i = 0; i < p.nprod; i++) /* the write phase walks from the front again */
		p.prod[i].in_txn = p.prod[i].has_data = false;
	if (rc == 0)
		rc = write_all(&p, gen);
	if (rc == 0) {
		/* Named step: the new files are durable, nothing published. */
		kaas_step("log.clean.before-switch");
		kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
		rc = publish(&p, gen);
		if (rc > 0 || (rc < 0 && !p.outs[0] && p.nouts)) {
			/* The pass's references go first: the replaced
			 * segments are unlinked now unless a slice holds one. */
			for (size_t i = 0; i < p.n; i++)
				kaas_seg_unref(p.cand[i]);
			p.n = 0;
			kaas_logi_reap_doomed(log);
		}
		kaas_unlock(&log->wlock);
	}
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int failed = log->failed;
	kaas_unlock(&log->mu);
	if (rc <= 0 && rc != KAAS_LOG_EFENCED && !failed)
		remove_outputs(&p);
	else if (rc <= 0) /* fenced or failed: the files are the next owner's orphans */
		for (size_t i = 0; i < p.nouts; i++)
			kaas_seg_free(p.outs[i]);
out:
	if (st)
		*st = p.st;
	pass_free(&p);
	kaas_unlock(&log->clean_mu);
	return rc;
}
