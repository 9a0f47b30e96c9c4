/* log_open.c — opening a partition as leader (fencing, tail recovery), closing it. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contract/contract.h"
#include "contract/doc.h"
#include "log/log_internal.h"
#include "util/step.h"
#include "util/lock_rank.h"


void kaas_log_config_default(struct kaas_log_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->segment_bytes = 1ull << 30;
	cfg->segment_ms = 7ll * 24 * 3600 * 1000;
	cfg->retention_bytes = -1;
	cfg->retention_ms = 7ll * 24 * 3600 * 1000;
	cfg->index_interval_bytes = 4096;
	cfg->checkpoint_bytes = 64u << 20;
	cfg->linger_us = 0;
	cfg->max_pending_bytes = 64u << 20;
	cfg->fence_check = 1;
	cfg->max_loaded_indexes = 8;
	cfg->delete_retention_ms = 24ll * 3600 * 1000;
	cfg->min_cleanable_dirty_ratio = 0.5;
	cfg->max_compaction_lag_ms = -1;
}

/* Initialise (init 1) or destroy (init 0) the log's mutexes and condition
 * variables: one list for both, so they stay in step. */
static void log_sync_objects(struct kaas_log *log, int init)
{
	pthread_mutex_t *m[] = { &log->mu, &log->wlock, &log->mf_lock, &log->txn_mu,
				 &log->clean_mu };
	pthread_cond_t *cv[] = { &log->drained_cv, &log->work_cv, &log->room_cv, &log->data_cv };
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		(void)(init ? pthread_mutex_init(m[i], NULL) : pthread_mutex_destroy(m[i]));
	for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++)
		(void)(init ? pthread_cond_init(cv[i], NULL) : pthread_cond_destroy(cv[i]));
}

static void log_free(struct kaas_log *log)
{
	if (!log)
		return;
	/* No task of this log is queued or running (kaas_log_close quiesced
	 * it, or a failed open never scheduled one); nothing pending, so no
	 * room waiter is left (only registered while bytes are pending). */
	assert(!log->room_waiters);
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK); /* the file cache closes under it */
	kaas_logi_fslot_close(&log->wslot);
	kaas_unlock(&log->wlock);
	for (size_t i = 0; i < log->nsegs; i++)
		kaas_seg_free(log->segs[i]);
	for (size_t i = 0; i < log->ndoomed; i++)
		kaas_seg_free(log->doomed[i]);
	free(log->segs);
	free(log->doomed);
	kaas_pstate_free(&log->ps);
	log_sync_objects(log, 0);
	free(log->wbuf);
	free(log->wiov);
	free(log->dir);
	free(log->manifest_path);
	free(log->loaded_manifest);
	free(log->fence_dir);
	free(log->legacy_fence_path);
	free(log->pstate_path);
	free(log->txnidx_path);
	if (log->pool_held)
		kaas_logi_pool_release();
	free(log);
}

