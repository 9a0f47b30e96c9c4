/* manifest.c — the partition's fence (fence/epoch-<n>, through the one
 * fencing primitive, contract/epoch_fence.h), the per-epoch manifests (manifest-<E>.json) and
 * producer-state.json, every write fenced by the leader epoch.
 *
 * Why a fence apart from the manifest: the manifest is rewritten by the
 * leader at every roll and checkpoint, and a zombie leader's rewrite that
 * passed its epoch check just before a new leader's open could land after
 * it and put the old epoch back.  The fence directory is only ever added
 * to, by exclusive create, by a leader while it opens the partition (before
 * it looks at the tail): a zombie can neither undo a newer claim nor claim
 * its own epoch once a newer one exists.  It replaces leader.json, a
 * read-modify-write document that a paused opener could set back (issue 13,
 * defect 4); leader.json is still read, never written, as a floor left by
 * older versions. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contract/doc.h"
#include "contract/epoch_fence.h"
#include "log/log_internal.h"
#include "util/step.h"
#include "util/lock_rank.h"

int kaas_logi_legacy_fence_read(struct kaas_log *log, uint64_t *epoch)
{
	cJSON *body = NULL;
	int ver = 0;
	*epoch = 0;
	int rc = kaas_doc_read(log->sub, log->legacy_fence_path, FENCE_KIND, FENCE_VERSION, &body,
			       &ver);
	if (rc < 0)
		return rc;
	rc = kaas_json_get_u64(body, "epoch", epoch);
	cJSON_Delete(body);
	if (rc < 0)
		return kaas_sub_fail(EBADMSG, "%s: no valid epoch", log->legacy_fence_path);
	return 0;
}

/* The primitive's answers in the log's terms. */
static int fence_err(struct kaas_log *log, int rc)
{
	if (rc == KAAS_FENCE_SUPERSEDED || rc == -EEXIST) {
		char why[256];
		snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
		return kaas_sub_fail(KAAS_LOG_EFENCED, "%s: fenced: epoch %" PRIu32 " is superseded or "
				     "another leader's (%s)", log->fence_dir, log->epoch, why);
	}
	if (rc == -ENOENT)
		return kaas_sub_fail(EUCLEAN, "%s: missing: the partition was removed or reset under "
				     "its leader", log->fence_dir);
	return rc;
}

int kaas_logi_fence_claim(struct kaas_log *log)
{
	char note[128];
	snprintf(note, sizeof note, "leader of %s: host %s\n", log->dir, log->sub->host);
	int rc = kaas_fence_claim(log->sub, log->fence_dir, log->epoch, note,
				  "log.open.before-fence-claim");
	if (rc == 0)
		rc = kaas_manifest_check_epoch(log); /* primes the directory identity */
	return fence_err(log, rc);
}

int kaas_manifest_check_epoch(struct kaas_log *log)
{
	/* One open of the fence directory and one lookup of epoch-<ours+1>
	 * (contract/epoch_fence.h says why that is fresh).  The cost matches
	 * the leader.json open it replaces. */
	kaas_lock(&log->mf_lock, KAAS_RANK_LOG_FENCE);
	int rc = kaas_fence_check(log->sub, log->fence_dir, log->epoch, &log->fence_ino);
	kaas_unlock(&log->mf_lock);
	return fence_err(log, rc);
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
	/* Optional (issue 21): only a cleaned segment's name has a generation. */
	if (s->gen && kaas_json_add_u64(o, "gen", s->gen) < 0)
		return -ENOMEM;
	return 0;
}

/* Replace our manifest-<epoch>.json with the segment list, without the
 * fence check (kaas_manifest_write checks first): 0 or -errno. */
static int manifest_write_unchecked(struct kaas_log *log)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = root ? cJSON_AddArrayToObject(root, "segments") : NULL;
	int rc = -ENOMEM;
	/* Segment fields are published by the ack thread under mu. */
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	if (!arr || kaas_json_add_u64(root, "epoch", log->epoch) < 0 ||
	    kaas_json_add_i64(root, "log_start", log->log_start) < 0 ||
	    (log->clean_gen && kaas_json_add_u64(root, "clean_gen", log->clean_gen) < 0)) {
		kaas_unlock(&log->mu);
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
	kaas_unlock(&log->mu);
	if (rc < 0)
		goto out;
	rc = kaas_doc_write(log->sub, log->manifest_path, MANIFEST_KIND, MANIFEST_VERSION, root);
out:
	cJSON_Delete(root);
	return rc;
}

