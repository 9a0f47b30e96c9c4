/* txn_store.c — epoch-fenced transaction coordinator state (txn_store.h). */
#include "cluster/txn_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/group_store.h"
#include "cluster/partition_entry.h"
#include "contract/contract.h"
#include "contract/doc.h"
#include "contract/epoch_fence.h"
#include "util/status.h"
#include "util/grow.h"

#define STATE_KIND "txn-state"
#define STATE_VERSION 1
#define STATE_PREFIX "state-"
#define STATE_SUFFIX ".json"

static const char *const state_names[] = {
	"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
};

const char *kaas_txn_state_name(enum kaas_txn_state s)
{
	return (unsigned)s < sizeof state_names / sizeof state_names[0] ? state_names[s] : "Dead";
}

static int state_parse(const char *name, enum kaas_txn_state *out)
{
	for (unsigned i = 0; i < sizeof state_names / sizeof state_names[0]; i++)
		if (!strcmp(name, state_names[i])) {
			*out = (enum kaas_txn_state)i;
			return 0;
		}
	return -EINVAL;
}

int kaas_txn_named_dir(const char *root, const char *name, char *out, size_t size)
{
	char enc[256];
	int rc = kaas_group_dirname(name, enc, sizeof enc);
	if (rc == 0)
		snprintf(out, size, "%s/%s", root, enc);
	return rc;
}

static int txn_dir(const char *txn_id, char *out, size_t size)
{
	return kaas_txn_named_dir(KAAS_TXNS_DIR, txn_id, out, size);
}

/* List dir: 1 with *l, 0 when it does not exist (nothing in it), -errno. */
static int list_if_any(struct kaas_substrate *sub, const char *dir, struct kaas_dirlist *l)
{
	int rc = kaas_sub_list(sub, dir, l);
	return rc == -ENOENT ? 0 : rc < 0 ? rc : 1;
}

void kaas_txn_unlink_matching(struct kaas_substrate *sub, const char *dir,
			      int (*match)(void *ctx, const char *name), void *ctx)
{
	struct kaas_dirlist l;
	if (list_if_any(sub, dir, &l) <= 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, l.names[i]);
		if (match(ctx, l.names[i]))
			(void)kaas_sub_unlink(sub, path);
	}
	kaas_dirlist_free(&l);
}

int kaas_txn_write_fenced(struct kaas_substrate *sub, const char *path, const char *kind,
			  cJSON *body, const char *fence, uint64_t epoch)
{
	int rc = kaas_doc_write(sub, path, kind, 1, body);
	cJSON_Delete(body);
	if (rc == 0) {
		rc = kaas_fence_check(sub, fence, epoch, NULL);
		if (rc == KAAS_FENCE_SUPERSEDED || rc == -ENOENT)
			rc = kaas_sub_fail(KAAS_EFENCED, "%s: written at epoch %" PRIu64
					   ", which %s no longer holds", path, epoch, fence);
	}
	return rc;
}

/* The epoch of a "state-<20 digits>.json" name, or -EINVAL. */
static int state_epoch(const char *name, uint64_t *e)
{
	size_t n = strlen(name), pre = strlen(STATE_PREFIX), suf = strlen(STATE_SUFFIX);
	if (n != pre + KAAS_CLAIM_DIGITS + suf || strncmp(name, STATE_PREFIX, pre) ||
	    strcmp(name + n - suf, STATE_SUFFIX))
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = pre; i < pre + KAAS_CLAIM_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	*e = v;
	return 0;
}

/* The highest state epoch in dir: 1 and *e, 0 none, or -errno. */
static int newest_state(struct kaas_substrate *sub, const char *dir, uint64_t *e)
{
	struct kaas_dirlist l;
	int rc = list_if_any(sub, dir, &l);
	if (rc <= 0)
		return rc;
	int found = 0;
	for (size_t i = 0; i < l.n; i++) {
		uint64_t v;
		if (state_epoch(l.names[i], &v) == 0 && (!found || v > *e)) {
			*e = v;
			found = 1;
		}
	}
	kaas_dirlist_free(&l);
	return found;
}

