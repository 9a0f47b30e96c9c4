/* log_write.c — append with group commit: the sync and ack tasks (run by the
 * log I/O pool, log_pool.c), rolls, checkpoints. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/lock_rank.h"

int64_t kaas_logi_now_ms_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run a list of waiters taken from the log (mu not held). */
static void run_waiters(struct kaas_log_waiter *w, int64_t result)
{
	while (w) {
		struct kaas_log_waiter *nx = w->next;
		w->next = NULL;
		w->cb(w->arg, result); /* may free w */
		w = nx;
	}
}

static void complete(struct pending *p, int64_t result)
{
	if (p->cb)
		p->cb(p->arg, result);
	/* Waiters were added under mu while p was queued or in flight; p
	 * left every list (and mu was taken since) before this call. */
	run_waiters(p->waiters, result);
	free(p->data);
	free(p);
}

void kaas_logi_fail_locked(struct kaas_log *log, int err)
{
	assert_held(&log->mu);
	if (!log->failed)
		log->failed = err < 0 ? err : -EIO;
	pthread_cond_broadcast(&log->data_cv);
	pthread_cond_broadcast(&log->room_cv);
	pthread_cond_broadcast(&log->work_cv);
}

/* kaas_log_append (wait) or kaas_log_append_nowait (!wait, room). */
static int append(struct kaas_log *log, const struct kaas_log_batch *b, kaas_log_append_cb cb,
		  void *arg, int64_t *base_offset, bool wait, struct kaas_log_waiter *room)
{
	struct kaas_batch_header h;
	if (!log || !b || !b->data || kaas_batch_parse_header(b->data, b->len, &h) < 0 ||
	    (uint64_t)h.batch_length + 12 != b->len || b->record_count == 0 ||
	    (int64_t)b->record_count != (int64_t)h.last_offset_delta + 1)
		return kaas_sub_fail(EINVAL, "append: not a well-formed RecordBatch v2");
	if (b->len > __atomic_load_n(&log->cfg.segment_bytes, __ATOMIC_RELAXED) ||
	    b->len > log->cfg.max_pending_bytes ||
	    b->len > UINT32_MAX)
		return kaas_sub_fail(EFBIG, "append: batch of %zu bytes is too large", b->len);
	struct pending *p = calloc(1, sizeof *p);
	unsigned char *d = p ? malloc(b->len) : NULL;
	if (!d) {
		free(p);
		return -ENOMEM;
	}
	memcpy(d, b->data, b->len);
	wr32(d + KAAS_BATCH_LEADER_EPOCH_AT, log->epoch);
	p->data = d;
	p->len = b->len;
	p->cb = cb;
	p->arg = arg;
	p->count = b->record_count;
	p->max_ts = b->max_timestamp;

	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	while (!log->failed && !log->stop && log->qbytes && log->qbytes + b->len > log->cfg.max_pending_bytes) {
		if (!wait) {
			/* qbytes > 0: some round will pass through ack_one,
			 * which runs the room waiters. */
			if (room) {
				room->next = log->room_waiters;
				log->room_waiters = room;
			}
			kaas_unlock(&log->mu);
			free(d);
			free(p);
			return KAAS_ENOROOM;
		}
		pthread_cond_wait(&log->room_cv, &log->mu);
	}
	if (log->failed || log->stop) {
		int rc = log->failed ? log->failed : -ESHUTDOWN;
		kaas_unlock(&log->mu);
		free(d);
		free(p);
		return rc;
	}
	p->base = log->leo;
	log->leo += b->record_count;
	wr64(d + KAAS_BATCH_BASE_OFFSET_AT, (uint64_t)p->base);
	if (log->qtail)
		log->qtail->next = p;
	else
		log->qhead = p;
	log->qtail = p;
	log->qbytes += b->len;
	if (base_offset)
		*base_offset = p->base;
	/* Schedule the sync task only when it is not already due to look at
	 * the queue (it clears sync_queued before it takes the queue). */
	bool wake = !log->sync_queued;
	log->sync_queued = true;
	kaas_unlock(&log->mu);
	if (wake)
		kaas_logi_task_schedule(&log->sync_task);
	return 0;
}

