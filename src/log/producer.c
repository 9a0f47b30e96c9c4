/* producer.c — per-producer-id idempotence window and its snapshot. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contract/doc.h"
#include "log/log_internal.h"
#include "util/grow.h"

static size_t hash_pid(int64_t pid, size_t nb)
{
	uint64_t x = (uint64_t)pid * 0x9E3779B97F4A7C15ull;
	return (size_t)(x >> 32) & (nb - 1);
}

int kaas_pstate_init(struct pstate *ps)
{
	memset(ps, 0, sizeof *ps);
	ps->nb = 64;
	ps->idx_at = -1;
	ps->tab = calloc(ps->nb, sizeof *ps->tab);
	return ps->tab ? 0 : -ENOMEM;
}

void kaas_pstate_free(struct pstate *ps)
{
	for (size_t i = 0; ps->tab && i < ps->nb; i++) {
		struct producer *p = ps->tab[i];
		while (p) {
			struct producer *n = p->next;
			free(p);
			p = n;
		}
	}
	free(ps->tab);
	free(ps->aborted);
	memset(ps, 0, sizeof *ps);
}

struct producer *kaas_pstate_find(const struct pstate *ps, int64_t pid)
{
	for (struct producer *p = ps->tab[hash_pid(pid, ps->nb)]; p; p = p->next)
		if (p->st.producer_id == pid)
			return p;
	return NULL;
}

static int grow(struct pstate *ps)
{
	size_t nb = ps->nb * 2;
	struct producer **t = calloc(nb, sizeof *t);
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nb; i++) {
		struct producer *p = ps->tab[i];
		while (p) {
			struct producer *n = p->next;
			size_t h = hash_pid(p->st.producer_id, nb);
			p->next = t[h];
			t[h] = p;
			p = n;
		}
	}
	free(ps->tab);
	ps->tab = t;
	ps->nb = nb;
	return 0;
}

int kaas_pstate_apply(struct pstate *ps, int64_t pid, int16_t epoch, int32_t base_seq,
		 int32_t last_delta, int64_t base_offset, int64_t ts)
{
	if (pid < 0)
		return 0;
	struct producer *p = kaas_pstate_find(ps, pid);
	if (!p) {
		if (ps->count >= ps->nb && grow(ps) < 0)
			return -ENOMEM;
		p = calloc(1, sizeof *p);
		if (!p)
			return -ENOMEM;
		p->st.producer_id = pid;
		p->st.epoch = epoch;
		p->st.txn_first_offset = -1;
		p->marker_offset = -1;
		p->marker_kind = -1;
		p->marker_coord = -1;
		size_t h = hash_pid(pid, ps->nb);
		p->next = ps->tab[h];
		ps->tab[h] = p;
		ps->count++;
	}
	if (epoch != p->st.epoch) {
		/* A new epoch starts a new window (the rules are the caller's). */
		p->st.epoch = epoch;
		p->st.n = 0;
	}
	if (p->st.n == KAAS_LOG_PRODUCER_WINDOW) {
		memmove(&p->st.batches[0], &p->st.batches[1],
			(KAAS_LOG_PRODUCER_WINDOW - 1) * sizeof p->st.batches[0]);
		p->st.n--;
	}
	struct kaas_log_producer_batch *b = &p->st.batches[p->st.n++];
	b->first_seq = base_seq;
	/* Sequences wrap at INT32_MAX like Kafka's. */
	b->last_seq = (int32_t)(((int64_t)base_seq + last_delta) % ((int64_t)INT32_MAX + 1));
	b->base_offset = base_offset;
	b->last_offset = base_offset + last_delta;
	if (ts > p->st.last_timestamp)
		p->st.last_timestamp = ts;
	return 0;
}

int kaas_pstate_add_aborted(struct pstate *ps, int64_t pid, int64_t first, int64_t last)
{
	struct kaas_log_aborted_txn *a =
		kaas_grow(ps->aborted, &ps->capaborted, ps->naborted, sizeof *a, 16);
	if (!a)
		return -ENOMEM;
	ps->aborted = a;
	ps->aborted[ps->naborted++] = (struct kaas_log_aborted_txn){ pid, first, last };
	return 0;
}

