/* log_txn.c — transactions on the partition (log.h): markers (control
 * batches) written once, the last stable offset, and the aborted-transaction
 * index beside the segments.
 *
 * The index, "<dir>/aborted-txns.json" (kaas_doc, kind kaas-aborted-txns,
 * version 1): {"next_offset": N, "aborted": [[pid, first, last], ...]}, one
 * entry per abort marker below N at or above the log start (when written),
 * by marker offset (`last`).  Derived data: replaced just before a producer
 * snapshot when aborts were added since the last one (never for a
 * partition without aborts); the snapshot names it ("aborted_index_at": N,
 * -1 for none; no abort lies between N and the snapshot's own coverage).
 * At open a missing, torn or other index than the one named is rebuilt
 * from the markers in the log.  The in-memory copy lives in log->ps
 * (producer.c applies the markers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contract/doc.h"
#include "log/log_internal.h"
#include "util/crc32c.h"
#include "util/lock_rank.h"

/* ------------------------------------------------------------ markers */

int kaas_txn_marker_kind(const unsigned char *b, size_t len)
{
	if (!b || len < KAAS_BATCH_HEADER_LEN + 1 || !(rd16(b + 21) & KAAS_BATCH_ATTR_CONTROL))
		return -1;
	const unsigned char *p = b + KAAS_BATCH_HEADER_LEN, *end = b + len;
	int64_t rlen, ts, od, klen;
	if (kaas_batch_varint(&p, end, &rlen) < 0 || p + 1 > end)
		return -1;
	p++; /* record attributes */
	if (kaas_batch_varint(&p, end, &ts) < 0 || kaas_batch_varint(&p, end, &od) < 0 ||
	    kaas_batch_varint(&p, end, &klen) < 0 || klen < 4 || end - p < 4)
		return -1;
	if (rd16(p) != 0) /* key version */
		return -1;
	uint16_t type = rd16(p + 2);
	return type <= 1 ? (int)type : -1;
}

int32_t kaas_txn_marker_coord(const unsigned char *b, size_t len)
{
	if (kaas_txn_marker_kind(b, len) < 0)
		return -1;
	const unsigned char *p = b + KAAS_BATCH_HEADER_LEN, *end = b + len;
	int64_t rlen, ts, od, klen, vlen;
	if (kaas_batch_varint(&p, end, &rlen) < 0 || p + 1 > end)
		return -1;
	p++; /* record attributes */
	if (kaas_batch_varint(&p, end, &ts) < 0 || kaas_batch_varint(&p, end, &od) < 0 ||
	    kaas_batch_varint(&p, end, &klen) < 0 || klen < 4 || end - p < klen)
		return -1;
	p += klen;
	if (kaas_batch_varint(&p, end, &vlen) < 0 || vlen < 6 || end - p < 6 || rd16(p) != 0)
		return -1;
	uint32_t coord = rd32(p + 2);
	return coord > INT32_MAX ? -1 : (int32_t)coord;
}

static void wr16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* The marker's RecordBatch v2 (MARKER_LEN bytes) into b. */
enum { MARKER_REC = 17, MARKER_LEN = KAAS_BATCH_HEADER_LEN + MARKER_REC };
static void build_marker(unsigned char *b, int64_t pid, int16_t epoch, int commit,
			 int32_t coord_epoch, int64_t now_ms)
{
	memset(b, 0, MARKER_LEN);
	wr32(b + 8, MARKER_LEN - 12);                 /* batchLength */
	b[16] = 2;                                    /* magic */
	wr16(b + 21, KAAS_BATCH_ATTR_CONTROL | KAAS_BATCH_ATTR_TRANSACTIONAL);
	wr32(b + 23, 0);                              /* lastOffsetDelta */
	wr64(b + 27, (uint64_t)now_ms);               /* baseTimestamp */
	wr64(b + 35, (uint64_t)now_ms);               /* maxTimestamp */
	wr64(b + 43, (uint64_t)pid);
	wr16(b + 51, (uint16_t)epoch);
	wr32(b + 53, UINT32_MAX);                     /* baseSequence -1 */
	wr32(b + 57, 1);                              /* records */
	unsigned char *r = b + KAAS_BATCH_HEADER_LEN;
	r[0] = (MARKER_REC - 1) * 2;                  /* length 16, zigzag */
	r[1] = 0;                                     /* attributes */
	r[2] = 0;                                     /* timestampDelta */
	r[3] = 0;                                     /* offsetDelta */
	r[4] = 4 * 2;                                 /* key length 4 */
	wr16(r + 5, 0);                               /* key version */
	wr16(r + 7, commit ? 1 : 0);                  /* type: 0 abort, 1 commit */
	r[9] = 6 * 2;                                 /* value length 6 */
	wr16(r + 10, 0);                              /* value version */
	wr32(r + 12, (uint32_t)coord_epoch);
	r[16] = 0;                                    /* no headers */
	wr32(b + 17, kaas_crc32c(0, b + 21, MARKER_LEN - 21));
}

