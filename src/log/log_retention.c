/* log_retention.c — roll by age, retention by bytes and age, DeleteRecords.
 * Order of a deletion: the manifest first (the log start moves past the
 * segment), then every handle to the segment is closed (at the last
 * reference), then the files are unlinked — so NFS never silly-renames a
 * deleted segment and pins its space.  An unlink that fails stays recorded
 * and is re-driven at the next housekeeping; one interrupted by a crash is
 * finished by the next open (the file is an orphan then).  A leader fenced
 * between its manifest write's check and rename unlinks nothing (drop_front). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/lock_rank.h"

static int unlink_seg_files(struct kaas_log *log, struct segment *s)
{
	static const char *const exts[] = { "index", "timeindex", "log" };
	for (size_t i = 0; i < 3; i++) {
		char *p = kaas_seg_path(log->dir, s->base, s->epoch, s->gen, exts[i]);
		if (!p)
			return -ENOMEM;
		int rc = kaas_sub_unlink(log->sub, p);
		free(p);
		if (rc < 0 && rc != -ENOENT)
			return rc;
	}
	return 0;
}

int kaas_logi_doomed_reserve_locked(struct kaas_log *log, size_t k)
{
	assert_held(&log->mu);
	if (log->ndoomed + k <= log->capdoomed)
		return 0;
	size_t nc = log->ndoomed + k + 16;
	struct segment **nd = realloc(log->doomed, nc * sizeof *nd);
	if (!nd)
		return -ENOMEM;
	log->doomed = nd;
	log->capdoomed = nc;
	return 0;
}

int kaas_logi_reap_doomed(struct kaas_log *log)
{
	assert_held(&log->wlock);
	assert_not_held(&log->mu);
	int removed = 0;
	for (;;) {
		struct segment *s = NULL;
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		for (size_t i = 0; i < log->ndoomed; i++) {
			/* The doomed list holds the list's reference: 1 is
			 * "no slice left" (while a slice holds one, the count
			 * stays above 1 and the file cache never closes the
			 * handle the slice reads through). */
			if (atomic_load(&log->doomed[i]->refs) == 1) {
				s = log->doomed[i];
				kaas_seg_unref(s);
				log->doomed[i] = log->doomed[--log->ndoomed];
				break;
			}
		}
		kaas_unlock(&log->mu);
		if (!s)
			break;
		kaas_lock(&s->rlock, KAAS_RANK_SEG_READ); /* wlock → rlock; the file cache closes under it */
		kaas_logi_fslot_close(&s->rslot);
		kaas_unlock(&s->rlock);
		if (!s->keep_files && unlink_seg_files(log, s) < 0) {
			/* Keep it recorded (an -EBUSY silly file, a transient
			 * error): the next housekeeping re-drives it. */
			kaas_seg_ref_zero(s);
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			log->doomed[log->ndoomed++] = s;
			kaas_unlock(&log->mu);
			break;
		}
		kaas_seg_free(s);
		removed++;
	}
	return removed;
}

/* Remove the first k segments (sealed, below the new log start) from the
 * manifest, then check the fence again and only then reap them: fenced
 * after the rename, the segments are dropped from memory but their files
 * kept (they are the newer leader's) and the log fails KAAS_LOG_EFENCED.
 * wlock held. */
static int drop_front(struct kaas_log *log, size_t k, int64_t new_start)
{
	assert_held(&log->wlock);
	if (k == 0 && new_start <= log->log_start)
		return 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	if (kaas_logi_doomed_reserve_locked(log, k) < 0) {
		kaas_unlock(&log->mu);
		return -ENOMEM;
	}
	int64_t old_start = log->log_start;
	struct segment **gone = malloc((k ? k : 1) * sizeof *gone);
	if (!gone) {
		kaas_unlock(&log->mu);
		return -ENOMEM;
	}
	memcpy(gone, log->segs, k * sizeof *gone);
	memmove(log->segs, log->segs + k, (log->nsegs - k) * sizeof *log->segs);
	log->nsegs -= k;
	if (new_start > log->log_start)
		log->log_start = new_start;
	kaas_unlock(&log->mu);

	int rc = kaas_manifest_write(log);
	/* A newer leader that claimed between the write's fence check and its
	 * rename read the old list: the files are its now, nothing may go. */
	int fenced = rc < 0 ? 0 : kaas_manifest_check_epoch(log);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	if (fenced < 0) {
		for (size_t i = 0; i < k; i++) {
			gone[i]->doomed = true; /* keeps the list's reference */
			gone[i]->keep_files = true;
			log->doomed[log->ndoomed++] = gone[i];
		}
		kaas_logi_fail_locked(log, fenced);
		rc = fenced;
	} else if (rc < 0) {
		/* Nothing changed on the volume: put the segments back. */
		memmove(log->segs + k, log->segs, log->nsegs * sizeof *log->segs);
		memcpy(log->segs, gone, k * sizeof *gone);
		log->nsegs += k;
		log->log_start = old_start;
		if (rc == KAAS_LOG_EFENCED || rc == -EBADMSG)
			kaas_logi_fail_locked(log, rc);
	} else {
		for (size_t i = 0; i < k; i++) {
			gone[i]->doomed = true; /* keeps the list's reference */
			log->doomed[log->ndoomed++] = gone[i];
		}
	}
	kaas_unlock(&log->mu);
	free(gone);
	if (rc < 0)
		return rc;
	kaas_logi_reap_doomed(log);
	return (int)k;
}