/* Load the manifest's segment list into log (no I/O on segments). */
static int segments_from_manifest(struct kaas_log *log, const cJSON *body, uint64_t *mepoch)
{
	const char *m = log->loaded_manifest;
	if (kaas_json_get_u64(body, "epoch", mepoch) < 0 || *mepoch > UINT32_MAX ||
	    kaas_json_get_i64(body, "log_start", &log->log_start) < 0 || log->log_start < 0)
		return kaas_sub_fail(EBADMSG, "%s: bad epoch or log_start", m);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(body, "segments");
	uint64_t cg = 0; /* optional (issue 21): the highest cleaning generation used */
	if (cJSON_GetObjectItemCaseSensitive(body, "clean_gen") &&
	    (kaas_json_get_u64(body, "clean_gen", &cg) < 0 || cg > UINT32_MAX))
		return kaas_sub_fail(EBADMSG, "%s: bad clean_gen", m);
	if (cg > log->clean_gen)
		log->clean_gen = (uint32_t)cg;
	if (!cJSON_IsArray(arr))
		return kaas_sub_fail(EBADMSG, "%s: no segment list", m);
	const cJSON *o;
	int64_t prev_next = -1;
	cJSON_ArrayForEach(o, arr) {
		int64_t base, next, max_ts;
		uint64_t ep, end, gen = 0;
		const cJSON *sealed = cJSON_GetObjectItemCaseSensitive(o, "sealed");
		if (cJSON_GetObjectItemCaseSensitive(o, "gen") &&
		    (kaas_json_get_u64(o, "gen", &gen) < 0 || gen > UINT32_MAX))
			return kaas_sub_fail(EBADMSG, "%s: segment entry %zu: bad gen", m, log->nsegs);
		if (kaas_json_get_i64(o, "base", &base) < 0 || kaas_json_get_u64(o, "epoch", &ep) < 0 ||
		    kaas_json_get_u64(o, "end", &end) < 0 || kaas_json_get_i64(o, "next", &next) < 0 ||
		    kaas_json_get_i64(o, "max_ts", &max_ts) < 0 || !cJSON_IsBool(sealed) || base < 0 ||
		    ep > UINT32_MAX || next < base || (prev_next >= 0 && base < prev_next) ||
		    (log->nsegs && !log->segs[log->nsegs - 1]->sealed))
			return kaas_sub_fail(EBADMSG, "%s: segment entry %zu is invalid", m, log->nsegs);
		struct segment *s = kaas_seg_new(log->dir, base, (uint32_t)ep, (uint32_t)gen);
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		int pushed = s ? kaas_logi_add_segment(log, s) : -ENOMEM;
		kaas_unlock(&log->mu);
		if (pushed < 0) {
			kaas_seg_free(s);
			return -ENOMEM;
		}
		s->sealed = cJSON_IsTrue(sealed);
		s->end = end;
		s->next = next;
		s->max_ts = max_ts;
		if (!s->sealed) {
			log->ckpt_pos = end;
			log->ckpt_next = next;
		}
		prev_next = next;
	}
	return 0;
}

/* Read the newest manifest (manifest-<E>.json of the highest E, else an
 * older version's manifest.json) into log (segments, log start, checkpoint)
 * and check it: refuse a newer epoch, a missing manifest beside data, or
 * data of a newer epoch that the manifest does not name. */
static int read_newest_manifest(struct kaas_log *log, uint64_t *mepoch)
{
	cJSON *body = NULL;
	int ver = 0;
	*mepoch = 0;
	free(log->loaded_manifest);
	log->loaded_manifest = NULL;
	uint32_t named = 0;
	int rc = kaas_manifest_find(log, &log->loaded_manifest, &named);
	if (rc == 0)
		rc = kaas_doc_read(log->sub, log->loaded_manifest, MANIFEST_KIND, MANIFEST_VERSION,
				   &body, &ver);
	if (rc == -ENOENT)
		return kaas_logi_check_fresh(log);
	if (rc < 0)
		return rc; /* -EBADMSG names the file: the partition stays offline */
	rc = segments_from_manifest(log, body, mepoch);
	cJSON_Delete(body);
	if (rc < 0)
		return rc;
	if (named && *mepoch != named)
		return kaas_sub_fail(EBADMSG, "%s: holds epoch %" PRIu64 ", not the one in its name",
				     log->loaded_manifest, *mepoch);
	if (*mepoch > log->epoch)
		return kaas_sub_fail(KAAS_LOG_EFENCED, "%s: fenced: leader epoch %" PRIu64 " is above "
				     "ours (%" PRIu32 ")", log->loaded_manifest, *mepoch, log->epoch);
	return kaas_logi_check_unlisted(log, *mepoch);
}

/* Claim our epoch in the fence directory: refuse if the manifest (epoch
 * mepoch) or an older version's leader.json names a newer one, or if the
 * claim is refused (a newer epoch is claimed, or ours is someone else's). */
static int fence_partition(struct kaas_log *log, uint64_t mepoch)
{
	uint64_t legacy = 0;
	int rc = kaas_logi_legacy_fence_read(log, &legacy);
	if (rc < 0 && rc != -ENOENT)
		return rc; /* -EBADMSG names leader.json: offline, never guessed */
	uint64_t floor = legacy > mepoch ? legacy : mepoch;
	if (floor > log->epoch)
		return kaas_sub_fail(KAAS_LOG_EFENCED, "%s: fenced: leader epoch %" PRIu64
				     " is above ours (%" PRIu32 ")", log->dir, floor, log->epoch);
	return kaas_logi_fence_claim(log);
}