int kaas_log_append(struct kaas_log *log, const struct kaas_log_batch *b, kaas_log_append_cb cb,
		    void *arg, int64_t *base_offset)
{
	return append(log, b, cb, arg, base_offset, true, NULL);
}

int kaas_log_append_nowait(struct kaas_log *log, const struct kaas_log_batch *b,
			   kaas_log_append_cb cb, void *arg, int64_t *base_offset,
			   struct kaas_log_waiter *room)
{
	return append(log, b, cb, arg, base_offset, false, room);
}

/* The pending batch of `list` holding `offset`, or NULL (mu held). */
static struct pending *pending_at(struct pending *list, int64_t offset)
{
	for (; list; list = list->next)
		if (offset >= list->base && offset < list->base + (int64_t)list->count)
			return list;
	return NULL;
}

int kaas_log_when_durable(struct kaas_log *log, int64_t offset, struct kaas_log_waiter *w)
{
	assert(w && w->cb);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int rc;
	struct pending *p = NULL;
	if (offset < log->hwm) {
		rc = 1;
	} else if (log->failed) {
		rc = log->failed;
	} else {
		/* Not published and the log not failed: the batch is queued,
		 * being written, or written and not yet acknowledged (ack_one
		 * publishes, or fails the log, before it takes a round off
		 * the ack queue). */
		for (struct round *r = kaas_logi_round_of(log->ackq.head); r && !p;
		     r = kaas_logi_round_of(r->link.next))
			p = pending_at(r->list, offset);
		if (!p && log->writing)
			p = pending_at(log->writing->list, offset);
		if (!p)
			p = pending_at(log->qhead, offset);
		rc = p ? 0 : -ERANGE;
		if (p) {
			w->next = p->waiters;
			p->waiters = w;
		}
	}
	kaas_unlock(&log->mu);
	return rc;
}

void kaas_logi_wait_init(struct kaas_logi_wait *w)
{
	w->done = 0;
	w->result = 0;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
}

void kaas_logi_wait_cb(void *arg, int64_t result)
{
	struct kaas_logi_wait *w = arg;
	kaas_lock(&w->mu, KAAS_RANK_LEAF);
	w->done = 1;
	w->result = result;
	pthread_cond_signal(&w->cv);
	kaas_unlock(&w->mu);
}