/* What the producer looks like once everything queued is durable (mu
 * held): its epoch, whether a transaction is open, its last marker, the
 * highest coordinator epoch of its markers, and whether that marker is
 * still in flight. */
struct txn_view {
	int known;
	int16_t epoch;
	int open;
	int kind;          /* last marker: 0/1, -1 none */
	int16_t kind_epoch;
	int32_t coord;     /* -1: none */
	int64_t at;
	int in_flight;
};

static void view_fold(struct txn_view *v, const struct pending *q, int64_t pid)
{
	for (; q; q = q->next) {
		const unsigned char *d = q->data;
		if ((int64_t)rd64(d + 43) != pid)
			continue;
		int16_t epoch = (int16_t)rd16(d + 51);
		uint16_t attrs = rd16(d + 21);
		if (!v->known || epoch > v->epoch)
			v->epoch = epoch;
		v->known = 1;
		if (attrs & KAAS_BATCH_ATTR_CONTROL) {
			int kind = kaas_txn_marker_kind(d, q->len);
			if (kind < 0)
				continue;
			v->open = 0;
			v->kind = kind;
			v->kind_epoch = epoch;
			int32_t coord = kaas_txn_marker_coord(d, q->len);
			if (coord > v->coord)
				v->coord = coord;
			v->at = q->base;
			v->in_flight = 1;
		} else if (attrs & KAAS_BATCH_ATTR_TRANSACTIONAL) {
			v->open = 1;
		}
	}
}

static void view_locked(struct kaas_log *log, int64_t pid, struct txn_view *v)
{
	memset(v, 0, sizeof *v);
	v->kind = -1;
	v->coord = -1;
	struct producer *p = kaas_pstate_find(&log->ps, pid);
	if (p) {
		v->known = 1;
		v->epoch = p->st.epoch;
		v->open = p->st.txn_first_offset >= 0;
		v->kind = p->marker_kind;
		v->kind_epoch = p->marker_epoch;
		v->coord = p->marker_coord;
		v->at = p->marker_offset;
	}
	for (struct round *r = kaas_logi_round_of(log->ackq.head); r;
	     r = kaas_logi_round_of(r->link.next))
		view_fold(v, r->list, pid);
	if (log->writing)
		view_fold(v, log->writing->list, pid);
	view_fold(v, log->qhead, pid);
}

int kaas_log_append_marker(struct kaas_log *log, int64_t producer_id, int16_t producer_epoch,
			   int commit, int32_t coordinator_epoch, kaas_log_append_cb cb,
			   void *arg)
{
	if (!log || producer_id < 0 || producer_epoch < 0)
		return kaas_sub_fail(EINVAL, "marker: producer id %lld epoch %d",
				     (long long)producer_id, producer_epoch);
	commit = commit ? 1 : 0;
	kaas_lock(&log->txn_mu, KAAS_RANK_LOG_TXN);
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int failed = log->failed;
	struct txn_view v;
	view_locked(log, producer_id, &v);
	kaas_unlock(&log->mu);
	int rc;
	if (failed) {
		rc = failed;
	} else if (v.known && producer_epoch < v.epoch) {
		rc = kaas_sub_fail(KAAS_EPRODFENCED, "marker: producer %lld epoch %d below %d",
				   (long long)producer_id, producer_epoch, v.epoch);
	} else if (v.known && coordinator_epoch < v.coord) {
		/* A coordinator that lost the id (Kafka's
		 * TRANSACTION_COORDINATOR_FENCED): its marker could close a
		 * later transaction of the same (producer, epoch). */
		rc = kaas_sub_fail(KAAS_ETXN_COORD_FENCED, "marker: producer %lld coordinator epoch"
				   " %d below %d", (long long)producer_id, coordinator_epoch, v.coord);
	} else if (!v.open && v.kind == commit && v.kind_epoch == producer_epoch) {
		/* Written already (a re-drive): answer that marker.  A newer
		 * coordinator's re-drive raises the epoch kept for the producer
		 * (written with the next producer snapshot), so the old
		 * coordinator's late marker is refused from now on. */
		rc = v.in_flight ? kaas_sub_fail(EAGAIN, "marker: the same marker is in flight") : 0;
		if (rc == 0 && coordinator_epoch > v.coord) {
			kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
			struct producer *p = kaas_pstate_find(&log->ps, producer_id);
			if (p && coordinator_epoch > p->marker_coord)
				p->marker_coord = coordinator_epoch;
			kaas_unlock(&log->mu);
		}
		kaas_unlock(&log->txn_mu);
		if (rc == 0 && cb)
			cb(arg, v.at);
		return rc;
	} else {
		unsigned char b[MARKER_LEN];
		build_marker(b, producer_id, producer_epoch, commit, coordinator_epoch,
			     kaas_logi_now_ms_wall());
		struct kaas_log_batch lb = {
			.data = b, .len = sizeof b, .record_count = 1,
			.max_timestamp = (int64_t)rd64(b + 35),
			.producer_id = producer_id, .producer_epoch = producer_epoch,
			.base_sequence = -1,
		};
		rc = kaas_log_append(log, &lb, cb, arg, NULL);
	}
	kaas_unlock(&log->txn_mu);
	return rc;
}

