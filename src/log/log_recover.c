/* log_recover.c — what an opening leader finds on the volume: the tail of
 * the last segment (by length and CRC32C, from the checkpoint), producer
 * state (snapshot plus the log after it), orphaned segment files. */
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

struct tail {
	struct kaas_log *log;
	struct segment *s;
	int64_t from, to;   /* producer-state range to apply */
	int track_ts;
};

static int tail_cb(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		   const unsigned char *batch, size_t len)
{
	struct tail *t = arg;
	if (t->track_ts && h->max_timestamp > t->s->max_ts)
		t->s->max_ts = h->max_timestamp;
	if (h->base_offset >= t->from && h->base_offset < t->to)
		return kaas_pstate_apply_batch(&t->log->ps, batch, len, h->base_offset,
					       h->max_timestamp);
	return 0;
}

/* Apply producer state from the batches in [from, to) of the sealed
 * segments (lengths only: below recorded ends). */
int kaas_pstate_scan(struct kaas_log *log, int64_t from, int64_t to)
{
	for (size_t i = 0; i < log->nsegs && from < to; i++) {
		struct segment *s = log->segs[i];
		if (s->next <= from || s->base >= to)
			continue;
		struct kaas_file *f = NULL;
		int rc = kaas_sub_open(log->sub, s->path, KAAS_O_READ, 0, &f);
		if (rc < 0)
			return rc == -ENOENT ? kaas_sub_fail(EUCLEAN, "%s: named by the manifest but missing",
							     s->path) : rc;
		struct tail t = { .log = log, .s = s, .from = from, .to = to };
		uint64_t end;
		int64_t next;
		rc = kaas_seg_scan(f, 0, s->base, s->sealed ? s->end : log->ckpt_pos, 0, 1, tail_cb, &t,
			      &end, &next);
		kaas_sub_close(f);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Rewrite bytes [from, to) of f with the bytes it holds there, through f.
 *
 * Why: the bytes a dead (or fenced) leader wrote but never synced may be
 * visible to this scan (on NFS: UNSTABLE writes the server holds in memory)
 * and are adopted -- recorded in the manifest below the valid end, answered
 * as durable duplicates to retries.  They must be durable before that.  But
 * an fsync of a handle that wrote nothing is not enough: a kernel NFS client
 * sends a COMMIT only for its own unstable pages, so fsync of a clean
 * handle sends none and a server crash would lose the adopted bytes.
 * Writing them again through our own handle makes them our dirty data,
 * which our fsync must commit.  (Same bytes: readers never see a change.)
 * Returns 0 or -errno. */
static int rewrite_range(struct kaas_file *f, uint64_t from, uint64_t to)
{
	enum { CHUNK = 1 << 20 };
	size_t cap = to - from < CHUNK ? (size_t)(to - from) : CHUNK;
	unsigned char *buf = malloc(cap ? cap : 1);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t pos = from; pos < to && rc == 0; pos += cap) {
		size_t n = to - pos < cap ? (size_t)(to - pos) : cap;
		ssize_t got = kaas_sub_pread_full(f, buf, n, pos);
		if (got < 0)
			rc = (int)got;
		else if ((size_t)got < n)
			rc = kaas_sub_fail(EUCLEAN, "%s: shrank while its tail was recovered", f->path);
		else
			rc = kaas_sub_pwrite_full(f, buf, n, pos);
	}
	free(buf);
	return rc;
}

static int recover_tail(struct kaas_log *log, struct segment *L)
{
	/* Opened for writing to make the adopted tail durable: see
	 * rewrite_range for why it is rewritten before the fsync. */
	struct kaas_file *f = NULL;
	int rc = kaas_sub_open(log->sub, L->path, KAAS_O_READ | KAAS_O_WRITE, 0, &f);
	if (rc < 0)
		return rc == -ENOENT ? kaas_sub_fail(EUCLEAN, "%s: named by the manifest but missing",
						     L->path) : rc;
	struct kaas_stat st;
	rc = kaas_sub_fstat(f, &st);
	if (rc == 0 && st.size < log->ckpt_pos)
		rc = kaas_sub_fail(EUCLEAN, "%s: %" PRIu64 " bytes, shorter than its checkpoint %" PRIu64,
				   L->path, st.size, log->ckpt_pos);
	struct tail t = { .log = log, .s = L, .from = log->ps.next_offset, .to = INT64_MAX,
			  .track_ts = 1 };
	uint64_t end = 0;
	int64_t next = 0;
	if (rc == 0)
		rc = kaas_seg_scan(f, log->ckpt_pos, log->ckpt_next, UINT64_MAX, 1, 1, tail_cb, &t, &end,
			      &next);
	/* Named step: a new leader stopped here has scanned the dead leader's
	 * tail but made none of it durable yet (scripts/chaos pauses here). */
	kaas_step("log.recover.before-adopt");
	if (rc == 0 && end > log->ckpt_pos)
		rc = rewrite_range(f, log->ckpt_pos, end);
	if (rc == 0 && end > log->ckpt_pos)
		rc = kaas_sub_fsync(f);
	int crc = kaas_sub_close(f);
	if (rc == 0)
		rc = crc;
	if (rc < 0)
		return rc;
	log->stats.recovered_bytes = end - log->ckpt_pos;
	L->end = end;
	L->next = next;
	L->sealed = true;
	L->index_ready = false; /* rebuilt lazily, on the first read that needs it */
	return 0;
}

int kaas_logi_recover_tail(struct kaas_log *log, struct segment *L)
{
	kaas_logi_metrics_recovering(1);
	int rc = recover_tail(log, L);
	kaas_logi_metrics_recovering(-1);
	return rc;
}

int kaas_pstate_load(struct kaas_log *log, int64_t *from)
{
	cJSON *body = NULL;
	int ver = 0;
	int rc = kaas_doc_read(log->sub, log->pstate_path, PSTATE_KIND, PSTATE_VERSION, &body, &ver);
	if (rc == -ENOENT) {
		*from = log->log_start;
		return 0;
	}
	if (rc < 0)
		return rc;
	rc = kaas_pstate_from_json(&log->ps, body);
	cJSON_Delete(body);
	if (rc < 0)
		return rc == -EBADMSG ? kaas_sub_fail(EBADMSG, "%s: malformed producer state",
						      log->pstate_path) : rc;
	*from = log->ps.next_offset;
	return 1;
}

/* Whether the segment list (log->segs), or the segments deleted from it but
 * not yet unlinked (log->doomed), name base/epoch/gen (mu held, or during
 * the open). */
static bool listed(const struct kaas_log *log, int64_t base, uint32_t ep, uint32_t gen)
{
	for (size_t k = 0; k < log->nsegs; k++)
		if (log->segs[k]->base == base && log->segs[k]->epoch == ep && log->segs[k]->gen == gen)
			return true;
	for (size_t k = 0; k < log->ndoomed; k++)
		if (log->doomed[k]->base == base && log->doomed[k]->epoch == ep &&
		    log->doomed[k]->gen == gen)
			return true;
	return false;
}

/* Whether the file `name` in log->dir holds data: 1, 0 (empty or gone), or
 * -errno. */
static int holds_data(struct kaas_log *log, const char *name)
{
	char *p = kaas_path_join(log->dir, name);
	struct kaas_stat st;
	int rc = p ? kaas_sub_stat(log->sub, p, &st) : -ENOMEM;
	free(p);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : st.size > 0;
}

/* Remove segment files no manifest entry names (epoch <= ours): a roll that
 * crashed before its manifest swap, a zombie's late segment, a retention
 * delete that crashed between the manifest and the unlink, a cleaning pass
 * (log_clean.c) that crashed before its switch (its new files) or after it
 * (the files it replaced). */
int kaas_logi_sweep_orphans(struct kaas_log *log)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(log->sub, log->dir, &l);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < l.n; i++) {
		int64_t base;
		uint32_t ep, gen;
		const char *ext;
		if (kaas_seg_parse_name(l.names[i], &base, &ep, &gen, &ext) < 0 || ep > log->epoch)
			continue;
		if (strcmp(ext, "log") && strcmp(ext, "index") && strcmp(ext, "timeindex"))
			continue;
		kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
		bool named = listed(log, base, ep, gen);
		kaas_unlock(&log->mu);
		if (named)
			continue;
		char *p = kaas_path_join(log->dir, l.names[i]);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		int u = kaas_sub_unlink(log->sub, p);
		free(p);
		if (u < 0 && u != -ENOENT) {
			rc = u;
			break;
		}
	}
	kaas_dirlist_free(&l);
	return rc < 0 ? rc : 0;
}