/* A marker for p at offset `at`, from coordinator epoch coord (-1: none). */
static int apply_marker(struct pstate *ps, struct producer *p, int16_t epoch, int kind,
			int32_t coord, int64_t at)
{
	if (epoch > p->st.epoch) {
		p->st.epoch = epoch;
		p->st.n = 0;
	}
	int64_t first = p->st.txn_first_offset;
	if (first >= 0) {
		p->st.txn_first_offset = -1;
		assert(ps->open_txns > 0);
		ps->open_txns--;
	}
	p->marker_offset = at;
	p->marker_epoch = epoch;
	p->marker_kind = (int8_t)kind;
	if (coord > p->marker_coord)
		p->marker_coord = coord;
	if (kind == 0)
		return kaas_pstate_add_aborted(ps, p->st.producer_id, first >= 0 ? first : at, at);
	return 0;
}

int kaas_pstate_apply_batch(struct pstate *ps, const unsigned char *d, size_t len, int64_t base,
			    int64_t ts)
{
	int64_t pid = (int64_t)rd64(d + 43);
	if (pid < 0)
		return 0;
	int16_t epoch = (int16_t)rd16(d + 51);
	uint16_t attrs = rd16(d + 21);
	int rc = 0;
	if (attrs & KAAS_BATCH_ATTR_CONTROL) {
		int kind = kaas_txn_marker_kind(d, len);
		struct producer *p = kaas_pstate_find(ps, pid);
		if (!p) {
			/* Known from now on, with an empty window. */
			rc = kaas_pstate_apply(ps, pid, epoch, 0, 0, base, ts);
			if (rc < 0)
				return rc;
			p = kaas_pstate_find(ps, pid);
			p->st.n = 0;
		}
		return kind < 0 ? 0 : apply_marker(ps, p, epoch, kind,
						   kaas_txn_marker_coord(d, len), base);
	}
	rc = kaas_pstate_apply(ps, pid, epoch, (int32_t)rd32(d + 53), (int32_t)rd32(d + 23), base, ts);
	if (rc < 0 || !(attrs & KAAS_BATCH_ATTR_TRANSACTIONAL))
		return rc;
	struct producer *p = kaas_pstate_find(ps, pid);
	if (p->st.txn_first_offset < 0) {
		p->st.txn_first_offset = base;
		ps->open_txns++;
	}
	return 0;
}

cJSON *kaas_pstate_to_json(const struct pstate *ps)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = root ? cJSON_AddArrayToObject(root, "producers") : NULL;
	if (!arr || kaas_json_add_i64(root, "next_offset", ps->next_offset) < 0)
		goto fail;
	for (size_t i = 0; i < ps->nb; i++) {
		for (struct producer *p = ps->tab[i]; p; p = p->next) {
			cJSON *o = cJSON_CreateObject();
			if (!o || !cJSON_AddItemToArray(arr, o))
				goto fail;
			char id[32];
			snprintf(id, sizeof id, "%" PRId64, p->st.producer_id);
			cJSON *bs;
			if (!cJSON_AddStringToObject(o, "id", id) ||
			    kaas_json_add_i64(o, "epoch", p->st.epoch) < 0 ||
			    kaas_json_add_i64(o, "last_ts", p->st.last_timestamp) < 0 ||
			    !(bs = cJSON_AddArrayToObject(o, "batches")))
				goto fail;
			if (p->st.txn_first_offset >= 0 &&
			    kaas_json_add_i64(o, "txn_first", p->st.txn_first_offset) < 0)
				goto fail;
			if (p->marker_kind >= 0 &&
			    (kaas_json_add_i64(o, "marker_offset", p->marker_offset) < 0 ||
			     kaas_json_add_i64(o, "marker_epoch", p->marker_epoch) < 0 ||
			     kaas_json_add_i64(o, "marker_kind", p->marker_kind) < 0))
				goto fail;
			if (p->marker_coord >= 0 &&
			    kaas_json_add_i64(o, "marker_coord", p->marker_coord) < 0)
				goto fail;
			for (unsigned k = 0; k < p->st.n; k++) {
				const struct kaas_log_producer_batch *b = &p->st.batches[k];
				cJSON *e = cJSON_CreateObject();
				if (!e || !cJSON_AddItemToArray(bs, e) ||
				    kaas_json_add_i64(e, "first_seq", b->first_seq) < 0 ||
				    kaas_json_add_i64(e, "last_seq", b->last_seq) < 0 ||
				    kaas_json_add_i64(e, "base", b->base_offset) < 0 ||
				    kaas_json_add_i64(e, "last", b->last_offset) < 0)
					goto fail;
			}
		}
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

/* The transaction fields of one producer's entry (absent: none). */
static int txn_from_json(struct pstate *ps, struct producer *p, const cJSON *o)
{
	int64_t first, at, ep, kind;
	if (cJSON_GetObjectItemCaseSensitive(o, "txn_first")) {
		if (kaas_json_get_i64(o, "txn_first", &first) < 0 || first < 0)
			return -EBADMSG;
		p->st.txn_first_offset = first;
		ps->open_txns++;
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "marker_offset")) {
		if (kaas_json_get_i64(o, "marker_offset", &at) < 0 || at < 0 ||
		    kaas_json_get_i64(o, "marker_epoch", &ep) < 0 || ep < 0 || ep > INT16_MAX ||
		    kaas_json_get_i64(o, "marker_kind", &kind) < 0 || kind < 0 || kind > 1)
			return -EBADMSG;
		p->marker_offset = at;
		p->marker_epoch = (int16_t)ep;
		p->marker_kind = (int8_t)kind;
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "marker_coord")) { /* absent: none */
		int64_t coord;
		if (kaas_json_get_i64(o, "marker_coord", &coord) < 0 || coord < 0 ||
		    coord > INT32_MAX)
			return -EBADMSG;
		p->marker_coord = (int32_t)coord;
	}
	return 0;
}