int kaas_log_housekeep(struct kaas_log *log, int64_t now_ms)
{
	if (!now_ms)
		now_ms = kaas_logi_now_ms_wall();
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int rc = log->failed;
	kaas_unlock(&log->mu);
	if (rc) {
		kaas_unlock(&log->wlock);
		return rc;
	}
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	struct segment *a = log->segs[log->nsegs - 1];
	int old = a->end > 0 && now_ms - a->created_ms >= log->cfg.segment_ms;
	/* Retention by age reaches the active segment too, as Kafka's: once
	 * its newest record is past retention_ms, and all of it durable, it is
	 * rolled here and deleted below with the sealed ones (a quiet topic
	 * would otherwise keep its records until segment_ms). */
	int expired = a->end > 0 && log->cfg.retention_ms >= 0 && a->max_ts >= 0 &&
		      a->max_ts < now_ms - log->cfg.retention_ms && a->next <= log->hwm;
	kaas_unlock(&log->mu);
	if ((log->cfg.segment_ms > 0 && old) || expired) {
		rc = kaas_logi_roll_locked(log);
		if (rc < 0) {
			kaas_unlock(&log->wlock);
			return rc;
		}
	}
	/* Which sealed segments at the front go? */
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	uint64_t total = 0;
	for (size_t i = 0; i < log->nsegs; i++)
		total += log->segs[i]->end;
	size_t k = 0;
	while (k + 1 < log->nsegs) { /* never the active (last) segment: an expired one was rolled */
		struct segment *s = log->segs[k];
		int go = s->next <= log->log_start;
		if (!go && log->cfg.retention_bytes >= 0 &&
		    total - s->end >= (uint64_t)log->cfg.retention_bytes)
			go = 1;
		if (!go && log->cfg.retention_ms >= 0 && s->max_ts >= 0 &&
		    s->max_ts < now_ms - log->cfg.retention_ms)
			go = 1;
		if (!go)
			break;
		total -= s->end;
		k++;
	}
	int64_t new_start = k ? log->segs[k]->base : log->log_start;
	kaas_unlock(&log->mu);
	rc = drop_front(log, k, new_start);
	if (rc >= 0)
		kaas_logi_reap_doomed(log); /* re-drive earlier unlinks that did not finish */
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int compact = log->cfg.compact;
	kaas_unlock(&log->mu);
	kaas_unlock(&log->wlock);
	if (rc >= 0 && compact) {
		/* Cleaning: not under wlock (it reads and writes whole segments
		 * while appends go on); a failure is retried at the next call. */
		int c = kaas_log_clean(log, now_ms, 0, NULL);
		if (c == KAAS_LOG_EFENCED)
			rc = c;
	}
	return rc;
}

int kaas_log_delete_records(struct kaas_log *log, int64_t offset)
{
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int64_t hwm = log->hwm, start = log->log_start;
	int failed = log->failed;
	size_t k = 0;
	if (!failed && offset >= 0 && offset <= hwm)
		while (k + 1 < log->nsegs && log->segs[k]->next <= offset)
			k++;
	kaas_unlock(&log->mu);
	int rc;
	if (failed)
		rc = failed;
	else if (offset < 0 || offset > hwm)
		rc = kaas_sub_fail(ERANGE, "delete records %s: offset %lld outside [0, %lld]", log->dir,
				   (long long)offset, (long long)hwm);
	else if (offset <= start)
		rc = 0;
	else
		rc = drop_front(log, k, offset);
	kaas_unlock(&log->wlock);
	return rc < 0 ? rc : 0;
}

void kaas_log_retune(struct kaas_log *log, const struct kaas_log_config *cfg)
{
	/* Writers of a round read the limits under wlock, housekeeping under
	 * wlock and mu: both are held to change them. */
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	/* append() checks a batch against it before taking any lock */
	__atomic_store_n(&log->cfg.segment_bytes, cfg->segment_bytes, __ATOMIC_RELAXED);
	log->cfg.segment_ms = cfg->segment_ms;
	log->cfg.retention_bytes = cfg->retention_bytes;
	log->cfg.retention_ms = cfg->retention_ms;
	log->cfg.compact = cfg->compact;
	log->cfg.delete_retention_ms = cfg->delete_retention_ms;
	log->cfg.min_cleanable_dirty_ratio = cfg->min_cleanable_dirty_ratio;
	log->cfg.min_compaction_lag_ms = cfg->min_compaction_lag_ms;
	log->cfg.max_compaction_lag_ms = cfg->max_compaction_lag_ms;
	kaas_unlock(&log->mu);
	kaas_unlock(&log->wlock);
}