/* Steps 1 and 2 of the open.  1. Read the manifest; refuse if a newer
 * leader owns the partition.  2. Fence before looking at the tail: from
 * this claim on, an older leader's commit check fails, so whatever it
 * acknowledged was fsynced before the tail scan and is recovered by it.
 * The manifest is read again after the fence: a roll the old leader made
 * just before it is then in view (a roll's manifest precedes any data in
 * its segment).  0 or -errno. */
static int fence_and_read_manifest(struct kaas_log *log)
{
	uint64_t mepoch = 0;
	int rc = read_newest_manifest(log, &mepoch);
	if (rc == 0)
		rc = fence_partition(log, mepoch);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < log->nsegs; i++)
		kaas_seg_free(log->segs[i]);
	log->nsegs = 0;
	log->log_start = 0;
	log->ckpt_pos = 0;
	log->ckpt_next = 0;
	return read_newest_manifest(log, &mepoch);
}

static int check_cfg(const struct kaas_log_config *c)
{
	if (c->segment_bytes < 4096 || c->segment_bytes > (1ull << 32) - 1 ||
	    c->index_interval_bytes == 0 || c->checkpoint_bytes == 0 || c->max_pending_bytes == 0 ||
	    c->max_loaded_indexes == 0)
		return kaas_sub_fail(EINVAL, "log config: segment_bytes must be in [4096, 4 GiB), "
				     "intervals and limits non-zero");
	return 0;
}

