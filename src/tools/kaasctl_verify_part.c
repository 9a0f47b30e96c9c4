/* kaasctl_verify_part.c — `kaasctl verify` for one partition directory:
 * the newest manifest against its segment files (a recorded end past a
 * file's end, a missing file), every batch's length, numbering and CRC32C,
 * orphaned and unlisted segments, older manifests, the producer snapshot,
 * and leftovers. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/doc.h"
#include "log/log_inspect.h"
#include "tools/kaasctl_verify.h"
#include "util/status.h"

#define DATA "data"

/* One manifest entry's file against the manifest and its own batches. */
static void check_segment(struct kv_report *r, const struct kaas_log_inspect *li,
			  const struct kaas_log_inspect_seg *s)
{
	r->segments++;
	if (s->file_size < 0) {
		kv_add(r, KV_ERROR, DATA, s->path, "missing-segment",
		       "named by %s but missing", li->manifest);
		return;
	}
	uint64_t size = (uint64_t)s->file_size;
	if (size < s->end)
		kv_add(r, KV_ERROR, DATA, s->path, "manifest-past-eof",
		       "%s records %s end %" PRIu64 " but the file holds %" PRIu64 " bytes",
		       li->manifest, s->sealed ? "a sealed" : "a checkpoint", s->end, size);
	uint64_t limit = s->end < size ? s->end : size;
	struct kaas_log_seg_check c;
	int rc = kaas_log_inspect_check_seg(r->k->data, s, limit, &c);
	if (rc < 0) {
		kv_add(r, KV_ERROR, DATA, s->path, "unreadable", "%s (%s)", kaas_strerror(rc),
		       kaas_sub_errdetail());
		return;
	}
	r->batches += c.batches;
	if (c.bad_crc)
		kv_add(r, KV_ERROR, DATA, s->path, "bad-crc",
		       "%" PRIu64 " batch(es) fail their CRC32C, the first at offset %" PRId64
		       " (file position %" PRIu64 ")", c.bad_crc, c.first_bad_offset,
		       c.first_bad_pos);
	if (c.scanned_end < limit)
		kv_add(r, KV_ERROR, DATA, s->path, "broken-batches",
		       "whole, numbered batches stop at position %" PRIu64 " (offset %" PRId64
		       ") but %s records %" PRIu64, c.scanned_end, c.next_offset, li->manifest,
		       s->end);
	else if (size >= s->end && c.next_offset != s->next)
		kv_add(r, KV_ERROR, DATA, s->path, "offset-mismatch",
		       "batches end at offset %" PRId64 " but %s records %" PRId64, c.next_offset,
		       li->manifest, s->next);
	if (!s->sealed && size > s->valid_end)
		kv_add(r, KV_WARNING, DATA, s->path, "unverified-tail",
		       "%" PRIu64 " byte(s) after the last valid batch (position %" PRIu64
		       "): an append not yet complete, or a torn write the next leader's tail "
		       "recovery drops", size - s->valid_end, s->valid_end);
}

static const struct kaas_log_inspect_seg *listed(const struct kaas_log_inspect *li, int64_t base,
						 uint32_t epoch)
{
	for (size_t i = 0; i < li->n; i++)
		if (li->segs[i].base == base && li->segs[i].epoch == epoch)
			return &li->segs[i];
	return NULL;
}

/* A segment file no manifest entry names. */
static void check_unlisted(struct kv_report *r, const struct kaas_log_inspect *li,
			   const char *path, uint32_t epoch)
{
	struct kaas_stat st;
	if (kaas_sub_stat(r->k->data, path, &st) < 0)
		return; /* gone meanwhile */
	if (st.size > 0 && (!li->manifest || epoch > li->manifest_epoch))
		kv_add(r, KV_ERROR, DATA, path, "unlisted-segment",
		       "holds %" PRIu64 " bytes of epoch %" PRIu32 " that %s does not name: the "
		       "partition's next open refuses it (EUCLEAN)", st.size, epoch,
		       li->manifest ? li->manifest : "no manifest (there is none)");
	else
		kv_add(r, KV_WARNING, DATA, path, "orphan-segment",
		       "named by no manifest entry (a roll or retention interrupted, or a "
		       "superseded leader's file): removed by the next leader's open");
}