int64_t kaas_log_append_marker_sync(struct kaas_log *log, int64_t producer_id,
				    int16_t producer_epoch, int commit,
				    int32_t coordinator_epoch)
{
	for (;;) {
		struct kaas_logi_wait w;
		kaas_logi_wait_init(&w);
		int rc = kaas_log_append_marker(log, producer_id, producer_epoch, commit,
						coordinator_epoch, kaas_logi_wait_cb, &w);
		int64_t res = kaas_logi_wait_end(&w, rc);
		if (rc != -EAGAIN)
			return res;
		/* The same marker is queued: wait until it is durable (or the
		 * log fails), then ask again to be answered its offset. */
		int wr = kaas_log_wait(log, kaas_log_high_watermark(log), 1000);
		if (wr < 0)
			return wr;
	}
}

/* ------------------------------------------------ last stable offset */

int64_t kaas_log_last_stable_offset(struct kaas_log *log)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	int64_t lso = log->hwm;
	const struct pstate *ps = &log->ps;
	for (size_t i = 0; ps->open_txns && i < ps->nb; i++)
		for (const struct producer *p = ps->tab[i]; p; p = p->next)
			if (p->st.txn_first_offset >= 0 && p->st.txn_first_offset < lso)
				lso = p->st.txn_first_offset;
	kaas_unlock(&log->mu);
	return lso;
}

/* --------------------------------------------------- aborted index */

static int by_first(const void *a, const void *b)
{
	const struct kaas_log_aborted_txn *x = a, *y = b;
	return x->first_offset < y->first_offset ? -1 : x->first_offset > y->first_offset;
}

int kaas_log_aborted_txns(struct kaas_log *log, int64_t from, int64_t to,
			  struct kaas_log_aborted_txn **out)
{
	*out = NULL;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	const struct pstate *ps = &log->ps;
	/* Entries are by marker offset: skip those ending below `from`. */
	size_t lo = 0, hi = ps->naborted;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ps->aborted[mid].last_offset < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t n = 0;
	for (size_t i = lo; i < ps->naborted; i++)
		n += ps->aborted[i].first_offset < to;
	struct kaas_log_aborted_txn *a = n ? malloc(n * sizeof *a) : NULL;
	if (n && !a) {
		kaas_unlock(&log->mu);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = lo; i < ps->naborted && k < n; i++)
		if (ps->aborted[i].first_offset < to)
			a[k++] = ps->aborted[i];
	kaas_unlock(&log->mu);
	if (n > 1)
		qsort(a, n, sizeof *a, by_first);
	*out = a;
	return (int)n;
}

/* The index's body for the entries in memory (mu held), or NULL (-ENOMEM,
 * or a number JSON cannot carry exactly: *rc). */
static cJSON *index_body_locked(struct kaas_log *log, int *rc)
{
	const struct pstate *ps = &log->ps;
	*rc = -ENOMEM;
	cJSON *body = cJSON_CreateObject();
	cJSON *arr = body ? cJSON_AddArrayToObject(body, "aborted") : NULL;
	int ok = arr && kaas_json_add_i64(body, "next_offset", ps->next_offset) == 0;
	for (size_t i = 0; ok && i < ps->naborted; i++) {
		const struct kaas_log_aborted_txn *e = &ps->aborted[i];
		if (e->last_offset < log->log_start)
			continue; /* below the log: dropped */
		if (e->producer_id > ((int64_t)1 << 53)) {
			*rc = -ERANGE; /* not exact in JSON */
			ok = 0;
			break;
		}
		cJSON *t = cJSON_CreateArray();
		ok = t && cJSON_AddItemToArray(arr, t) &&
		     cJSON_AddItemToArray(t, cJSON_CreateNumber((double)e->producer_id)) &&
		     cJSON_AddItemToArray(t, cJSON_CreateNumber((double)e->first_offset)) &&
		     cJSON_AddItemToArray(t, cJSON_CreateNumber((double)e->last_offset));
	}
	if (!ok) {
		cJSON_Delete(body);
		return NULL;
	}
	*rc = 0;
	return body;
}

