/* log_describe.c — what the admin APIs ask of a log, from memory: the end
 * offset of a leader epoch (OffsetForLeaderEpoch, from the epoch stamped
 * in each segment's name), the bytes its segments hold (DescribeLogDirs)
 * and the producers it keeps state for (DescribeProducers). */
#include "log/log_internal.h"
#include "util/lock_rank.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

int kaas_log_epoch_end(struct kaas_log *log, int32_t epoch, int32_t *found, int64_t *end)
{
	*found = -1;
	*end = -1;
	if (epoch < 0)
		return -ENOENT;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	assert(log->nsegs > 0);
	uint32_t latest = log->segs[log->nsegs - 1]->epoch;
	int rc = 0;
	if ((uint32_t)epoch == latest) {
		*found = epoch;
		*end = log->leo;
	} else {
		/* The first segment of a later epoch starts where this one ended;
		 * segment epochs never decrease along the log. */
		size_t k = 0;
		while (k < log->nsegs && log->segs[k]->epoch <= (uint32_t)epoch)
			k++;
		if (k == log->nsegs) {
			rc = -ENOENT; /* later than any epoch the log knows */
		} else {
			*found = k > 0 ? (int32_t)log->segs[k - 1]->epoch : epoch;
			*end = log->segs[k]->base > log->log_start ? log->segs[k]->base
								   : log->log_start;
		}
	}
	kaas_unlock(&log->mu);
	return rc;
}

int64_t kaas_log_size(struct kaas_log *log)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	uint64_t n = 0;
	for (size_t k = 0; k < log->nsegs; k++)
		n += log->segs[k]->end;
	kaas_unlock(&log->mu);
	return (int64_t)n;
}

int kaas_log_producers(struct kaas_log *log, struct kaas_log_producer **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	size_t count = log->ps.count;
	struct kaas_log_producer *v = count ? calloc(count, sizeof *v) : NULL;
	if (count && !v) {
		kaas_unlock(&log->mu);
		return -ENOMEM;
	}
	size_t i = 0;
	for (size_t b = 0; b < log->ps.nb; b++)
		for (const struct producer *p = log->ps.tab[b]; p && i < count; p = p->next) {
			v[i] = p->st;
			v[i++].coordinator_epoch = p->marker_coord;
		}
	kaas_unlock(&log->mu);
	*out = v;
	*n = i;
	return 0;
}
