/* log_inspect.c — a partition's log read-only, for tools (see log_inspect.h).
 * Never claims the fence and never writes: only lists, stats and reads. */
#include "log/log_inspect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contract/doc.h"
#include "log/log_internal.h"

const char *const kaas_log_manifest_kind = MANIFEST_KIND;
const char *const kaas_log_pstate_kind = PSTATE_KIND;
const char *const kaas_log_txnidx_kind = TXNIDX_KIND;
const int kaas_log_txnidx_version = TXNIDX_VERSION;
const int kaas_log_doc_version = MANIFEST_VERSION;

enum kaas_log_entry_kind kaas_log_entry_classify(const char *name, int64_t *base,
						 uint32_t *epoch)
{
	int64_t b = 0;
	uint32_t e = 0, g = 0;
	const char *ext;
	enum kaas_log_entry_kind k = KAAS_LOG_ENTRY_OTHER;
	if (kaas_seg_parse_name(name, &b, &e, &g, &ext) == 0) {
		if (strcmp(ext, "log") == 0)
			k = KAAS_LOG_ENTRY_SEGMENT;
		else if (strcmp(ext, "index") == 0 || strcmp(ext, "timeindex") == 0)
			k = KAAS_LOG_ENTRY_INDEX;
	} else if (kaas_manifest_parse_name(name, &e) == 0) {
		k = KAAS_LOG_ENTRY_MANIFEST;
	} else if (strcmp(name, MANIFEST_NAME) == 0) {
		k = KAAS_LOG_ENTRY_LEGACY_MANIFEST;
	} else if (strcmp(name, PSTATE_NAME) == 0) {
		k = KAAS_LOG_ENTRY_PSTATE;
	} else if (strcmp(name, TXNIDX_NAME) == 0) {
		k = KAAS_LOG_ENTRY_TXNIDX;
	} else if (strcmp(name, FENCE_DIR) == 0) {
		k = KAAS_LOG_ENTRY_FENCE;
	} else if (strcmp(name, FENCE_NAME) == 0) {
		k = KAAS_LOG_ENTRY_LEGACY_FENCE;
	}
	if (base)
		*base = b;
	if (epoch)
		*epoch = e;
	return k;
}

void kaas_log_inspect_free(struct kaas_log_inspect *li)
{
	if (!li)
		return;
	for (size_t i = 0; i < li->n; i++)
		free(li->segs[i].path);
	free(li->segs);
	free(li->manifest);
	free(li->dir);
	memset(li, 0, sizeof *li);
}

/* One manifest entry into *s: 0 or -EBADMSG. */
static int entry_from_json(const cJSON *o, struct kaas_log_inspect_seg *s)
{
	uint64_t ep, end;
	const cJSON *sealed = cJSON_GetObjectItemCaseSensitive(o, "sealed");
	if (kaas_json_get_i64(o, "base", &s->base) < 0 || kaas_json_get_u64(o, "epoch", &ep) < 0 ||
	    kaas_json_get_u64(o, "end", &end) < 0 || kaas_json_get_i64(o, "next", &s->next) < 0 ||
	    kaas_json_get_i64(o, "max_ts", &s->max_ts) < 0 || !cJSON_IsBool(sealed) ||
	    s->base < 0 || ep > UINT32_MAX || s->next < s->base)
		return -EBADMSG;
	s->epoch = (uint32_t)ep;
	uint64_t gen = 0; /* optional: a cleaned segment's generation */
	if (cJSON_GetObjectItemCaseSensitive(o, "gen") &&
	    (kaas_json_get_u64(o, "gen", &gen) < 0 || gen > UINT32_MAX))
		return -EBADMSG;
	s->gen = (uint32_t)gen;
	s->end = end;
	s->sealed = cJSON_IsTrue(sealed);
	return 0;
}

/* The manifest body's segment list into li: 0, -EBADMSG or -ENOMEM. */
static int load_entries(struct kaas_log_inspect *li, const cJSON *body)
{
	uint64_t ep;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(body, "segments");
	if (kaas_json_get_u64(body, "epoch", &ep) < 0 || ep > UINT32_MAX ||
	    kaas_json_get_i64(body, "log_start", &li->log_start) < 0 || li->log_start < 0 ||
	    !cJSON_IsArray(arr))
		return kaas_sub_fail(EBADMSG, "%s: bad epoch, log_start or segment list",
				     li->manifest);
	if (li->manifest_epoch && ep != li->manifest_epoch)
		return kaas_sub_fail(EBADMSG, "%s: holds epoch %" PRIu64 ", not the one in its name",
				     li->manifest, ep);
	li->manifest_epoch = (uint32_t)ep;
	size_t cap = (size_t)cJSON_GetArraySize(arr);
	li->segs = calloc(cap ? cap : 1, sizeof *li->segs);
	if (!li->segs)
		return -ENOMEM;
	const cJSON *o;
	cJSON_ArrayForEach(o, arr) {
		struct kaas_log_inspect_seg *s = &li->segs[li->n];
		if (entry_from_json(o, s) < 0 || (li->n && !li->segs[li->n - 1].sealed) ||
		    (li->n && s->base < li->segs[li->n - 1].next))
			return kaas_sub_fail(EBADMSG, "%s: segment entry %zu is invalid", li->manifest,
					     li->n);
		s->path = kaas_seg_path(li->dir, s->base, s->epoch, s->gen, "log");
		if (!s->path)
			return -ENOMEM;
		s->file_size = -1;
		li->n++;
	}
	return 0;
}