int64_t kaas_logi_wait_end(struct kaas_logi_wait *w, int rc)
{
	int64_t res = rc;
	if (rc == 0) {
		kaas_lock(&w->mu, KAAS_RANK_LEAF);
		while (!w->done)
			pthread_cond_wait(&w->cv, &w->mu);
		res = w->result;
		kaas_unlock(&w->mu);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	return res;
}

int64_t kaas_log_append_sync(struct kaas_log *log, const struct kaas_log_batch *b)
{
	struct kaas_logi_wait w;
	kaas_logi_wait_init(&w);
	return kaas_logi_wait_end(&w, kaas_log_append(log, b, kaas_logi_wait_cb, &w, NULL));
}

/* ------------------------------------------------------------ roll */

int kaas_logi_checkpoint_locked(struct kaas_log *log)
{
	assert_held(&log->wlock);
	struct segment *a = log->segs[log->nsegs - 1];
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	uint64_t pos = a->end;
	int64_t next = a->next;
	kaas_unlock(&log->mu);
	/* Producer state first (it covers exactly the synced batches), then the
	 * manifest's checkpoint: recovery scans from the checkpoint and, for the
	 * producer state, from the snapshot's next offset. */
	int rc = kaas_pstate_write(log);
	if (rc < 0)
		return rc;
	uint64_t opos = log->ckpt_pos;
	int64_t onext = log->ckpt_next;
	log->ckpt_pos = pos;
	log->ckpt_next = next;
	rc = kaas_manifest_write(log);
	if (rc < 0) {
		log->ckpt_pos = opos;
		log->ckpt_next = onext;
		return rc;
	}
	/* The checkpoint covers what was acknowledged; rounds still with the
	 * ack thread count toward the next one. */
	log->since_ckpt = log->wpos > pos ? log->wpos - pos : 0;
	log->stats.checkpoints++;
	/* The active segment's index up to here, so that the first read of
	 * this segment after a failover rebuilds only the part after it. */
	kaas_lock(&a->ilock, KAAS_RANK_SEG_INDEX);
	kaas_seg_index_write(log->sub, a); /* derived data: a failure costs a rebuild */
	kaas_unlock(&a->ilock);
	return 0;
}

/* Create the segment file for `s` and open its write handle.  Any file of
 * that name is an orphan of this very epoch that no manifest names (the
 * name carries our epoch, and we are its only writer): it is truncated. */
static int create_segment_file(struct kaas_log *log, struct segment *s, struct kaas_file **wf)
{
	int rc = kaas_sub_open(log->sub, s->path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC,
			       0644, wf);
	if (rc < 0)
		return rc;
	rc = kaas_sub_fsync(*wf);
	if (rc == 0)
		rc = kaas_sub_fsync_dir(log->sub, log->dir);
	if (rc < 0) {
		kaas_sub_close(*wf);
		*wf = NULL;
	}
	return rc;
}

int kaas_logi_start_segment(struct kaas_log *log, int64_t base)
{
	struct segment *s = kaas_seg_new(log->dir, base, log->epoch, 0);
	if (!s)
		return -ENOMEM;
	s->index_ready = true;
	struct kaas_file *wf = NULL;
	int rc = create_segment_file(log, s, &wf);
	if (rc < 0) {
		kaas_seg_free(s);
		return rc;
	}
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	rc = kaas_logi_add_segment(log, s);
	kaas_unlock(&log->mu);
	if (rc < 0) {
		kaas_sub_close(wf);
		kaas_seg_free(s);
		return rc;
	}
	kaas_logi_fslot_adopt(&log->wslot, wf);
	log->wpos = 0;
	log->ckpt_pos = 0;
	log->ckpt_next = base;
	log->since_ckpt = 0;
	return 0;
}

static bool ack_one(struct kaas_log *log, struct round *r);

/* Wait until every written round has been acknowledged (or failed), so
 * that the active segment's published end is its written end.  Called with
 * wlock held (acknowledging never takes wlock).  Rounds nobody is
 * acknowledging are acknowledged here, in order: waiting for the ack task
 * instead could wait forever when every pool thread is in a roll. */
static void wait_acks_drained(struct kaas_log *log)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	bool more = false;
	while (log->ackq.head) {
		if (!log->acking) {
			log->acking = true;
			struct round *r = kaas_logi_round_of(log->ackq.head);
			kaas_unlock(&log->mu);
			more = ack_one(log, r);
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			continue;
		}
		pthread_cond_wait(&log->drained_cv, &log->mu);
	}
	kaas_unlock(&log->mu);
	(void)more; /* drained: nothing left for the ack task */
}

int kaas_logi_roll_locked(struct kaas_log *log)
{
	assert_held(&log->wlock);
	assert_not_held(&log->mu); /* it waits for the ack thread, which takes mu */
	wait_acks_drained(log);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int failed = log->failed;
	kaas_unlock(&log->mu);
	if (failed)
		return failed;
	struct segment *a = log->segs[log->nsegs - 1];
	if (a->end == 0)
		return 0;
	/* Everything written to `a` is already fsynced (rounds fsync before
	 * they return).  Seal it in memory, write its index, start the next
	 * segment, then swap the manifest: until the rename the old manifest
	 * (with `a` active and its checkpoint) stays valid. */
	kaas_lock(&a->ilock, KAAS_RANK_SEG_INDEX); /* readers look at `sealed` under ilock */
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	a->sealed = true;
	atomic_store(&a->ix_loaded, true); /* its index stays, until evicted */
	atomic_store(&a->used, atomic_fetch_add(&log->tick, 1) + 1);
	int64_t next = a->next;
	kaas_unlock(&log->mu);
	kaas_unlock(&a->ilock);
	kaas_lock(&a->ilock, KAAS_RANK_SEG_INDEX); /* a reader may evict it once sealed */
	if (a->index_ready)
		kaas_seg_index_write(log->sub, a); /* derived: a failure costs a rebuild later */
	kaas_unlock(&a->ilock);
	/* Every byte written through the old handle is fsynced: closing it
	 * first loses nothing (its close error, if any, is still reported). */
	int crc = kaas_logi_fslot_close(&log->wslot);
	if (crc == 0)
		crc = log->wslot.evict_rc;
	log->wslot.evict_rc = 0;
	int rc = kaas_logi_start_segment(log, next);
	if (rc == 0)
		rc = kaas_pstate_write(log);
	if (rc == 0)
		rc = kaas_manifest_write(log);
	if (rc < 0) {
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		kaas_logi_fail_locked(log, rc);
		kaas_unlock(&log->mu);
		return rc;
	}
	if (crc < 0) {
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		kaas_logi_fail_locked(log, crc);
		kaas_unlock(&log->mu);
		return crc;
	}
	log->stats.rolls++;
	log->stats.checkpoints++;
	kaas_logi_evict_indexes(log, NULL);
	return 0;
}

