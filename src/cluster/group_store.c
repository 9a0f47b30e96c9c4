/* group_store.c — epoch-fenced committed offsets of consumer groups. */
#include "cluster/group_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "contract/epoch_fence.h"
#include "contract/doc.h"
#include "cluster/partition_entry.h"
#include "util/fnv.h"
#include "util/status.h"

#define DOC_KIND "group-offsets"
#define DOC_VERSION 1

static int keep_byte(unsigned char c, size_t pos)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
		return 1;
	return c == '.' && pos > 0;
}

int kaas_group_dirname(const char *group, char *out, size_t size)
{
	if (size < 200)
		return -ENAMETOOLONG;
	if (!*group) {
		snprintf(out, size, "%%");
		return 0;
	}
	size_t j = 0;
	const size_t cut = 180;
	int long_name = 0;
	for (size_t i = 0; group[i]; i++) {
		unsigned char c = (unsigned char)group[i];
		size_t need = keep_byte(c, i) ? 1 : 3;
		if (j + need > cut) {
			long_name = 1;
			break;
		}
		if (need == 1)
			out[j++] = (char)c;
		else
			j += (size_t)snprintf(out + j, size - j, "%%%02X", c);
	}
	out[j] = '\0';
	if (long_name) {
		uint64_t h = kaas_fnv64(KAAS_FNV64_INIT, group, strlen(group));
		snprintf(out + j, size - j, "~%016" PRIx64, h);
	}
	return 0;
}

static int group_path(const char *group, char *out, size_t size)
{
	char enc[256];
	int rc = kaas_group_dirname(group, enc, sizeof enc);
	if (rc < 0)
		return rc;
	snprintf(out, size, KAAS_GROUPS_DIR "/%s", enc);
	return 0;
}

/* Parse "offsets-<20>.json" -> epoch. */
static int parse_offsets_name(const char *name, uint64_t *e)
{
	size_t n = strlen(name);
	if (n != strlen("offsets-") + 20 + 5 || strcmp(name + n - 5, ".json") != 0)
		return -EINVAL;
	char tmp[64];
	memcpy(tmp, name, n - 5);
	tmp[n - 5] = '\0';
	return kaas_claim_parse(tmp, "offsets", e);
}

/* The prefix of a group's pending transactional offsets documents
 * (cluster/txn_offsets_store.c). */
#define TXN_PENDING_PREFIX "txn-offsets-"

struct scan {
	uint64_t newest_offsets, newest_takeover;
	int have_offsets, have_takeover;
	int have_pending;         /* a txn-offsets-* document */
};

static int scan_cb(void *arg, const char *name, enum kaas_file_type t)
{
	struct scan *s = arg;
	uint64_t e;
	if (parse_offsets_name(name, &e) == 0 && (!s->have_offsets || e > s->newest_offsets)) {
		s->newest_offsets = e;
		s->have_offsets = 1;
	} else if (kaas_claim_parse(name, "takeover", &e) == 0 && (!s->have_takeover || e > s->newest_takeover)) {
		s->newest_takeover = e;
		s->have_takeover = 1;
	} else if (strncmp(name, TXN_PENDING_PREFIX, strlen(TXN_PENDING_PREFIX)) == 0) {
		s->have_pending = 1;
	}
	(void)t;
	return 0;
}

static int scan_once(struct kaas_substrate *sub, const char *dir, struct scan *s)
{
	memset(s, 0, sizeof *s);
	return kaas_sub_readdir(sub, dir, scan_cb, s);
}

/* Scan a group's directory.  -ENOENT only when the server says it is
 * missing: the first answer may be this host's cached "no such name" for
 * groups/<enc> or groups/ (contract.h, "fresh lookups": a host that looked
 * the name up before another host's first commit made it keeps that answer
 * for up to acdirmin), so it is confirmed after the directories on the way
 * are revalidated.  Taken as the truth, it made a coordinator that had just
 * taken the group over answer its committed offsets as absent. */
static int scan_dir(struct kaas_substrate *sub, const char *dir, struct scan *s)
{
	int rc = scan_once(sub, dir, s);
	if (rc != -ENOENT)
		return rc;
	rc = kaas_revalidate_parents(sub, dir);
	return rc < 0 ? rc : scan_once(sub, dir, s);
}

/* Release what one committed entry owns (its topic and metadata). */
static void committed_clear(struct kaas_committed *c)
{
	free(c->topic);
	free(c->metadata);
	c->topic = c->metadata = NULL;
}

void kaas_group_offsets_free(struct kaas_group_offsets *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		committed_clear(&g->items[i]);
	free(g->items);
	free(g->group);
	memset(g, 0, sizeof *g);
}

const struct kaas_committed *kaas_group_get(const struct kaas_group_offsets *g, const char *topic,
					    int32_t partition)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->items[i].partition == partition && !strcmp(g->items[i].topic, topic))
			return &g->items[i];
	return NULL;
}