static void check_fence(struct kv_report *r, const char *fdir)
{
	struct kaas_dirlist l;
	if (kaas_sub_list(r->k->data, fdir, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++)
		if (strncmp(l.names[i], "epoch-", 6) != 0)
			kv_leftover(r, r->k->data, DATA, fdir, l.names[i]);
	kaas_dirlist_free(&l);
}

static void check_entry(struct kv_report *r, const struct kaas_log_inspect *li, const char *pdir,
			const char *name)
{
	char *path = kaas_path_join(pdir, name);
	if (!path)
		return;
	int64_t base;
	uint32_t epoch;
	cJSON *body = NULL;
	int rc;
	switch (kaas_log_entry_classify(name, &base, &epoch)) {
	case KAAS_LOG_ENTRY_SEGMENT:
		if (!listed(li, base, epoch))
			check_unlisted(r, li, path, epoch);
		break;
	case KAAS_LOG_ENTRY_INDEX:
		if (!listed(li, base, epoch))
			kv_add(r, KV_WARNING, DATA, path, "orphan-index",
			       "the index of a segment no manifest entry names: removed by the next "
			       "leader's open");
		break;
	case KAAS_LOG_ENTRY_MANIFEST:
	case KAAS_LOG_ENTRY_LEGACY_MANIFEST:
		if (li->manifest && strcmp(li->manifest, path) != 0)
			kv_add(r, KV_WARNING, DATA, path, "older-manifest",
			       "superseded by %s (readers ignore it): removed by the next leader's "
			       "open", li->manifest);
		break;
	case KAAS_LOG_ENTRY_PSTATE:
		r->documents++;
		rc = kaas_doc_read(r->k->data, path, kaas_log_pstate_kind, kaas_log_doc_version,
				   &body, NULL);
		if (rc < 0 && rc != -ENOENT)
			kv_add(r, KV_ERROR, DATA, path, "corrupt-document", "%s (%s)",
			       kaas_strerror(rc), kaas_sub_errdetail());
		cJSON_Delete(body);
		break;
	case KAAS_LOG_ENTRY_TXNIDX:
		/* Derived data (log_txn.c): one that does not read is rebuilt
		 * from the markers by the next leader's open. */
		r->documents++;
		rc = kaas_doc_read(r->k->data, path, kaas_log_txnidx_kind, kaas_log_txnidx_version,
				   &body, NULL);
		if (rc < 0 && rc != -ENOENT)
			kv_add(r, KV_WARNING, DATA, path, "unreadable-index",
			       "the aborted-transaction index: %s (%s); rebuilt from the "
			       "markers by the next leader's open", kaas_strerror(rc),
			       kaas_sub_errdetail());
		cJSON_Delete(body);
		break;
	case KAAS_LOG_ENTRY_FENCE:
		check_fence(r, path);
		break;
	case KAAS_LOG_ENTRY_LEGACY_FENCE:
		break; /* retired, read as a floor: normal on upgraded volumes */
	case KAAS_LOG_ENTRY_OTHER:
		if (!kv_leftover(r, r->k->data, DATA, pdir, name))
			kv_add(r, KV_WARNING, DATA, path, "unknown", "not a name kaas writes here");
		break;
	}
	free(path);
}

void kv_partition(struct kv_report *r, const char *pdir)
{
	struct kaas_log_inspect li;
	kaas_sub_clear_error();
	int rc = kaas_log_inspect_open(r->k->data, pdir, &li);
	if (rc < 0) {
		r->documents += li.manifest != NULL;
		kv_add(r, KV_ERROR, DATA, li.manifest ? li.manifest : pdir,
		       rc == -EBADMSG ? "corrupt-manifest" : "unreadable", "%s (%s)",
		       kaas_strerror(rc), kaas_sub_errdetail());
		kaas_log_inspect_free(&li);
		return;
	}
	r->documents += li.manifest != NULL;
	for (size_t i = 0; i < li.n; i++)
		check_segment(r, &li, &li.segs[i]);
	struct kaas_dirlist l;
	rc = kaas_sub_list(r->k->data, pdir, &l);
	if (rc < 0) {
		kv_add(r, KV_ERROR, DATA, pdir, "unreadable", "%s (%s)", kaas_strerror(rc),
		       kaas_sub_errdetail());
	} else {
		for (size_t i = 0; i < l.n; i++)
			check_entry(r, &li, pdir, l.names[i]);
		kaas_dirlist_free(&l);
	}
	kaas_log_inspect_free(&li);
}