int kaas_log_roll(struct kaas_log *log)
{
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
	int rc = kaas_logi_roll_locked(log);
	kaas_unlock(&log->wlock);
	return rc;
}

/* ---------------------------------------------- sync task, ack task */

/* Write one round (batches in offset order) to the active segment and
 * fsync it.  wlock held.  The write handle is reopened if the file cache
 * closed it since the last round (without O_CREAT: a segment file that
 * vanished fails the round).  Returns 0 or -errno. */
static int write_round(struct kaas_log *log, struct round *r)
{
	assert_held(&log->wlock);
	if (log->wpos > 0 && log->wpos + r->bytes > log->cfg.segment_bytes) {
		int rc = kaas_logi_roll_locked(log);
		if (rc < 0)
			return rc;
	}
	struct pending *list = r->list;
	r->seg = log->segs[log->nsegs - 1];
	r->pos = log->wpos;
	int rc = log->wslot.evict_rc; /* a close by the cache failed: report it */
	if (rc == 0)
		rc = kaas_logi_fslot_open(log->sub, &log->wslot, r->seg->path, KAAS_O_WRITE);
	if (rc < 0)
		return rc;
	if (!list->next) {
		rc = kaas_sub_pwrite_full(log->wslot.f, list->data, r->bytes, r->pos);
	} else if (kaas_sub_has_pwritev(log->wslot.f)) {
		/* The batches straight from their buffers, in one pwritev: a
		 * gather into one buffer first cost a copy of every byte on this
		 * task, which is the partition's one writer (8% of its time in a
		 * 1 KiB produce, beside 57% in the kernel's copy of pwrite). */
		if (log->wiov_cap < r->n) {
			size_t cap = log->wiov_cap ? log->wiov_cap : 64;
			while (cap < r->n)
				cap *= 2;
			struct iovec *nv = realloc(log->wiov, cap * sizeof *nv);
			if (!nv)
				return -ENOMEM;
			log->wiov = nv;
			log->wiov_cap = cap;
		}
		size_t i = 0;
		for (struct pending *p = list; p; p = p->next)
			log->wiov[i++] = (struct iovec){ .iov_base = p->data, .iov_len = p->len };
		assert(i == r->n && i <= INT_MAX);
		rc = kaas_sub_pwritev_full(log->wslot.f, log->wiov, (int)i, r->pos);
	} else {
		/* A backend without a gathered write (libnfs: one WRITE per
		 * buffer): the round gathered into one buffer kept across rounds
		 * (a fresh malloc of a round, often above glibc's mmap
		 * threshold, cost an mmap, a page fault per 4 KiB and an munmap
		 * every round). */
		if (log->wbuf_cap < r->bytes) {
			size_t cap = log->wbuf_cap ? log->wbuf_cap : 256u << 10;
			while (cap < r->bytes)
				cap *= 2;
			unsigned char *nb = malloc(cap);
			if (!nb)
				return -ENOMEM;
			free(log->wbuf);
			log->wbuf = nb;
			log->wbuf_cap = cap;
		}
		unsigned char *buf = log->wbuf;
		size_t off = 0;
		for (struct pending *p = list; p; p = p->next) {
			memcpy(buf + off, p->data, p->len);
			off += p->len;
		}
		rc = kaas_sub_pwrite_full(log->wslot.f, buf, r->bytes, r->pos);
	}
	uint64_t t0 = kaas_logi_metrics_start();
	if (rc == 0)
		rc = kaas_sub_fsync(log->wslot.f);
	kaas_logi_metrics_commit(r, t0, rc);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	log->stats.fsyncs++;
	kaas_unlock(&log->mu);
	if (rc < 0)
		return rc;
	log->wpos += r->bytes;
	log->since_ckpt += r->bytes;
	return 0;
}