void kaas_txn_clear_members(struct kaas_txn_doc *d)
{
	for (size_t i = 0; i < d->nparts; i++)
		free(d->parts[i].topic);
	for (size_t i = 0; i < d->ngroups; i++)
		free(d->groups[i]);
	d->nparts = d->ngroups = 0;
}

void kaas_txn_doc_free(struct kaas_txn_doc *d)
{
	if (!d)
		return;
	kaas_txn_clear_members(d);
	free(d->parts);
	free(d->groups);
	free(d->txn_id);
	memset(d, 0, sizeof *d);
}

int kaas_txn_add_part(struct kaas_txn_doc *d, const char *topic, int32_t partition)
{
	for (size_t i = 0; i < d->nparts; i++)
		if (d->parts[i].partition == partition && !strcmp(d->parts[i].topic, topic))
			return 0;
	struct kaas_txn_part *p = kaas_grow(d->parts, &d->capparts, d->nparts, sizeof *p, 8);
	if (!p)
		return -ENOMEM;
	d->parts = p;
	char *t = strdup(topic);
	if (!t)
		return -ENOMEM;
	d->parts[d->nparts].topic = t;
	d->parts[d->nparts++].partition = partition;
	return 1;
}

int kaas_txn_has_group(const struct kaas_txn_doc *d, const char *group)
{
	for (size_t i = 0; i < d->ngroups; i++)
		if (!strcmp(d->groups[i], group))
			return 1;
	return 0;
}

int kaas_txn_add_group(struct kaas_txn_doc *d, const char *group)
{
	if (kaas_txn_has_group(d, group))
		return 0;
	char **g = kaas_grow(d->groups, &d->capgroups, d->ngroups, sizeof *g, 4);
	if (!g)
		return -ENOMEM;
	d->groups = g;
	if (!(d->groups[d->ngroups] = strdup(group)))
		return -ENOMEM;
	d->ngroups++;
	return 1;
}

int kaas_txn_doc_copy(struct kaas_txn_doc *dst, const struct kaas_txn_doc *src)
{
	*dst = *src;
	dst->parts = NULL;
	dst->groups = NULL;
	dst->nparts = dst->capparts = dst->ngroups = dst->capgroups = 0;
	dst->txn_id = strdup(src->txn_id ? src->txn_id : "");
	int rc = dst->txn_id ? 0 : -ENOMEM;
	for (size_t i = 0; rc >= 0 && i < src->nparts; i++)
		rc = kaas_txn_add_part(dst, src->parts[i].topic, src->parts[i].partition);
	for (size_t i = 0; rc >= 0 && i < src->ngroups; i++)
		rc = kaas_txn_add_group(dst, src->groups[i]);
	if (rc < 0)
		kaas_txn_doc_free(dst);
	return rc < 0 ? rc : 0;
}

static cJSON *doc_json(const struct kaas_txn_doc *d)
{
	cJSON *b = cJSON_CreateObject();
	if (!b)
		return NULL;
	cJSON_AddStringToObject(b, "txn_id", d->txn_id);
	kaas_json_add_u64(b, "epoch", d->epoch);
	kaas_json_add_i64(b, "producer_id", d->producer_id);
	kaas_json_add_i64(b, "producer_epoch", d->producer_epoch);
	kaas_json_add_i64(b, "timeout_ms", d->timeout_ms);
	kaas_json_add_i64(b, "timed_out_epoch", d->timed_out_epoch);
	cJSON_AddStringToObject(b, "state", kaas_txn_state_name(d->state));
	kaas_json_add_u64(b, "seq", d->seq);
	kaas_json_add_i64(b, "start_ms", d->start_ms);
	kaas_json_add_i64(b, "update_ms", d->update_ms);
	cJSON *parts = cJSON_AddArrayToObject(b, "partitions");
	for (size_t i = 0; i < d->nparts; i++)
		kaas_partition_entry_add(parts, d->parts[i].topic, d->parts[i].partition);
	cJSON *groups = cJSON_AddArrayToObject(b, "groups");
	for (size_t i = 0; i < d->ngroups; i++)
		cJSON_AddItemToArray(groups, cJSON_CreateString(d->groups[i]));
	return b;
}

