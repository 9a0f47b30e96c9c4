/* log_state.c — the log's in-memory state: reading offsets, status,
 * statistics and producer state; appending to the segment list. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/lock_rank.h"

int kaas_logi_add_segment(struct kaas_log *log, struct segment *s)
{
	assert_held(&log->mu);
	if (log->nsegs == log->capsegs) {
		size_t nc = log->capsegs ? log->capsegs * 2 : 16;
		struct segment **ns = realloc(log->segs, nc * sizeof *ns);
		if (!ns)
			return -ENOMEM;
		log->segs = ns;
		log->capsegs = nc;
	}
	log->segs[log->nsegs++] = s;
	return 0;
}

/* *field (one of log's offsets), read under mu. */
static int64_t offset_under_mu(struct kaas_log *log, const int64_t *field)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int64_t v = *field;
	kaas_unlock(&log->mu);
	return v;
}

int64_t kaas_log_high_watermark(struct kaas_log *log)
{
	return offset_under_mu(log, &log->hwm);
}

int64_t kaas_log_start_offset(struct kaas_log *log)
{
	return offset_under_mu(log, &log->log_start);
}

int64_t kaas_log_end_offset(struct kaas_log *log)
{
	return offset_under_mu(log, &log->leo);
}

uint32_t kaas_log_epoch(struct kaas_log *log)
{
	return log->epoch;
}

int kaas_log_status(struct kaas_log *log)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int v = log->failed;
	kaas_unlock(&log->mu);
	return v;
}

void kaas_log_set_notify(struct kaas_log *log, kaas_log_notify_cb cb, void *arg)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	log->notify = cb;
	log->notify_arg = arg;
	kaas_unlock(&log->mu);
}

void kaas_log_get_stats(struct kaas_log *log, struct kaas_log_stats *out)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	*out = log->stats;
	out->segments = log->nsegs;
	kaas_unlock(&log->mu);
}

int kaas_log_producer_get(struct kaas_log *log, int64_t producer_id, struct kaas_log_producer *out)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	struct producer *p = kaas_pstate_find(&log->ps, producer_id);
	if (p)
		*out = p->st;
	kaas_unlock(&log->mu);
	return p ? 0 : -ENOENT;
}

/* Is the batch in `list` (queued or in flight)?  mu held. */
static int find_in_list(const struct pending *q, int64_t producer_id, int16_t epoch,
			int32_t first_seq, int32_t last_seq, int64_t *base_offset)
{
	for (; q; q = q->next) {
		const unsigned char *d = q->data;
		int32_t fs = (int32_t)rd32(d + 53);
		int32_t ls = (int32_t)(((int64_t)fs + (int32_t)rd32(d + 23)) % ((int64_t)INT32_MAX + 1));
		if ((int64_t)rd64(d + 43) == producer_id && (int16_t)rd16(d + 51) == epoch &&
		    fs == first_seq && ls == last_seq) {
			if (base_offset)
				*base_offset = q->base;
			return 1;
		}
	}
	return 0;
}

int kaas_log_producer_find(struct kaas_log *log, int64_t producer_id, int16_t epoch,
			   int32_t first_seq, int32_t last_seq, int64_t *base_offset)
{
	int found = 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	struct producer *p = kaas_pstate_find(&log->ps, producer_id);
	if (p && p->st.epoch == epoch) {
		for (unsigned i = 0; i < p->st.n && !found; i++) {
			if (p->st.batches[i].first_seq == first_seq && p->st.batches[i].last_seq == last_seq) {
				found = 1;
				if (base_offset)
					*base_offset = p->st.batches[i].base_offset;
			}
		}
	}
	/* Batches not yet acknowledged count too (a retry racing its original). */
	if (!found)
		found = find_in_list(log->qhead, producer_id, epoch, first_seq, last_seq, base_offset);
	if (!found && log->writing)
		found = find_in_list(log->writing->list, producer_id, epoch, first_seq, last_seq,
				     base_offset);
	for (struct round *r = kaas_logi_round_of(log->ackq.head); r && !found;
	     r = kaas_logi_round_of(r->link.next))
		found = find_in_list(r->list, producer_id, epoch, first_seq, last_seq, base_offset);
	kaas_unlock(&log->mu);
	return found;
}

/* Fold one queued or in-flight batch into a copy of a producer's state. */
static void fold_pending(struct kaas_log_producer *st, int *known, const struct pending *q,
			 int64_t producer_id)
{
	for (; q; q = q->next) {
		const unsigned char *d = q->data;
		if ((int64_t)rd64(d + 43) != producer_id)
			continue;
		int16_t epoch = (int16_t)rd16(d + 51);
		if (!*known)
			st->txn_first_offset = -1;
		if (rd16(d + 21) & KAAS_BATCH_ATTR_CONTROL) {
			/* A marker: no sequence; it may raise the epoch, and
			 * it ends the producer's open transaction. */
			if (!*known || epoch > st->epoch) {
				st->producer_id = producer_id;
				st->epoch = epoch;
				st->n = 0;
				*known = 1;
			}
			st->txn_first_offset = -1;
			continue;
		}
		if ((rd16(d + 21) & KAAS_BATCH_ATTR_TRANSACTIONAL) && st->txn_first_offset < 0)
			st->txn_first_offset = q->base; /* it opens one */
		int32_t fs = (int32_t)rd32(d + 53);
		int32_t delta = (int32_t)rd32(d + 23);
		if (!*known || epoch != st->epoch) {
			st->producer_id = producer_id;
			st->epoch = epoch;
			st->n = 0;
			*known = 1;
		}
		if (st->n == KAAS_LOG_PRODUCER_WINDOW) {
			memmove(&st->batches[0], &st->batches[1],
				(KAAS_LOG_PRODUCER_WINDOW - 1) * sizeof st->batches[0]);
			st->n--;
		}
		struct kaas_log_producer_batch *b = &st->batches[st->n++];
		b->first_seq = fs;
		b->last_seq = (int32_t)(((int64_t)fs + delta) % ((int64_t)INT32_MAX + 1));
		b->base_offset = q->base;
		b->last_offset = q->base + delta;
	}
}

int kaas_log_producer_pending(struct kaas_log *log, int64_t producer_id,
			      struct kaas_log_producer *out)
{
	int known = 0;
	memset(out, 0, sizeof *out);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	struct producer *p = kaas_pstate_find(&log->ps, producer_id);
	if (p) {
		*out = p->st;
		known = 1;
	}
	for (struct round *r = kaas_logi_round_of(log->ackq.head); r;
	     r = kaas_logi_round_of(r->link.next))
		fold_pending(out, &known, r->list, producer_id);
	if (log->writing)
		fold_pending(out, &known, log->writing->list, producer_id);
	fold_pending(out, &known, log->qhead, producer_id);
	kaas_unlock(&log->mu);
	return known ? 0 : -ENOENT;
}