/* Publish a synced, fence-checked round: index entries, segment end, high
 * watermark, producer state. */
static void publish(struct kaas_log *log, struct round *r)
{
	struct segment *a = r->seg;
	kaas_lock(&a->ilock, KAAS_RANK_SEG_INDEX);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	uint64_t at = r->pos;
	int64_t run = a->max_ts;
	for (struct pending *p = r->list; p; p = p->next) {
		if (p->max_ts > run)
			run = p->max_ts;
		if (a->ix.n == 0 || at - a->ix.last_pos >= log->cfg.index_interval_bytes)
			kaas_segidx_push(&a->ix, (uint32_t)(p->base - a->base), (uint32_t)at, run);
		const unsigned char *d = p->data;
		kaas_pstate_apply_batch(&log->ps, d, p->len, p->base, p->max_ts);
		at += p->len;
		a->next = p->base + p->count;
	}
	a->ix.covered = at;
	a->end = at;
	a->max_ts = run;
	assert(a->next >= log->hwm); /* the high watermark only moves forward */
	log->hwm = a->next;
	log->ps.next_offset = a->next;
	log->stats.bytes += r->bytes;
	log->stats.appends += r->n;
	pthread_cond_broadcast(&log->data_cv);
	kaas_unlock(&log->mu);
	kaas_unlock(&a->ilock);
}

/* Acknowledge round r, the head of the ack queue, which the caller owns
 * (log->acking set by it): fence check, publication, completions.  Returns
 * true when more rounds wait (the caller acknowledges them or schedules the
 * ack task). */
static bool ack_one(struct kaas_log *log, struct round *r)
{
	assert_not_held(&log->mu);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int failed = log->failed;
	kaas_unlock(&log->mu);
	int rc = r->rc ? r->rc : failed;
	/* Zombie fencing: a new leader fences the partition BEFORE it scans our
	 * tail.  If no newer epoch is claimed now, after our fsync, the
	 * new leader (if any) will scan these bytes: the ack is safe. */
	if (rc == 0 && log->cfg.fence_check)
		rc = kaas_manifest_check_epoch(log);
	if (rc == 0)
		publish(log, r);

	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	if (rc < 0)
		kaas_logi_fail_locked(log, rc);
	/* r stayed at the head while it was acknowledged (log->acking). */
	struct kaas_fifo_link *head = kaas_fifo_pop(&log->ackq);
	assert(head == &r->link);
	(void)head;
	log->acking = false;
	bool more = log->ackq.head != NULL;
	pthread_cond_broadcast(&log->drained_cv); /* a roll or close may take over */
	log->qbytes -= r->bytes;
	int64_t hwm = log->hwm;
	kaas_log_notify_cb notify = log->notify;
	void *notify_arg = log->notify_arg;
	pthread_cond_broadcast(&log->room_cv);
	struct kaas_log_waiter *room = log->room_waiters;
	log->room_waiters = NULL;
	int room_rc = log->failed;
	kaas_unlock(&log->mu);
	run_waiters(room, room_rc);
	struct pending *list = r->list;
	while (list) {
		struct pending *nx = list->next;
		complete(list, rc < 0 ? rc : list->base);
		list = nx;
	}
	free(r);
	if (rc == 0 && notify)
		notify(notify_arg, hwm);
	return more;
}

/* Rounds one run of a task handles before it yields its pool thread to
 * other logs (it is queued again at the tail if work remains). */
#define ROUNDS_PER_RUN 4

/* The sync task: takes the queue (at most segment_bytes of it, so that a
 * round fits one segment) as one round, writes and fsyncs it, and hands it
 * to the ack task — then goes on with the next round while the ack task
 * checks the fence and completes the previous one. */