/* Sizes of every segment file, and the active segment's valid tail. */
static int look_at_files(struct kaas_substrate *sub, struct kaas_log_inspect *li)
{
	for (size_t i = 0; i < li->n; i++) {
		struct kaas_log_inspect_seg *s = &li->segs[i];
		struct kaas_stat st;
		int rc = kaas_sub_stat(sub, s->path, &st);
		if (rc < 0 && rc != -ENOENT)
			return rc;
		s->file_size = rc < 0 ? -1 : (int64_t)st.size;
		s->valid_end = s->end;
		s->valid_next = s->next;
		if (s->sealed || rc < 0)
			continue;
		struct kaas_file *f;
		rc = kaas_sub_open(sub, s->path, KAAS_O_READ, 0, &f);
		if (rc < 0)
			return rc;
		rc = kaas_seg_scan(f, s->end, s->next, UINT64_MAX, 1, 0, NULL, NULL, &s->valid_end,
				   &s->valid_next);
		kaas_sub_close(f);
		if (rc < 0)
			return rc;
	}
	li->high_watermark = li->n ? li->segs[li->n - 1].valid_next : li->log_start;
	return 0;
}

int kaas_log_inspect_open(struct kaas_substrate *data, const char *dir,
			  struct kaas_log_inspect *out)
{
	memset(out, 0, sizeof *out);
	out->dir = strdup(dir);
	if (!out->dir)
		return -ENOMEM;
	int rc = kaas_manifest_find_in(data, dir, &out->manifest, &out->manifest_epoch);
	if (rc == -ENOENT) {
		struct kaas_stat st;
		return kaas_sub_stat(data, dir, &st) < 0 ? -ENOENT : 0;
	}
	if (rc < 0)
		return rc;
	cJSON *body = NULL;
	rc = kaas_doc_read(data, out->manifest, MANIFEST_KIND, MANIFEST_VERSION, &body, NULL);
	if (rc < 0)
		return rc;
	rc = load_entries(out, body);
	cJSON_Delete(body);
	if (rc < 0)
		return rc;
	return look_at_files(data, out);
}

struct walk {
	const struct kaas_log_inspect_seg *seg;
	int64_t from;
	kaas_log_inspect_cb cb;
	void *arg;
};

static int walk_cb(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		   const unsigned char *batch, size_t len)
{
	struct walk *w = arg;
	if (h->base_offset + h->last_offset_delta < w->from)
		return 0;
	return w->cb(w->arg, w->seg, pos, batch, len);
}

int kaas_log_inspect_batches(struct kaas_substrate *data, const struct kaas_log_inspect *li,
			     int64_t from, kaas_log_inspect_cb cb, void *arg)
{
	struct walk w = { .from = from, .cb = cb, .arg = arg };
	for (size_t i = 0; i < li->n; i++) {
		const struct kaas_log_inspect_seg *s = &li->segs[i];
		if (s->valid_next <= from || s->valid_end == 0)
			continue;
		struct kaas_file *f;
		int rc = kaas_sub_open(data, s->path, KAAS_O_READ, 0, &f);
		if (rc == -ENOENT)
			return kaas_sub_fail(EUCLEAN, "%s: named by %s but missing", s->path,
					     li->manifest);
		if (rc < 0)
			return rc;
		w.seg = s;
		uint64_t end;
		int64_t next;
		rc = kaas_seg_scan(f, 0, s->base, s->valid_end, 0, 1, walk_cb, &w, &end, &next);
		kaas_sub_close(f);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int check_cb(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		    const unsigned char *batch, size_t len)
{
	struct kaas_log_seg_check *c = arg;
	c->batches++;
	if (!kaas_batch_crc_ok(batch, len)) {
		if (!c->bad_crc) {
			c->first_bad_pos = pos;
			c->first_bad_offset = h->base_offset;
		}
		c->bad_crc++;
	}
	return 0;
}

int kaas_log_inspect_check_seg(struct kaas_substrate *data, const struct kaas_log_inspect_seg *s,
			       uint64_t limit, struct kaas_log_seg_check *out)
{
	memset(out, 0, sizeof *out);
	out->first_bad_offset = -1;
	struct kaas_file *f;
	int rc = kaas_sub_open(data, s->path, KAAS_O_READ, 0, &f);
	if (rc < 0)
		return rc;
	rc = kaas_seg_scan(f, 0, s->base, limit, 0, 1, check_cb, out, &out->scanned_end,
			   &out->next_offset);
	kaas_sub_close(f);
	return rc;
}