char *kaas_manifest_path_for(const char *dir, uint32_t epoch)
{
	char name[64];
	snprintf(name, sizeof name, MANIFEST_PREFIX "%010" PRIu32 ".json", epoch);
	return kaas_path_join(dir, name);
}

/* 0 and *epoch for a name "manifest-<epoch:010>.json", else -EINVAL. */
int kaas_manifest_parse_name(const char *name, uint32_t *epoch)
{
	size_t pl = strlen(MANIFEST_PREFIX);
	if (strncmp(name, MANIFEST_PREFIX, pl) != 0 || strlen(name) != pl + 10 + 5 ||
	    strcmp(name + pl + 10, ".json") != 0)
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = pl; i < pl + 10; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*epoch = (uint32_t)v;
	return 0;
}

struct mf_scan {
	uint32_t max;
	int numbered, legacy;
};

static int mf_scan_cb(void *arg, const char *name, enum kaas_file_type type)
{
	struct mf_scan *m = arg;
	uint32_t e;
	if (kaas_manifest_parse_name(name, &e) == 0) {
		if (!m->numbered || e > m->max)
			m->max = e;
		m->numbered = 1;
	} else if (strcmp(name, MANIFEST_NAME) == 0) {
		m->legacy = 1;
	}
	return 0;
}

int kaas_manifest_find_in(struct kaas_substrate *sub, const char *dir, char **path,
			  uint32_t *name_epoch)
{
	struct mf_scan m = { 0 };
	*path = NULL;
	*name_epoch = 0;
	int rc = kaas_sub_readdir(sub, dir, mf_scan_cb, &m);
	if (rc < 0)
		return rc;
	if (m.numbered) {
		*name_epoch = m.max;
		*path = kaas_manifest_path_for(dir, m.max);
	} else if (m.legacy) {
		*path = kaas_path_join(dir, MANIFEST_NAME);
	} else {
		return -ENOENT;
	}
	return *path ? 0 : -ENOMEM;
}

int kaas_manifest_find(struct kaas_log *log, char **path, uint32_t *name_epoch)
{
	return kaas_manifest_find_in(log->sub, log->dir, path, name_epoch);
}

int kaas_manifest_sweep_older(struct kaas_log *log)
{
	/* List first, unlink after: no substrate call inside a listing. */
	struct kaas_dirlist l;
	int rc = kaas_sub_list(log->sub, log->dir, &l);
	if (rc < 0)
		return rc;
	int removed = 0;
	for (size_t i = 0; i < l.n; i++) {
		uint32_t e;
		if (!((kaas_manifest_parse_name(l.names[i], &e) == 0 && e < log->epoch) ||
		      strcmp(l.names[i], MANIFEST_NAME) == 0))
			continue;
		char *p = kaas_path_join(log->dir, l.names[i]);
		int u = p ? kaas_sub_unlink(log->sub, p) : -ENOMEM;
		free(p);
		if (u == 0)
			removed++;
		else if (u != -ENOENT && u != -EBUSY && rc == 0)
			rc = u;
	}
	kaas_dirlist_free(&l);
	return rc < 0 ? rc : removed;
}

int kaas_manifest_write(struct kaas_log *log)
{
	int rc = kaas_manifest_check_epoch(log);
	if (rc == 0)
		kaas_step("log.manifest.before-rename");
	return rc < 0 ? rc : manifest_write_unchecked(log);
}

int kaas_pstate_write(struct kaas_log *log)
{
	int rc = kaas_manifest_check_epoch(log);
	if (rc < 0)
		return rc;
	/* The snapshot, and first the aborted-transaction index it names. */
	cJSON *body = NULL;
	rc = kaas_txnidx_snapshot(log, &body);
	if (rc < 0)
		return rc;
	kaas_json_add_u64(body, "epoch", log->epoch);
	rc = kaas_doc_write(log->sub, log->pstate_path, PSTATE_KIND, PSTATE_VERSION, body);
	cJSON_Delete(body);
	return rc;
}
