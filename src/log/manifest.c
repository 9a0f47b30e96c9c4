/* manifest.c — the fence document (leader.json), manifest.json and
 * producer-state.json, every write fenced by the leader epoch.
 *
 * Why a fence document apart from the manifest: the manifest is rewritten
 * by the leader at every roll and checkpoint, and a zombie leader's rewrite
 * that passed its epoch check just before a new leader's open could land
 * after it and put the old epoch back.  leader.json is written only by a
 * leader while it opens the partition (before it looks at the tail), so an
 * old leader's later writes never touch it: a commit check against it
 * cannot be undone by a zombie. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "contract/doc.h"
#include "log/log_internal.h"

int fence_write(struct kaas_log *log)
{
	cJSON *body = cJSON_CreateObject();
	if (!body || kaas_json_add_u64(body, "epoch", log->epoch) < 0) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	int rc = kaas_doc_write(log->sub, log->fence_path, FENCE_KIND, FENCE_VERSION, body);
	cJSON_Delete(body);
	return rc;
}

int fence_read(struct kaas_log *log, uint64_t *epoch)
{
	cJSON *body = NULL;
	int ver = 0;
	int rc = kaas_doc_read(log->sub, log->fence_path, FENCE_KIND, FENCE_VERSION, &body, &ver);
	if (rc < 0)
		return rc;
	rc = kaas_json_get_u64(body, "epoch", epoch);
	cJSON_Delete(body);
	if (rc < 0)
		return kaas_sub_fail(EBADMSG, "%s: no valid epoch", log->fence_path);
	return 0;
}

/* mf_lock held. */
static int check_epoch(struct kaas_log *log)
{
	/* Open (close-to-open: a replace by another host is seen now), and skip
	 * the parse when the file is the very version checked last time: a
	 * replace always brings a new file (new id, and size or mtime). */
	struct kaas_file *f = NULL;
	int rc = kaas_sub_open(log->sub, log->fence_path, KAAS_O_READ, 0, &f);
	if (rc == -ENOENT)
		return kaas_sub_fail(EUCLEAN, "%s: missing: the partition was removed or reset "
				     "under its leader", log->fence_path);
	if (rc < 0)
		return rc;
	struct kaas_stat st;
	rc = kaas_sub_fstat(f, &st);
	if (rc == 0 && st.ino && st.ino == log->mf_ino && st.size == log->mf_size &&
	    st.mtime_ns == log->mf_mtime) {
		kaas_sub_close(f);
		return 0;
	}
	char *buf = NULL;
	if (rc == 0 && st.size > 4096)
		rc = kaas_sub_fail(EBADMSG, "%s: %" PRIu64 " bytes is too large", log->fence_path,
				   st.size);
	if (rc == 0 && !(buf = malloc(st.size + 1)))
		rc = -ENOMEM;
	ssize_t n = 0;
	if (rc == 0) {
		n = kaas_sub_pread_full(f, buf, st.size, 0);
		if (n < 0)
			rc = (int)n;
	}
	kaas_sub_close(f);
	cJSON *body = NULL;
	int ver = 0;
	if (rc == 0)
		rc = kaas_doc_decode(log->fence_path, buf, (size_t)n, FENCE_KIND, FENCE_VERSION, &body,
				     &ver);
	free(buf);
	if (rc < 0)
		return rc;
	uint64_t e = 0;
	rc = kaas_json_get_u64(body, "epoch", &e);
	cJSON_Delete(body);
	if (rc < 0)
		return kaas_sub_fail(EBADMSG, "%s: no valid epoch", log->fence_path);
	if (e > log->epoch)
		return kaas_sub_fail(KAAS_LOG_EFENCED, "%s: fenced: leader epoch %" PRIu64
				     " is above ours (%" PRIu32 ")", log->fence_path, e, log->epoch);
	if (e < log->epoch) {
		/* Only two leaders opening at the same moment can leave an older
		 * epoch here; the newer one (us) puts its own back. */
		rc = fence_write(log);
		if (rc < 0)
			return rc;
		log->mf_ino = 0;
		return 0;
	}
	log->mf_ino = st.ino;
	log->mf_size = st.size;
	log->mf_mtime = st.mtime_ns;
	return 0;
}

int manifest_check_epoch(struct kaas_log *log)
{
	pthread_mutex_lock(&log->mf_lock);
	int rc = check_epoch(log);
	pthread_mutex_unlock(&log->mf_lock);
	return rc;
}

static int add_seg(cJSON *arr, const struct segment *s, uint64_t end, int64_t next)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	if (kaas_json_add_i64(o, "base", s->base) < 0 || kaas_json_add_u64(o, "epoch", s->epoch) < 0 ||
	    !cJSON_AddBoolToObject(o, "sealed", s->sealed) || kaas_json_add_u64(o, "end", end) < 0 ||
	    kaas_json_add_i64(o, "next", next) < 0 || kaas_json_add_i64(o, "max_ts", s->max_ts) < 0)
		return -ENOMEM;
	return 0;
}

int manifest_write_unchecked(struct kaas_log *log)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = root ? cJSON_AddArrayToObject(root, "segments") : NULL;
	int rc = -ENOMEM;
	/* Segment fields are published by the ack thread under mu. */
	pthread_mutex_lock(&log->mu);
	if (!arr || kaas_json_add_u64(root, "epoch", log->epoch) < 0 ||
	    kaas_json_add_i64(root, "log_start", log->log_start) < 0) {
		pthread_mutex_unlock(&log->mu);
		goto out;
	}
	for (size_t i = 0; i < log->nsegs; i++) {
		const struct segment *s = log->segs[i];
		/* The active segment's recorded end is its checkpoint. */
		if (s->sealed)
			rc = add_seg(arr, s, s->end, s->next);
		else
			rc = add_seg(arr, s, log->ckpt_pos, log->ckpt_next);
		if (rc < 0)
			break;
	}
	pthread_mutex_unlock(&log->mu);
	if (rc < 0)
		goto out;
	rc = kaas_doc_write(log->sub, log->manifest_path, MANIFEST_KIND, MANIFEST_VERSION, root);
out:
	cJSON_Delete(root);
	return rc;
}

int manifest_write(struct kaas_log *log)
{
	int rc = manifest_check_epoch(log);
	return rc < 0 ? rc : manifest_write_unchecked(log);
}

int pstate_write(struct kaas_log *log)
{
	int rc = manifest_check_epoch(log);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&log->mu);
	cJSON *body = pstate_to_json(&log->ps);
	if (body)
		kaas_json_add_u64(body, "epoch", log->epoch);
	pthread_mutex_unlock(&log->mu);
	if (!body)
		return -ENOMEM;
	rc = kaas_doc_write(log->sub, log->pstate_path, PSTATE_KIND, PSTATE_VERSION, body);
	cJSON_Delete(body);
	return rc;
}