/* Fill *d from a document body: 0 or -EBADMSG (-ENOMEM). */
static int doc_parse(const cJSON *b, const char *path, struct kaas_txn_doc *d)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "txn_id");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(b, "state");
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(b, "partitions");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(b, "groups");
	int64_t pid, pe, to, start = 0, upd = 0, tout = -1;
	uint64_t seq, epoch;
	if (!cJSON_IsString(id) || !cJSON_IsString(st) || state_parse(st->valuestring, &d->state) ||
	    !cJSON_IsArray(parts) || !cJSON_IsArray(groups) ||
	    kaas_json_get_i64(b, "producer_id", &pid) || kaas_json_get_i64(b, "producer_epoch", &pe) ||
	    kaas_json_get_i64(b, "timeout_ms", &to) || kaas_json_get_u64(b, "seq", &seq) ||
	    kaas_json_get_u64(b, "epoch", &epoch) || pe < -1 || pe > INT16_MAX || to < 0 ||
	    to > INT32_MAX)
		return kaas_sub_fail(EBADMSG, "%s: malformed transaction state", path);
	kaas_json_get_i64(b, "start_ms", &start);
	kaas_json_get_i64(b, "update_ms", &upd);
	kaas_json_get_i64(b, "timed_out_epoch", &tout); /* absent: none */
	d->timed_out_epoch = tout >= 0 && tout <= INT16_MAX ? (int16_t)tout : -1;
	d->producer_id = pid;
	d->producer_epoch = (int16_t)pe;
	d->timeout_ms = (int32_t)to;
	d->seq = seq;
	d->epoch = epoch;
	d->start_ms = start;
	d->update_ms = upd;
	if (!(d->txn_id = strdup(id->valuestring)))
		return -ENOMEM;
	const cJSON *it;
	cJSON_ArrayForEach(it, parts)
	{
		const char *topic;
		int32_t p;
		if (kaas_partition_entry_get(it, &topic, &p) < 0)
			return kaas_sub_fail(EBADMSG, "%s: malformed partition entry", path);
		if (kaas_txn_add_part(d, topic, p) < 0)
			return -ENOMEM;
	}
	cJSON_ArrayForEach(it, groups)
	{
		if (!cJSON_IsString(it))
			return kaas_sub_fail(EBADMSG, "%s: malformed group entry", path);
		if (kaas_txn_add_group(d, it->valuestring) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Read state-<e>.json in dir into *d (zeroed first): 0 or -errno. */
static int read_state(struct kaas_substrate *sub, const char *dir, uint64_t e,
		      struct kaas_txn_doc *d)
{
	char path[600];
	snprintf(path, sizeof path, "%s/" STATE_PREFIX "%020" PRIu64 STATE_SUFFIX, dir, e);
	cJSON *body;
	memset(d, 0, sizeof *d);
	int rc = kaas_doc_read(sub, path, STATE_KIND, STATE_VERSION, &body, NULL);
	if (rc < 0)
		return rc;
	rc = doc_parse(body, path, d);
	cJSON_Delete(body);
	if (rc < 0)
		kaas_txn_doc_free(d);
	return rc;
}

/* The newest state in dir: 0 with *d, -ENOENT none, or -errno. */
static int peek_in(struct kaas_substrate *sub, const char *dir, struct kaas_txn_doc *d)
{
	uint64_t e = 0;
	int rc = newest_state(sub, dir, &e);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -ENOENT;
	return read_state(sub, dir, e, d);
}

int kaas_txn_peek(struct kaas_substrate *cluster, const char *txn_id, struct kaas_txn_doc *d)
{
	char dir[512];
	int rc = txn_dir(txn_id, dir, sizeof dir);
	if (rc == 0)
		rc = peek_in(cluster, dir, d);
	if (rc == 0 && strcmp(d->txn_id, txn_id)) {
		kaas_txn_doc_free(d);
		rc = -ENOENT; /* another id sharing the encoded name */
	}
	return rc;
}

int kaas_txn_peek_dir(struct kaas_substrate *cluster, const char *enc, struct kaas_txn_doc *d)
{
	char dir[512];
	snprintf(dir, sizeof dir, KAAS_TXNS_DIR "/%s", enc);
	return peek_in(cluster, dir, d);
}

int kaas_txn_open(struct kaas_substrate *cluster, const char *txn_id, uint64_t epoch,
		  struct kaas_txn_doc *d)
{
	memset(d, 0, sizeof *d);
	char dir[512], fence[600], note[128];
	int rc = txn_dir(txn_id, dir, sizeof dir);
	if (rc == 0)
		rc = kaas_sub_mkdirs(cluster, dir, 0755);
	if (rc < 0)
		return rc;
	/* 1. The claim first: from now on a zombie's write is told it is fenced. */
	snprintf(fence, sizeof fence, "%s/fence", dir);
	snprintf(note, sizeof note, "txn coordinator: host %s\n", cluster->host);
	rc = kaas_fence_claim(cluster, fence, epoch, note, "txn.open.before-fence-claim");
	if (rc == -EEXIST)
		rc = KAAS_FENCE_SUPERSEDED; /* another coordinator's epoch: as good as fenced */
	if (rc < 0)
		return rc != KAAS_EFENCED ? rc : kaas_sub_fail(KAAS_EFENCED, "transactional id '%s': "
				"coordinator epoch %" PRIu64 " superseded", txn_id, epoch);
	/* 2. Then the newest state (what a zombie wrote before our claim included). */
	uint64_t e = 0;
	rc = newest_state(cluster, dir, &e);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		rc = read_state(cluster, dir, e, d);
		if (rc == 0 && strcmp(d->txn_id, txn_id)) {
			kaas_txn_doc_free(d);
			return kaas_sub_fail(EEXIST, "%s: belongs to another transactional id", dir);
		}
		if (rc < 0)
			return rc;
	} else {
		d->txn_id = strdup(txn_id);
		if (!d->txn_id)
			return -ENOMEM;
		d->producer_id = -1;
		d->producer_epoch = -1;
		d->timed_out_epoch = -1;
	}
	d->epoch = epoch;
	/* 3. Re-published under our epoch before anything acts on it. */
	if (rc == 0 && e < epoch)
		rc = kaas_txn_write(cluster, d);
	if (rc < 0)
		kaas_txn_doc_free(d);
	return rc;
}

static int state_below(void *ctx, const char *name)
{
	uint64_t e;
	return state_epoch(name, &e) == 0 && e < *(const uint64_t *)ctx;
}

int kaas_txn_write(struct kaas_substrate *cluster, const struct kaas_txn_doc *d)
{
	char dir[512], path[600], fence[600];
	int rc = txn_dir(d->txn_id, dir, sizeof dir);
	cJSON *b = rc < 0 ? NULL : doc_json(d);
	if (!b)
		return rc < 0 ? rc : -ENOMEM;
	snprintf(path, sizeof path, "%s/" STATE_PREFIX "%020" PRIu64 STATE_SUFFIX, dir, d->epoch);
	snprintf(fence, sizeof fence, "%s/fence", dir);
	rc = kaas_txn_write_fenced(cluster, path, STATE_KIND, b, fence, d->epoch);
	if (rc == 0) /* older epochs' documents: now, or after the next write */
		kaas_txn_unlink_matching(cluster, dir, state_below, (void *)&d->epoch);
	return rc;
}

int kaas_txn_fence_check(struct kaas_substrate *cluster, const char *txn_id, uint64_t epoch)
{
	char dir[512], fence[600];
	int rc = txn_dir(txn_id, dir, sizeof dir);
	if (rc < 0)
		return rc;
	snprintf(fence, sizeof fence, "%s/fence", dir);
	rc = kaas_fence_check(cluster, fence, epoch, NULL);
	if (rc == KAAS_FENCE_SUPERSEDED || rc == -ENOENT)
		return kaas_sub_fail(KAAS_EFENCED, "transactional id '%s': coordinator epoch %" PRIu64
				     " superseded", txn_id, epoch);
	return rc < 0 ? rc : 0;
}

int kaas_txn_list_dirs(struct kaas_substrate *cluster,
		       void (*each)(void *ctx, const char *enc), void *ctx)
{
	struct kaas_dirlist l;
	int rc = list_if_any(cluster, KAAS_TXNS_DIR, &l);
	for (size_t i = 0; rc > 0 && i < l.n; i++)
		if (l.names[i][0] != '.' && l.types[i] == KAAS_FT_DIR)
			each(ctx, l.names[i]);
	if (rc > 0)
		kaas_dirlist_free(&l);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------- outcomes for groups */

static int outcome_path(const char *group, char *dir, size_t size, char *prefix, size_t psize,
			int64_t pid, int commit)
{
	int rc = kaas_txn_named_dir(KAAS_GROUPS_DIR, group, dir, size);
	if (rc < 0)
		return rc;
	snprintf(prefix, psize, "txn-%s-%020" PRId64, commit ? "commit" : "abort", pid);
	return 0;
}

int kaas_txn_group_decide(struct kaas_substrate *cluster, const char *group, int64_t producer_id,
			  uint64_t seq, int commit)
{
	char dir[512], prefix[96];
	int rc = outcome_path(group, dir, sizeof dir, prefix, sizeof prefix, producer_id, commit);
	if (rc == 0)
		rc = kaas_sub_mkdirs(cluster, dir, 0755);
	if (rc == 0)
		rc = kaas_claim_exact(cluster, dir, prefix, seq, NULL);
	return rc == -EEXIST ? 0 : rc;
}

int kaas_txn_group_outcome(struct kaas_substrate *cluster, const char *group,
			   int64_t producer_id, uint64_t seq)
{
	char dir[512], prefix[96], names[2][128];
	for (int commit = 0; commit <= 1; commit++) {
		int rc = outcome_path(group, dir, sizeof dir, prefix, sizeof prefix, producer_id, commit);
		if (rc < 0)
			return rc;
		kaas_claim_name(names[commit], sizeof names[commit], prefix, seq);
	}
	/* A listing, not a lookup by name: a listing is fresh (close-to-open
	 * on the directory), a lookup may be answered from a cached "no such
	 * file" (the contract's weakest floor). */
	struct kaas_dirlist l;
	int rc = list_if_any(cluster, dir, &l);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	int found = -ENOENT; /* both claims (never written): commit wins */
	for (size_t i = 0; i < l.n; i++) {
		if (!strcmp(l.names[i], names[1]))
			found = 1;
		else if (!strcmp(l.names[i], names[0]) && found < 0)
			found = 0;
	}
	kaas_dirlist_free(&l);
	return found;
}

void kaas_txn_group_forget(struct kaas_substrate *cluster, const char *group, int64_t producer_id,
			   uint64_t seq)
{
	for (int commit = 0; commit <= 1; commit++) {
		char dir[512], prefix[96], name[128], path[700];
		if (outcome_path(group, dir, sizeof dir, prefix, sizeof prefix, producer_id, commit) < 0)
			return;
		kaas_claim_name(name, sizeof name, prefix, seq);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		(void)kaas_sub_unlink(cluster, path);
	}
}