int kaas_pstate_from_json(struct pstate *ps, const cJSON *body)
{
	if (kaas_json_get_i64(body, "next_offset", &ps->next_offset) < 0)
		return -EBADMSG;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(body, "producers");
	if (!cJSON_IsArray(arr))
		return -EBADMSG;
	const cJSON *o;
	cJSON_ArrayForEach(o, arr) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		const cJSON *bs = cJSON_GetObjectItemCaseSensitive(o, "batches");
		if (!cJSON_IsString(id) || !cJSON_IsArray(bs))
			return -EBADMSG;
		char *endp;
		errno = 0;
		long long pid = strtoll(id->valuestring, &endp, 10);
		if (errno || *endp || pid < 0)
			return -EBADMSG;
		int64_t ep, lts;
		if (kaas_json_get_i64(o, "epoch", &ep) < 0 || ep < INT16_MIN || ep > INT16_MAX ||
		    kaas_json_get_i64(o, "last_ts", &lts) < 0)
			return -EBADMSG;
		const cJSON *e;
		int any = 0;
		cJSON_ArrayForEach(e, bs) {
			int64_t fs, ls, base, last;
			if (kaas_json_get_i64(e, "first_seq", &fs) < 0 ||
			    kaas_json_get_i64(e, "last_seq", &ls) < 0 ||
			    kaas_json_get_i64(e, "base", &base) < 0 ||
			    kaas_json_get_i64(e, "last", &last) < 0 || fs < 0 || fs > INT32_MAX ||
			    ls < 0 || ls > INT32_MAX || last < base || last - base > INT32_MAX)
				return -EBADMSG;
			int rc = kaas_pstate_apply(ps, pid, (int16_t)ep, (int32_t)fs, (int32_t)(last - base),
					      base, lts);
			if (rc < 0)
				return rc;
			any = 1;
		}
		if (!any) {
			int rc = kaas_pstate_apply(ps, pid, (int16_t)ep, 0, 0, 0, lts);
			if (rc < 0)
				return rc;
			kaas_pstate_find(ps, pid)->st.n = 0;
		}
		int trc = txn_from_json(ps, kaas_pstate_find(ps, pid), o);
		if (trc < 0)
			return trc;
	}
	/* Older snapshots have none: no transactions then. */
	ps->idx_at = -1;
	if (cJSON_GetObjectItemCaseSensitive(body, "aborted_index_at") &&
	    (kaas_json_get_i64(body, "aborted_index_at", &ps->idx_at) < 0 || ps->idx_at < -1 ||
	     ps->idx_at > ps->next_offset))
		return -EBADMSG;
	return 0;
}