/* Look for a segment file in log->dir that holds data, of an epoch above
 * `above` (-1: any epoch) and not named by the manifest's list (log->segs).
 * 1 with its name copied to name and its epoch in *epoch, 0 if there is
 * none, or -errno. */
static int unnamed_data(struct kaas_log *log, int64_t above, char *name, size_t namesz, uint32_t *epoch)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(log->sub, log->dir, &l);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < l.n && rc == 0; i++) {
		int64_t base;
		uint32_t ep, gen;
		const char *ext;
		if (kaas_seg_parse_name(l.names[i], &base, &ep, &gen, &ext) < 0 || strcmp(ext, "log") ||
		    (int64_t)ep <= above || listed(log, base, ep, gen))
			continue;
		rc = holds_data(log, l.names[i]);
		if (rc > 0) {
			snprintf(name, namesz, "%s", l.names[i]);
			*epoch = ep;
		}
	}
	kaas_dirlist_free(&l);
	return rc;
}

/* Before touching anything: a segment with data whose epoch is above the
 * manifest's, and which the manifest does not name, means the manifest lost
 * a newer leader's segments (an older leader's manifest write landed over
 * it).  Refuse with an error naming the file rather than sweep it away. */
int kaas_logi_check_unlisted(struct kaas_log *log, uint64_t mepoch)
{
	char name[256];
	uint32_t ep = 0;
	int rc = unnamed_data(log, (int64_t)mepoch, name, sizeof name, &ep);
	if (rc > 0)
		return kaas_sub_fail(EUCLEAN, "%s/%s: holds data of leader epoch %" PRIu32
				     " but %s (epoch %" PRIu64 ") does not name it: refusing to "
				     "open (an older leader's manifest write may have replaced a "
				     "newer one)", log->dir, name, ep,
				     log->loaded_manifest ? log->loaded_manifest : MANIFEST_NAME, mepoch);
	return rc;
}

/* No manifest: allowed only when no segment holds a byte (a first open that
 * crashed before its first manifest; the segment list is empty). */
int kaas_logi_check_fresh(struct kaas_log *log)
{
	char name[256];
	uint32_t ep = 0;
	int rc = unnamed_data(log, -1, name, sizeof name, &ep);
	if (rc > 0)
		return kaas_sub_fail(EUCLEAN, "%s/%s: segment with data but no %s: refusing to "
				     "start the partition empty", log->dir, name, MANIFEST_NAME);
	return rc;
}