int kaas_log_open(struct kaas_substrate *data, const char *dir, uint32_t leader_epoch,
		  const struct kaas_log_config *cfg, struct kaas_log **out)
{
	*out = NULL;
	if (!data || !dir || !*dir || kaas_path_check(dir) < 0)
		return kaas_sub_fail(EINVAL, "log open: invalid partition directory '%s'",
				     dir ? dir : "(null)");
	struct kaas_log *log = calloc(1, sizeof *log);
	if (!log)
		return -ENOMEM;
	log_sync_objects(log, 1);
	kaas_logi_fslot_init(&log->wslot, &log->wlock, KAAS_RANK_LOG_WLOCK, NULL);
	kaas_logi_task_init(&log->sync_task, kaas_logi_sync_run);
	kaas_logi_task_init(&log->ack_task, kaas_logi_ack_run);
	log->sub = data;
	log->epoch = leader_epoch;
	if (cfg)
		log->cfg = *cfg;
	else
		kaas_log_config_default(&log->cfg);
	int rc = check_cfg(&log->cfg);
	if (rc < 0)
		goto fail;
	rc = kaas_logi_pool_acquire();
	if (rc < 0)
		goto fail;
	log->pool_held = true;
	rc = -ENOMEM;
	log->dir = strdup(dir);
	log->manifest_path = kaas_manifest_path_for(dir, leader_epoch);
	log->fence_dir = kaas_path_join(dir, FENCE_DIR);
	log->legacy_fence_path = kaas_path_join(dir, FENCE_NAME);
	log->pstate_path = kaas_path_join(dir, PSTATE_NAME);
	log->txnidx_path = kaas_path_join(dir, TXNIDX_NAME);
	if (!log->dir || !log->manifest_path || !log->fence_dir || !log->legacy_fence_path || !log->pstate_path ||
	    !log->txnidx_path ||
	    kaas_pstate_init(&log->ps) < 0)
		goto fail;
	if (log->cfg.parent_must_exist) {
		rc = kaas_sub_mkdir(data, dir, 0755);
		if (rc == -EEXIST)
			rc = 0;
	} else {
		rc = kaas_sub_mkdirs(data, dir, 0755);
	}
	if (rc < 0)
		goto fail;

	/* 1-2. Manifest, fence, manifest again. */
	rc = fence_and_read_manifest(log);
	if (rc < 0)
		goto fail;
	kaas_step("log.open.after-fence");
	/* 3. We are the fenced single writer: every temp here is stale. */
	rc = kaas_sweep_temps(data, dir, KAAS_SWEEP_ALL);
	if (rc < 0)
		goto fail;

	/* 4. Producer state snapshot, then the tail by CRC from the checkpoint. */
	int64_t ps_from = 0;
	rc = kaas_pstate_load(log, &ps_from);
	if (rc < 0)
		goto fail;
	bool ps_read = rc == 1;
	/* The aborted-transaction index, covering what the snapshot covers. */
	int txnidx_rebuild = 0;
	rc = kaas_txnidx_load(log, &txnidx_rebuild);
	if (rc < 0)
		goto fail;
	struct segment *L = log->nsegs ? log->segs[log->nsegs - 1] : NULL;
	int64_t tail_from = L && !L->sealed ? log->ckpt_next : (L ? L->next : log->log_start);
	if (ps_from < tail_from) {
		/* The snapshot is older than the checkpoint: catch up from the log. */
		rc = kaas_pstate_scan(log, ps_from < log->log_start ? log->log_start : ps_from, tail_from);
		if (rc < 0)
			goto fail;
		log->ps.next_offset = tail_from;
	}
	if (L && !L->sealed) {
		rc = kaas_logi_recover_tail(log, L);
		if (rc < 0)
			goto fail;
	}
	int64_t next = L ? L->next : log->log_start;
	if (log->ps.next_offset > next) {
		/* A snapshot ahead of the valid log (batches it saw were never
		 * made durable): derive the state again from the log itself. */
		kaas_pstate_free(&log->ps);
		if (kaas_pstate_init(&log->ps) < 0) {
			rc = -ENOMEM;
			goto fail;
		}
		log->ps.next_offset = log->log_start;
		rc = kaas_pstate_scan(log, log->log_start, next);
		if (rc < 0)
			goto fail;
		txnidx_rebuild = 0; /* the scan from the log start made it */
	}
	if (txnidx_rebuild) {
		/* Derived data missing: from the markers below the snapshot. */
		rc = kaas_txnidx_rebuild(log, ps_from < next ? ps_from : next);
		if (rc < 0)
			goto fail;
	}
	/* The snapshot on the volume is the state this open ends with (a clean
	 * stop's) when it was read, covers exactly the recovered log (no scan
	 * ran: every scan above starts from ps_from < next or replaces a
	 * snapshot ahead of it) and its aborted index needed no rebuild: then
	 * step 5 does not write it again. */
	bool ps_current = ps_read && ps_from == next && !txnidx_rebuild;
	assert(!ps_current || log->ps.naborted == log->ps.idx_written);
	log->ps.next_offset = next;
	log->hwm = log->leo = next;
	if (log->log_start > next)
		log->log_start = next;

	/* 5. Drop an empty recovered segment, start ours, swap the manifest. */
	if (L && L->end == 0) {
		log->nsegs--;
		kaas_seg_free(L); /* its file is an orphan now: swept below */
	}
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK); /* the write handle's guard */
	rc = kaas_logi_start_segment(log, next);
	kaas_unlock(&log->wlock);
	if (rc < 0)
		goto fail;
	/* The producer state only if it differs from the volume's snapshot:
	 * after a clean stop it does not (one replace, two syncs, fewer per
	 * log at a broker's start).  Its "epoch" field is informational. */
	rc = ps_current ? 0 : kaas_pstate_write(log);
	if (rc == 0)
		rc = kaas_manifest_write(log);
	if (rc < 0)
		goto fail;
	/* Older epochs' manifests are garbage now (ours is the newest name);
	 * a failure to remove them is harmless and retried at the next open. */
	(void)kaas_manifest_sweep_older(log);
	rc = kaas_logi_sweep_orphans(log);
	if (rc < 0)
		goto fail;
	log->stats.segments = log->nsegs;
	/* No thread of its own: appends schedule the log's tasks on the pool. */
	*out = log;
	return 0;
fail:
	log_free(log);
	return rc;
}

int kaas_log_close(struct kaas_log *log)
{
	if (!log)
		return 0;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	log->stop = true;
	pthread_cond_broadcast(&log->work_cv);
	pthread_cond_broadcast(&log->room_cv);
	kaas_unlock(&log->mu);
	/* What was appended before the stop is written and acknowledged. */
	kaas_logi_quiesce(log);
	kaas_lock(&log->wlock, KAAS_RANK_LOG_WLOCK);
	int rc = log->failed;
	if (!rc)
		rc = kaas_logi_checkpoint_locked(log);
	int c = kaas_logi_fslot_close(&log->wslot);
	if (rc == 0)
		rc = c ? c : log->wslot.evict_rc;
	kaas_logi_reap_doomed(log);
	kaas_unlock(&log->wlock);
	log_free(log);
	return rc;
}
