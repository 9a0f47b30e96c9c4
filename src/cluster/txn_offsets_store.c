/* txn_offsets_store.c — pending transactional offsets of a group (txn_store.h). */
#include "cluster/txn_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/partition_entry.h"
#include "contract/contract.h"
#include "contract/doc.h"
#include "contract/epoch_fence.h"
#include "util/status.h"

#define PENDING_KIND "txn-offsets"
#define PENDING_PREFIX "txn-offsets-"

static int group_dir(const char *group, char *out, size_t size)
{
	return kaas_txn_named_dir(KAAS_GROUPS_DIR, group, out, size);
}

/* Parse "<prefix><20 digits>-<20 digits><suffix>": 0 with both, else -1. */
static int parse_two(const char *name, const char *prefix, const char *suffix, uint64_t *a,
		     uint64_t *b)
{
	size_t pl = strlen(prefix), sl = strlen(suffix), n = strlen(name);
	if (n != pl + 20 + 1 + 20 + sl || strncmp(name, prefix, pl) || strcmp(name + n - sl, suffix) ||
	    name[pl + 20] != '-')
		return -1;
	uint64_t v[2] = { 0, 0 };
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < 20; i++) {
			char c = name[pl + (size_t)k * 21 + i];
			if (c < '0' || c > '9')
				return -1;
			v[k] = v[k] * 10 + (uint64_t)(c - '0');
		}
	*a = v[0];
	*b = v[1];
	return 0;
}

void kaas_txn_pending_free(struct kaas_txn_pending *p)
{
	if (!p)
		return;
	free(p->txn_id);
	kaas_group_offsets_free(&p->offs);
	memset(p, 0, sizeof *p);
}

void kaas_txn_pending_free_all(struct kaas_txn_pending *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kaas_txn_pending_free(&v[i]);
	free(v);
}

int kaas_txn_pending_write(struct kaas_substrate *cluster, const char *group,
			   const struct kaas_txn_pending *p)
{
	char dir[512], path[700], fence[600];
	int rc = group_dir(group, dir, sizeof dir);
	if (rc < 0)
		return rc;
	cJSON *b = cJSON_CreateObject();
	if (!b)
		return -ENOMEM;
	cJSON_AddStringToObject(b, "group", group);
	cJSON_AddStringToObject(b, "txn_id", p->txn_id);
	kaas_json_add_i64(b, "producer_id", p->producer_id);
	kaas_json_add_i64(b, "producer_epoch", p->producer_epoch);
	kaas_json_add_u64(b, "seq", p->seq);
	kaas_json_add_u64(b, "epoch", p->epoch);
	cJSON *arr = cJSON_AddArrayToObject(b, "offsets");
	for (size_t i = 0; i < p->offs.n; i++) {
		const struct kaas_committed *c = &p->offs.items[i];
		cJSON *o = kaas_partition_entry_add(arr, c->topic, c->partition);
		cJSON_AddStringToObject(o, "topic_id", c->topic_id); /* "" when unknown */
		kaas_json_add_i64(o, "offset", c->offset);
		if (c->metadata)
			cJSON_AddStringToObject(o, "metadata", c->metadata);
		kaas_json_add_i64(o, "leader_epoch", c->leader_epoch);
	}
	snprintf(path, sizeof path, "%s/" PENDING_PREFIX "%020" PRId64 "-%020" PRIu64 ".json", dir,
		 p->producer_id, p->epoch);
	snprintf(fence, sizeof fence, "%s/" KAAS_GROUP_FENCE_DIR, dir);
	return kaas_txn_write_fenced(cluster, path, PENDING_KIND, b, fence, p->epoch);
}