int kaas_group_set(struct kaas_group_offsets *g, const char *topic, int32_t partition, int64_t offset,
		   int32_t leader_epoch, const char *metadata, int64_t commit_ms)
{
	struct kaas_committed *c = (struct kaas_committed *)kaas_group_get(g, topic, partition);
	char *md = metadata ? strdup(metadata) : NULL;
	if (metadata && !md)
		return -ENOMEM;
	if (!c) {
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 16;
			struct kaas_committed *items = realloc(g->items, cap * sizeof *items);
			if (!items) {
				free(md);
				return -ENOMEM;
			}
			g->items = items;
			g->cap = cap;
		}
		c = &g->items[g->n];
		memset(c, 0, sizeof *c);
		c->topic = strdup(topic);
		if (!c->topic) {
			free(md);
			return -ENOMEM;
		}
		c->partition = partition;
		g->n++;
	}
	free(c->metadata);
	c->metadata = md;
	c->offset = offset;
	c->leader_epoch = leader_epoch;
	c->commit_ms = commit_ms;
	return 0;
}

int kaas_group_set_topic_id(struct kaas_group_offsets *g, const char *topic, int32_t partition,
			    const char *topic_id)
{
	struct kaas_committed *c = (struct kaas_committed *)kaas_group_get(g, topic, partition);
	if (!c)
		return -ENOENT;
	snprintf(c->topic_id, sizeof c->topic_id, "%s", topic_id && strlen(topic_id) == 32 ? topic_id : "");
	return 0;
}

size_t kaas_group_forget_all(struct kaas_group_offsets *g)
{
	size_t n = g->n;
	for (size_t i = 0; i < n; i++)
		committed_clear(&g->items[i]);
	g->n = 0;
	return n;
}

int kaas_group_forget(struct kaas_group_offsets *g, const char *topic, int32_t partition)
{
	struct kaas_committed *c = (struct kaas_committed *)kaas_group_get(g, topic, partition);
	if (!c)
		return 0;
	committed_clear(c);
	size_t i = (size_t)(c - g->items);
	memmove(c, c + 1, (g->n - i - 1) * sizeof *c);
	g->n--;
	return 1;
}

size_t kaas_group_forget_topic(struct kaas_group_offsets *g, const char *topic)
{
	size_t removed = 0, j = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (!strcmp(g->items[i].topic, topic)) {
			committed_clear(&g->items[i]);
			removed++;
		} else {
			g->items[j++] = g->items[i];
		}
	}
	g->n = j;
	return removed;
}

static int load_doc(struct kaas_substrate *sub, const char *dir, const char *group, uint64_t e,
		    struct kaas_group_offsets *g)
{
	char path[512];
	snprintf(path, sizeof path, "%s/offsets-%020" PRIu64 ".json", dir, e);
	cJSON *body;
	int rc = kaas_doc_read(sub, path, DOC_KIND, DOC_VERSION, &body, NULL);
	if (rc < 0)
		return rc;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(body, "group");
	const cJSON *offs = cJSON_GetObjectItemCaseSensitive(body, "offsets");
	if (!cJSON_IsString(name) || !cJSON_IsArray(offs)) {
		cJSON_Delete(body);
		return kaas_sub_fail(EBADMSG, "%s: group document lacks group/offsets", path);
	}
	if (strcmp(name->valuestring, group) != 0) {
		cJSON_Delete(body);
		return kaas_sub_fail(EEXIST, "%s: belongs to group '%s', not '%s' (name hash collision)", path,
				     name->valuestring, group);
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, offs)
	{
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const char *topic;
		int32_t p;
		int64_t o, le = -1, ms = 0;
		if (kaas_partition_entry_get(it, &topic, &p) < 0 || kaas_json_get_i64(it, "offset", &o) < 0) {
			cJSON_Delete(body);
			return kaas_sub_fail(EBADMSG, "%s: malformed offset entry", path);
		}
		kaas_json_get_i64(it, "leader_epoch", &le);
		kaas_json_get_i64(it, "commit_ms", &ms);
		rc = kaas_group_set(g, topic, p, o, (int32_t)le,
				    cJSON_IsString(md) ? md->valuestring : NULL, ms);
		const cJSON *tid = cJSON_GetObjectItemCaseSensitive(it, "topic_id");
		if (rc == 0)
			rc = kaas_group_set_topic_id(g, topic, p,
						     cJSON_IsString(tid) ? tid->valuestring : "");
		if (rc < 0) {
			cJSON_Delete(body);
			return rc;
		}
	}
	cJSON_Delete(body);
	return 0;
}

static int load_newest(struct kaas_substrate *sub, const char *dir, const char *group,
		       const struct scan *s, struct kaas_group_offsets *g)
{
	if (!s->have_offsets)
		return 0;
	return load_doc(sub, dir, group, s->newest_offsets, g);
}