int kaas_txnidx_snapshot(struct kaas_log *log, cJSON **out)
{
	*out = NULL;
	int rc = 0;
	cJSON *ix = NULL;
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	struct pstate *ps = &log->ps;
	/* Only when aborts were added since the last write: a partition
	 * without transactions never writes one. */
	int64_t at = ps->idx_at;
	size_t n = ps->naborted;
	if (n != ps->idx_written) {
		ix = index_body_locked(log, &rc);
		at = ps->next_offset;
		/* Forget in memory too what the file leaves out (below the log
		 * start: the first entries, by marker offset). */
		size_t drop = 0;
		while (ix && drop < n && ps->aborted[drop].last_offset < log->log_start)
			drop++;
		if (drop) {
			memmove(ps->aborted, ps->aborted + drop, (n - drop) * sizeof *ps->aborted);
			ps->naborted -= drop;
			n -= drop;
		}
	}
	cJSON *body = rc == 0 ? kaas_pstate_to_json(ps) : NULL;
	kaas_unlock(&log->mu);
	if (rc == 0 && (!body || kaas_json_add_i64(body, "aborted_index_at", at) < 0))
		rc = -ENOMEM;
	if (rc == 0 && ix)
		rc = kaas_doc_write(log->sub, log->txnidx_path, TXNIDX_KIND, TXNIDX_VERSION, ix);
	cJSON_Delete(ix);
	if (rc < 0) {
		cJSON_Delete(body);
		return rc;
	}
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	ps->idx_at = at;
	ps->idx_written = n;
	kaas_unlock(&log->mu);
	*out = body;
	return 0;
}

/* An exact non-negative integer below 2^53 (the index's numbers). */
static int num_at(const cJSON *t, int i, int64_t *v)
{
	const cJSON *n = cJSON_GetArrayItem(t, i);
	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 9007199254740992.0 ||
	    (double)(int64_t)n->valuedouble != n->valuedouble)
		return -1;
	*v = (int64_t)n->valuedouble;
	return 0;
}

static int load_body(struct kaas_log *log, const cJSON *body, int64_t at)
{
	int64_t next;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(body, "aborted");
	if (kaas_json_get_i64(body, "next_offset", &next) < 0 || !cJSON_IsArray(arr))
		return -EBADMSG;
	if (next != at)
		return -ESTALE; /* not the one the snapshot names: rebuild */
	const cJSON *t;
	int64_t prev = -1;
	cJSON_ArrayForEach(t, arr) {
		int64_t pid, first, last;
		if (!cJSON_IsArray(t) || num_at(t, 0, &pid) < 0 || num_at(t, 1, &first) < 0 ||
		    num_at(t, 2, &last) < 0 || first > last || last < prev || last >= next)
			return -EBADMSG;
		prev = last;
		if (kaas_pstate_add_aborted(&log->ps, pid, first, last) < 0)
			return -ENOMEM;
	}
	return 0;
}

int kaas_txnidx_load(struct kaas_log *log, int *rebuild)
{
	*rebuild = 0;
	int64_t at = log->ps.idx_at;
	if (at < 0)
		return 0; /* no abort below the snapshot: no index */
	cJSON *body = NULL;
	int ver = 0;
	int rc = kaas_doc_read(log->sub, log->txnidx_path, TXNIDX_KIND, TXNIDX_VERSION, &body, &ver);
	if (rc == 0) {
		rc = load_body(log, body, at);
		cJSON_Delete(body);
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0 && rc != -ENOENT && rc != -EBADMSG && rc != -ESTALE)
		return rc; /* the volume's answer: try the open again */
	if (rc < 0) {
		log->ps.naborted = 0;
		*rebuild = 1;
	}
	log->ps.idx_written = log->ps.naborted;
	return 0;
}

int kaas_txnidx_rebuild(struct kaas_log *log, int64_t to)
{
	struct pstate scratch;
	int rc = kaas_pstate_init(&scratch);
	if (rc < 0)
		return rc;
	struct pstate kept = log->ps;
	log->ps = scratch;
	rc = kaas_pstate_scan(log, log->log_start, to);
	scratch = log->ps;
	log->ps = kept;
	if (rc == 0 && scratch.naborted) {
		/* The scan's entries all end below `to`, those already here at or
		 * above it: put them first. */
		size_t n = scratch.naborted + log->ps.naborted;
		struct kaas_log_aborted_txn *a = malloc(n * sizeof *a);
		if (!a) {
			rc = -ENOMEM;
		} else {
			memcpy(a, scratch.aborted, scratch.naborted * sizeof *a);
			if (log->ps.naborted)
				memcpy(a + scratch.naborted, log->ps.aborted,
				       log->ps.naborted * sizeof *a);
			free(log->ps.aborted);
			log->ps.aborted = a;
			log->ps.naborted = log->ps.capaborted = n;
		}
	}
	kaas_pstate_free(&scratch);
	return rc;
}