void kaas_logi_sync_run(struct kaas_logi_task *t)
{
	struct kaas_log *log = KAAS_FIFO_ENTRY(t, struct kaas_log, sync_task);
	assert(kaas_logi_on_pool_thread());
	assert_not_held(&log->wlock);
	bool schedule_ack = false;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	log->sync_queued = false; /* appends from now on schedule a run again */
	for (int n = 0; log->qhead; n++) {
		if (n == ROUNDS_PER_RUN) {
			log->sync_queued = true;
			kaas_unlock(&log->mu);
			kaas_logi_task_schedule(t);
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			break;
		}
		if (log->cfg.linger_us && !log->stop) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += (long)log->cfg.linger_us * 1000;
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			pthread_cond_timedwait(&log->work_cv, &log->mu, &ts);
		}
		struct round *r = calloc(1, sizeof *r);
		if (!r) { /* retry at the next run; nothing taken */
			log->sync_queued = true;
			kaas_unlock(&log->mu);
			usleep(1000);
			kaas_logi_task_schedule(t);
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			break;
		}
		/* A round is at most segment_bytes (at least one batch): it is
		 * written to one segment, so a larger one would overfill it. */
		uint64_t cap = __atomic_load_n(&log->cfg.segment_bytes, __ATOMIC_RELAXED);
		struct pending *last = NULL;
		r->list = log->qhead;
		for (struct pending *p = r->list; p && (!last || r->bytes + p->len <= cap);
		     p = p->next) {
			r->bytes += p->len;
			r->n++;
			last = p;
		}
		log->qhead = last->next;
		last->next = NULL;
		if (!log->qhead)
			log->qtail = NULL;
		log->writing = r;
		int failed = log->failed;
		kaas_unlock(&log->mu);

		/* The round is handed to the ack queue before wlock is released,
		 * so that a roll (which drains the ack queue under wlock) never
		 * misses a round written to the segment it seals. */
		kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
		int rc = failed ? failed : write_round(log, r);
		r->rc = rc;
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		if (rc < 0)
			kaas_logi_fail_locked(log, rc);
		log->writing = NULL;
		kaas_fifo_push(&log->ackq, &r->link);
		/* Nothing else to write and nothing before it to acknowledge: this
		 * task acknowledges the round itself (a hand-off to the ack task
		 * would only add a wake-up to the appender's wait). */
		bool inline_ack = log->ackq.head == &r->link && !log->acking && !log->qhead;
		if (inline_ack)
			log->acking = true;
		else
			schedule_ack = true;
		kaas_unlock(&log->mu);
		if (rc == 0 && log->since_ckpt >= log->cfg.checkpoint_bytes) {
			int c = kaas_logi_checkpoint_locked(log);
			if (c == KAAS_LOG_EFENCED || c == -EBADMSG) {
				kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
				kaas_logi_fail_locked(log, c);
				kaas_unlock(&log->mu);
			}
			/* Other checkpoint failures are retried at the next round:
			 * the previous checkpoint stays valid. */
		}
		kaas_unlock(&log->wlock);
		if (schedule_ack) {
			kaas_logi_task_schedule(&log->ack_task);
			schedule_ack = false;
		}
		if (inline_ack && ack_one(log, r))
			kaas_logi_task_schedule(&log->ack_task);
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	}
	kaas_unlock(&log->mu);
}

/* The ack task: for each written round, in order, checks the fence,
 * publishes it and runs its completions. */
void kaas_logi_ack_run(struct kaas_logi_task *t)
{
	struct kaas_log *log = KAAS_FIFO_ENTRY(t, struct kaas_log, ack_task);
	assert(kaas_logi_on_pool_thread());
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	for (int n = 0; log->ackq.head && !log->acking; n++) {
		if (n == ROUNDS_PER_RUN) {
			kaas_unlock(&log->mu);
			kaas_logi_task_schedule(t);
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			break;
		}
		log->acking = true;
		struct round *r = kaas_logi_round_of(log->ackq.head);
		kaas_unlock(&log->mu);
		ack_one(log, r); /* more or not: the loop looks at the queue */
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	}
	kaas_unlock(&log->mu);
}

void kaas_logi_quiesce(struct kaas_log *log)
{
	assert_not_held(&log->mu);
	assert_not_held(&log->wlock);
	kaas_logi_task_schedule(&log->sync_task); /* writes what is queued */
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	while (log->qhead || log->writing || log->ackq.head || log->acking)
		pthread_cond_wait(&log->drained_cv, &log->mu);
	kaas_unlock(&log->mu);
	/* No round left: the tasks may still be queued or finishing a run
	 * that found nothing; once idle nothing schedules them again. */
	kaas_logi_task_wait_idle(&log->sync_task);
	kaas_logi_task_wait_idle(&log->ack_task);
}