/* g->group and g->epoch set, then the newest state the scan found loaded
 * into g: 0 or -errno (g is the caller's to free either way). */
static int load_as(struct kaas_substrate *cluster, const char *dir, const char *group,
		   const struct scan *s, uint64_t epoch, struct kaas_group_offsets *g)
{
	g->group = strdup(group);
	g->epoch = epoch;
	if (!g->group)
		return -ENOMEM;
	return load_newest(cluster, dir, group, s, g);
}

int kaas_group_open(struct kaas_substrate *cluster, const char *group, uint64_t epoch,
		    struct kaas_group_offsets *g)
{
	memset(g, 0, sizeof *g);
	char dir[512];
	int rc = group_path(group, dir, sizeof dir);
	if (rc == 0)
		rc = kaas_sub_mkdirs(cluster, dir, 0755);
	if (rc < 0)
		return rc;
	/* 1. Claim the takeover first (contract/epoch_fence.h): from now on a
	 * zombie's commit sees it, and an epoch another coordinator holds is
	 * refused — equal epochs never mean the same owner.  takeover-<E>
	 * names left by older versions count as claims. */
	struct scan s;
	rc = scan_dir(cluster, dir, &s);
	if (rc < 0)
		return rc;
	if (s.have_takeover && s.newest_takeover > epoch)
		return kaas_sub_fail(KAAS_EFENCED, "group '%s': fenced: coordinator epoch %" PRIu64 " < %" PRIu64,
				     group, epoch, s.newest_takeover);
	char fence[600];
	snprintf(fence, sizeof fence, "%s/" KAAS_GROUP_FENCE_DIR, dir);
	char note[128];
	snprintf(note, sizeof note, "coordinator: host %s\n", cluster->host);
	rc = kaas_fence_claim(cluster, fence, epoch, note, "group.open.before-fence-claim");
	if (rc == KAAS_FENCE_SUPERSEDED || rc == -EEXIST)
		return kaas_sub_fail(KAAS_EFENCED, "group '%s': fenced: coordinator epoch %" PRIu64
				     " is superseded or another coordinator's", group, epoch);
	if (rc < 0)
		return rc;
	rc = scan_dir(cluster, dir, &s); /* again: what a zombie committed before our claim */
	/* 2. Then load the newest state. */
	if (rc == 0)
		rc = load_as(cluster, dir, group, &s, epoch, g);
	/* 3. Publish the loaded state under our epoch at once, so readers of
	 * the newest document never see a zombie's unacknowledged commit. */
	if (rc == 0 && (!s.have_offsets || s.newest_offsets < epoch))
		rc = kaas_group_commit(cluster, g);
	if (rc < 0)
		kaas_group_offsets_free(g);
	return rc;
}

int kaas_group_peek(struct kaas_substrate *cluster, const char *group, struct kaas_group_offsets *g)
{
	memset(g, 0, sizeof *g);
	char dir[512];
	struct scan s;
	int rc = group_path(group, dir, sizeof dir);
	if (rc == 0)
		rc = scan_dir(cluster, dir, &s);
	if (rc < 0)
		return rc;
	if (!s.have_offsets)
		return -ENOENT;
	rc = load_as(cluster, dir, group, &s, s.newest_offsets, g);
	if (rc < 0)
		kaas_group_offsets_free(g);
	return rc;
}

/* The value of hex digit c, or -1. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The group name in the newest offsets document of groups/<enc>: 0 and
 * *name, -ENOENT (none), or -errno. */
static int name_from_doc(struct kaas_substrate *cluster, const char *enc, char **name)
{
	char dir[512], path[600];
	snprintf(dir, sizeof dir, KAAS_GROUPS_DIR "/%s", enc);
	struct scan s;
	int rc = scan_dir(cluster, dir, &s);
	if (rc < 0)
		return rc;
	if (!s.have_offsets)
		return -ENOENT;
	snprintf(path, sizeof path, "%s/offsets-%020" PRIu64 ".json", dir, s.newest_offsets);
	cJSON *body;
	rc = kaas_doc_read(cluster, path, DOC_KIND, DOC_VERSION, &body, NULL);
	if (rc < 0)
		return rc;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(body, "group");
	*name = cJSON_IsString(g) ? strdup(g->valuestring) : NULL;
	rc = !cJSON_IsString(g) ? kaas_sub_fail(EBADMSG, "%s: no group name", path)
	     : *name	       ? 0
			       : -ENOMEM;
	cJSON_Delete(body);
	return rc;
}