static int read_pending(struct kaas_substrate *cluster, const char *path, const char *group,
			struct kaas_txn_pending *p)
{
	cJSON *b;
	memset(p, 0, sizeof *p);
	int rc = kaas_doc_read(cluster, path, PENDING_KIND, 1, &b, NULL);
	if (rc < 0)
		return rc;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "txn_id");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(b, "group");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(b, "offsets");
	int64_t pe = 0;
	rc = 0;
	if (!cJSON_IsString(id) || !cJSON_IsString(g) || strcmp(g->valuestring, group) ||
	    !cJSON_IsArray(arr) || kaas_json_get_i64(b, "producer_id", &p->producer_id) ||
	    kaas_json_get_i64(b, "producer_epoch", &pe) || kaas_json_get_u64(b, "seq", &p->seq) ||
	    kaas_json_get_u64(b, "epoch", &p->epoch))
		rc = kaas_sub_fail(EBADMSG, "%s: malformed pending offsets", path);
	p->producer_epoch = (int16_t)pe;
	if (rc == 0 && (!(p->txn_id = strdup(id->valuestring)) || !(p->offs.group = strdup(group))))
		rc = -ENOMEM;
	const cJSON *it;
	const cJSON *items = rc == 0 ? arr : NULL;
	cJSON_ArrayForEach(it, items)
	{
		const char *topic;
		int32_t part;
		int64_t off, le = -1;
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *tid = cJSON_GetObjectItemCaseSensitive(it, "topic_id");
		if (kaas_partition_entry_get(it, &topic, &part) < 0 ||
		    kaas_json_get_i64(it, "offset", &off) < 0) {
			rc = kaas_sub_fail(EBADMSG, "%s: malformed offset entry", path);
			break;
		}
		kaas_json_get_i64(it, "leader_epoch", &le);
		rc = kaas_group_set(&p->offs, topic, part, off, (int32_t)le,
				    cJSON_IsString(md) ? md->valuestring : NULL, 0);
		if (rc == 0)
			rc = kaas_group_set_topic_id(&p->offs, topic, part,
						     cJSON_IsString(tid) ? tid->valuestring : "");
		if (rc < 0)
			break;
	}
	cJSON_Delete(b);
	if (rc < 0)
		kaas_txn_pending_free(p);
	return rc;
}

int kaas_txn_pending_read_all(struct kaas_substrate *cluster, const char *group,
			      struct kaas_txn_pending **out, size_t *n)
{
	char dir[512];
	struct kaas_dirlist l;
	*out = NULL;
	*n = 0;
	int rc = group_dir(group, dir, sizeof dir);
	if (rc == 0)
		rc = kaas_sub_list(cluster, dir, &l);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	struct kaas_txn_pending *v = calloc(l.n + 1, sizeof *v);
	if (!v) {
		kaas_dirlist_free(&l);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; rc >= 0 && i < l.n; i++) {
		uint64_t pid, e, e2;
		if (parse_two(l.names[i], PENDING_PREFIX, ".json", &pid, &e) < 0)
			continue;
		int newest = 1; /* the highest epoch of this producer id only */
		for (size_t j = 0; j < l.n; j++) {
			uint64_t pid2;
			if (parse_two(l.names[j], PENDING_PREFIX, ".json", &pid2, &e2) == 0 &&
			    pid2 == pid && e2 > e)
				newest = 0;
		}
		if (!newest)
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, l.names[i]);
		rc = read_pending(cluster, path, group, &v[k]);
		if (rc == -ENOENT)
			rc = 0; /* removed meanwhile */
		else if (rc == 0)
			k++;
	}
	kaas_dirlist_free(&l);
	if (rc < 0) {
		kaas_txn_pending_free_all(v, k);
		return rc;
	}
	*out = v;
	*n = k;
	return 0;
}

/* Unlink every name in group's directory for which match(name) holds. */
static void unlink_matching(struct kaas_substrate *cluster, const char *group,
			    int (*match)(void *ctx, const char *name), void *ctx)
{
	char dir[512];
	if (group_dir(group, dir, sizeof dir) == 0)
		kaas_txn_unlink_matching(cluster, dir, match, ctx);
}

static int pending_of(void *ctx, const char *name)
{
	uint64_t pid, e;
	return parse_two(name, PENDING_PREFIX, ".json", &pid, &e) == 0 &&
	       (int64_t)pid == *(const int64_t *)ctx;
}

void kaas_txn_pending_remove(struct kaas_substrate *cluster, const char *group,
			     int64_t producer_id)
{
	unlink_matching(cluster, group, pending_of, &producer_id);
}

struct prune_ctx {
	int (*keep)(void *ctx, int64_t pid, uint64_t seq);
	void *ctx;
};

static int outcome_unwanted(void *ctx, const char *name)
{
	struct prune_ctx *pc = ctx;
	uint64_t pid, seq;
	if (parse_two(name, "txn-commit-", "", &pid, &seq) < 0 &&
	    parse_two(name, "txn-abort-", "", &pid, &seq) < 0)
		return 0;
	return !pc->keep(pc->ctx, (int64_t)pid, seq);
}

void kaas_txn_outcomes_prune(struct kaas_substrate *cluster, const char *group,
			     int (*keep)(void *ctx, int64_t pid, uint64_t seq), void *ctx)
{
	struct prune_ctx pc = { keep, ctx };
	unlink_matching(cluster, group, outcome_unwanted, &pc);
}