int kaas_group_name_of_dir(struct kaas_substrate *cluster, const char *enc, char **name)
{
	*name = NULL;
	if (strchr(enc, '~')) /* a long name, cut: only its documents tell it */
		return name_from_doc(cluster, enc, name);
	size_t n = strlen(enc), j = 0;
	char *out = malloc(n + 1);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n && strcmp(enc, "%") != 0; i++) { /* "%": the empty name */
		if (enc[i] != '%') {
			out[j++] = enc[i];
			continue;
		}
		int hi = i + 2 < n ? hexval(enc[i + 1]) : -1;
		int lo = i + 2 < n ? hexval(enc[i + 2]) : -1;
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(out);
			return -EINVAL;
		}
		out[j++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[j] = '\0';
	/* Only a name kaas_group_dirname gives back exactly is a group's. */
	char again[256];
	if (kaas_group_dirname(out, again, sizeof again) < 0 || strcmp(again, enc) != 0) {
		free(out);
		return -EINVAL;
	}
	*name = out;
	return 0;
}

int kaas_group_has_state(struct kaas_substrate *cluster, const char *group, size_t *noffsets)
{
	char dir[512];
	struct scan s;
	*noffsets = 0;
	int rc = group_path(group, dir, sizeof dir);
	if (rc == 0)
		rc = scan_dir(cluster, dir, &s);
	if (rc == -ENOENT)
		return 0; /* no directory on the server: nothing was ever committed */
	if (rc < 0)
		return rc;
	for (int tries = 0; s.have_offsets; tries++) {
		struct kaas_group_offsets g = { 0 };
		rc = load_as(cluster, dir, group, &s, s.newest_offsets, &g);
		*noffsets = g.n;
		kaas_group_offsets_free(&g);
		if (rc == -ENOENT && tries < 3 && (rc = scan_dir(cluster, dir, &s)) == 0)
			continue; /* pruned by a newer coordinator's write meanwhile */
		if (rc < 0)
			return rc;
		break;
	}
	return *noffsets > 0 || s.have_pending;
}

/* One committed offset as an entry of the document's "offsets" array (the
 * fields load_doc reads back). */
static void committed_to_json(cJSON *arr, const struct kaas_committed *c)
{
	cJSON *o = kaas_partition_entry_add(arr, c->topic, c->partition);
	kaas_json_add_i64(o, "offset", c->offset);
	kaas_json_add_i64(o, "leader_epoch", c->leader_epoch);
	if (c->metadata)
		cJSON_AddStringToObject(o, "metadata", c->metadata);
	kaas_json_add_i64(o, "commit_ms", c->commit_ms);
	if (c->topic_id[0])
		cJSON_AddStringToObject(o, "topic_id", c->topic_id);
}

static cJSON *to_json(const struct kaas_group_offsets *g)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "group", g->group);
	kaas_json_add_u64(b, "epoch", g->epoch);
	cJSON *arr = cJSON_AddArrayToObject(b, "offsets");
	for (size_t i = 0; i < g->n; i++)
		committed_to_json(arr, &g->items[i]);
	return b;
}

/* Remove the offsets and takeover files of epochs below `below` (a failed
 * unlink is left for the next commit). */
static void prune_older(struct kaas_substrate *cluster, const char *dir, uint64_t below)
{
	struct kaas_dirlist l;
	if (kaas_sub_list(cluster, dir, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		const char *name = l.names[i];
		uint64_t e;
		if ((parse_offsets_name(name, &e) == 0 || kaas_claim_parse(name, "takeover", &e) == 0) &&
		    e < below) {
			char path[1024];
			snprintf(path, sizeof path, "%s/%s", dir, name);
			kaas_sub_unlink(cluster, path);
		}
	}
	kaas_dirlist_free(&l);
}

int kaas_group_commit(struct kaas_substrate *cluster, const struct kaas_group_offsets *g)
{
	char dir[512];
	int rc = group_path(g->group, dir, sizeof dir);
	if (rc < 0)
		return rc;
	char path[600];
	snprintf(path, sizeof path, "%s/offsets-%020" PRIu64 ".json", dir, g->epoch);
	cJSON *b = to_json(g);
	if (!b)
		return -ENOMEM;
	rc = kaas_doc_write(cluster, path, DOC_KIND, DOC_VERSION, b);
	cJSON_Delete(b);
	if (rc < 0)
		return rc;
	char fence[600];
	snprintf(fence, sizeof fence, "%s/" KAAS_GROUP_FENCE_DIR, dir);
	rc = kaas_fence_check(cluster, fence, g->epoch, NULL);
	if (rc == KAAS_FENCE_SUPERSEDED || rc == -ENOENT)
		return kaas_sub_fail(KAAS_EFENCED, "group '%s': commit fenced: coordinator epoch %" PRIu64
				     " taken over (or the group's fence removed)", g->group, g->epoch);
	if (rc < 0)
		return rc;
	/* Older incarnations' files: removed now, or by the next commit. */
	prune_older(cluster, dir, g->epoch);
	return 0;
}
