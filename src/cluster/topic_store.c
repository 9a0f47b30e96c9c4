/* topic_store.c — topic documents, incarnation claims and directory stamps
 * on the volume (see topic_store.h). */
#include "cluster/topic_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/assignment.h"
#include "cluster/membership.h"
#include "contract/contract.h"
#include "contract/doc.h"
#include "contract/epoch_fence.h"
#include "util/status.h"
#include "util/step.h"

#define TOPIC_DOC_KIND "topic"
#define TOPIC_ID_KIND "topic-id"
#define STAMP_FILE ".topic-id.json"
#define INCARNATION_DIR "topic-incarnations"
#define INC_CLAIM "incarnation"
#define INC_OVER "deleted"
#define REV_DIR "revisions"
#define REV_NOTE "topic document"

int kaas_topic_name_valid(const char *name, int len)
{
	if (!name || len < 1 || len > 249)
		return 0;
	for (int i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if ((len == 9 && memcmp(name, "__cluster", 9) == 0) ||
	    (len == 6 && memcmp(name, KAAS_TOPIC_TRASH_DIR, 6) == 0) ||
	    (len == (int)strlen(KAAS_COORDINATOR_TOPIC) &&
	     memcmp(name, KAAS_COORDINATOR_TOPIC, (size_t)len) == 0))
		return 0;
	return 1;
}

int kaas_topic_doc_entry(const char *file, char name[256])
{
	size_t fl = strlen(file);
	if (fl < 6 || fl - 5 >= 256 || strcmp(file + fl - 5, ".json") != 0 ||
	    kaas_is_temp_name(file))
		return 0;
	memcpy(name, file, fl - 5);
	name[fl - 5] = '\0';
	return kaas_topic_name_valid(name, (int)strlen(name)) ? 1 : -EINVAL;
}

void kaas_topic_id_hex(const uint8_t id[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

static int id_parse(const char *s, uint8_t id[16])
{
	if (!s || strlen(s) != 32)
		return -EINVAL;
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		id[i] = (uint8_t)v;
	}
	return 0;
}

/* The "id" member of a document body: 0 and id, or -EINVAL. */
static int body_id(const cJSON *body, uint8_t id[16])
{
	const cJSON *idj = cJSON_GetObjectItemCaseSensitive(body, "id");
	return cJSON_IsString(idj) ? id_parse(idj->valuestring, id) : -EINVAL;
}

/* kaas_doc_read, re-opened on -ESTALE (another host replaced or removed
 * the file under a cached name: a new open sees the current one). */
static int read_doc(struct kaas_substrate *sub, const char *path, const char *kind, cJSON **body)
{
	int rc = -ESTALE, ver;
	for (int i = 0; i < 3 && rc == -ESTALE; i++)
		rc = kaas_doc_read(sub, path, kind, 1, body, &ver);
	return rc;
}

static void doc_path(const char *name, char out[300])
{
	snprintf(out, 300, KAAS_TOPIC_DOC_DIR "/%s.json", name);
}

static void rev_dir(const char *name, char out[300])
{
	snprintf(out, 300, INCARNATION_DIR "/%s/" REV_DIR, name);
}

static void stamp_path(const char *name, char out[300])
{
	snprintf(out, 300, "%s/" STAMP_FILE, name);
}

/* Read the document (stamp 0, in the cluster substrate) or the stamp
 * (stamp 1, in the data substrate) of topic `name`: 0 and *body (the
 * caller deletes it) with its "id" and "incarnation" in *who (zero where
 * absent or invalid), *id_ok 1 when the id is valid and *inc_rc
 * kaas_json_get_u64's status for the incarnation; or -errno (*body NULL,
 * *who zero). */
static int read_record(struct kaas_substrate *sub, int stamp, const char *name, cJSON **body,
		       struct kaas_topic_stamp *who, int *id_ok, int *inc_rc)
{
	char path[300];
	if (stamp)
		stamp_path(name, path);
	else
		doc_path(name, path);
	memset(who, 0, sizeof(*who));
	*body = NULL;
	int rc = read_doc(sub, path, stamp ? TOPIC_ID_KIND : TOPIC_DOC_KIND, body);
	if (rc < 0)
		return rc;
	*id_ok = body_id(*body, who->id) == 0;
	*inc_rc = kaas_json_get_u64(*body, "incarnation", &who->inc);
	if (*inc_rc < 0)
		who->inc = 0;
	return 0;
}

/* ------------------------------------------------------------ documents */

/* The "config" object of a document body into *out: 0, or -EBADMSG when
 * a value is not a string. */
static int config_from_json(const cJSON *body, struct kaas_kvlist *out)
{
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(body, "config");
	const cJSON *it;
	if (!cJSON_IsObject(cfg))
		return 0; /* older documents may lack it: no overrides */
	cJSON_ArrayForEach(it, cfg)
	{
		if (!cJSON_IsString(it) || !it->string)
			return -EBADMSG;
		if (kaas_kvlist_set(out, it->string, it->valuestring) < 0)
			return -ENOMEM;
	}
	return 0;
}

int kaas_topic_doc_read_config(struct kaas_substrate *cluster, const char *name,
			       struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	memset(d, 0, sizeof(*d));
	struct kaas_topic_stamp who;
	cJSON *body;
	int id_ok, irc;
	int rc = read_record(cluster, 0, name, &body, &who, &id_ok, &irc);
	if (rc < 0)
		return rc;
	memcpy(d->id, who.id, 16);
	d->inc = who.inc;
	int bad = !id_ok || kaas_json_get_i64(body, "partitions", &d->np) < 0 || d->np < 1 ||
		  d->np > KAAS_TOPIC_MAX_PARTITIONS || (irc < 0 && irc != -ENOENT);
	d->deleting = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "deleting"));
	int64_t rf = 1;
	(void)kaas_json_get_i64(body, "replication_factor", &rf);
	d->rf = rf >= 1 && rf <= INT16_MAX ? (int32_t)rf : 1;
	rc = kaas_json_get_u64(body, "revision", &d->rev);
	if (rc < 0)
		d->rev = 0;
	bad = bad || (rc < 0 && rc != -ENOENT);
	rc = 0;
	if (config) {
		kaas_kvlist_clear(config);
		rc = config_from_json(body, config);
		if (rc < 0)
			kaas_kvlist_clear(config);
	}
	cJSON_Delete(body);
	if (rc == -ENOMEM)
		return rc;
	return bad || rc < 0 ? -EBADMSG : 0;
}

int kaas_topic_doc_read(struct kaas_substrate *cluster, const char *name,
			struct kaas_topic_doc *d)
{
	return kaas_topic_doc_read_config(cluster, name, d, NULL);
}

int kaas_topic_doc_names(struct kaas_substrate *cluster, const char *name, const uint8_t id[16])
{
	struct kaas_topic_stamp cur;
	cJSON *body;
	int id_ok, irc;
	int rc = read_record(cluster, 0, name, &body, &cur, &id_ok, &irc);
	cJSON_Delete(body);
	if (rc == -ENOENT || rc == -EBADMSG)
		return 0;
	return rc < 0 ? rc : id_ok && memcmp(cur.id, id, 16) == 0;
}

/* A "config" object holding the overrides of `config` (NULL: none) in b:
 * it, or NULL when out of memory. */
static cJSON *config_to_json(cJSON *b, const struct kaas_kvlist *config)
{
	cJSON *o = cJSON_AddObjectToObject(b, "config");
	for (size_t i = 0; o && config && i < config->n; i++)
		if (!cJSON_AddStringToObject(o, config->v[i].key, config->v[i].value))
			return NULL;
	return o;
}

int kaas_topic_doc_put(struct kaas_substrate *cluster, const char *name,
		       const struct kaas_topic_doc *d, const struct kaas_kvlist *config)
{
	char hex[33], path[300];
	kaas_topic_id_hex(d->id, hex);
	doc_path(name, path);
	cJSON *b = cJSON_CreateObject();
	int rc = -ENOMEM;
	if (b && cJSON_AddStringToObject(b, "name", name) &&
	    cJSON_AddStringToObject(b, "id", hex) && config_to_json(b, config) &&
	    cJSON_AddBoolToObject(b, "deleting", d->deleting) &&
	    kaas_json_add_i64(b, "partitions", d->np) == 0 &&
	    kaas_json_add_i64(b, "replication_factor", d->rf > 0 ? d->rf : 1) == 0 &&
	    (!d->inc || kaas_json_add_u64(b, "incarnation", d->inc) == 0) &&
	    (!d->rev || kaas_json_add_u64(b, "revision", d->rev) == 0)) {
		rc = kaas_sub_mkdirs(cluster, KAAS_TOPIC_DOC_DIR, 0755);
		if (rc >= 0)
			rc = kaas_doc_write(cluster, path, TOPIC_DOC_KIND, 1, b);
	}
	cJSON_Delete(b);
	return rc;
}

int kaas_topic_doc_write(struct kaas_substrate *cluster, const char *name,
			 const struct kaas_topic_doc *d, const struct kaas_kvlist *config)
{
	char dir[300];
	rev_dir(name, dir);
	struct kaas_topic_doc w = *d;
	uint64_t high;
	int rc = kaas_fence_highest(cluster, dir, &high);
	if (rc >= 0)
		rc = kaas_sub_mkdirs(cluster, dir, 0755);
	/* The next free revision (kaas_claim tries high+1, high+2, ...: the
	 * names stay contiguous). */
	if (rc >= 0)
		rc = kaas_claim(cluster, dir, KAAS_FENCE_PREFIX, high + 1, 1000, REV_NOTE, &w.rev);
	return rc < 0 ? rc : kaas_topic_doc_put(cluster, name, &w, config);
}

int kaas_topic_doc_remove(struct kaas_substrate *cluster, const char *name)
{
	char path[300];
	doc_path(name, path);
	int rc = kaas_sub_unlink(cluster, path);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	(void)kaas_sub_fsync_dir(cluster, KAAS_TOPIC_DOC_DIR);
	return 0;
}

int kaas_topic_doc_await(struct kaas_substrate *cluster, const char *name, uint64_t inc,
			 unsigned wait_ms, struct kaas_topic_doc *d)
{
	uint64_t end = kaas_mono_ms() + wait_ms;
	for (;;) {
		int rc = kaas_topic_doc_read(cluster, name, d);
		if (rc == 0 && d->inc >= inc)
			return 0;
		if (rc < 0 && rc != -ENOENT)
			return rc; /* -EBADMSG too: a damaged document is never created over */
		if (kaas_mono_ms() >= end)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* ------------------------------------------------------------ incarnations */

static void inc_dir(const char *name, char out[300])
{
	snprintf(out, 300, INCARNATION_DIR "/%s", name);
}

int kaas_topic_inc_latest(struct kaas_substrate *cluster, const char *name, uint64_t *n)
{
	char dir[300];
	inc_dir(name, dir);
	*n = 0;
	int rc = kaas_claim_latest(cluster, dir, INC_CLAIM, n);
	if (rc == -ENOENT) {
		*n = 0;
		return 0;
	}
	return rc;
}

int kaas_topic_inc_over(struct kaas_substrate *cluster, const char *name, uint64_t n)
{
	if (n == 0)
		return 1;
	char dir[300], claim[64];
	inc_dir(name, dir);
	kaas_claim_name(claim, sizeof(claim), INC_OVER, n);
	char *path = kaas_path_join(dir, claim);
	if (!path)
		return -ENOMEM;
	struct kaas_stat st;
	int rc = kaas_sub_stat(cluster, path, &st);
	free(path);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : 1;
}

int kaas_topic_inc_mark_over(struct kaas_substrate *cluster, const char *name, uint64_t n)
{
	if (n == 0)
		return 0;
	char dir[300];
	inc_dir(name, dir);
	int rc = kaas_sub_mkdirs(cluster, dir, 0755);
	if (rc >= 0)
		rc = kaas_claim_exact(cluster, dir, INC_OVER, n, NULL);
	return rc == -EEXIST ? 0 : rc;
}

int kaas_topic_inc_claim(struct kaas_substrate *cluster, const char *name, uint64_t n,
			 const uint8_t id[16])
{
	char dir[300], hex[33];
	inc_dir(name, dir);
	kaas_topic_id_hex(id, hex);
	int rc = kaas_sub_mkdirs(cluster, dir, 0755);
	if (rc >= 0)
		rc = kaas_claim_exact(cluster, dir, INC_CLAIM, n, hex);
	return rc;
}

/* ------------------------------------------------------------ revisions */

int kaas_topic_rev_highest(struct kaas_substrate *cluster, const char *name, uint64_t *rev)
{
	char dir[300];
	rev_dir(name, dir);
	return kaas_fence_highest(cluster, dir, rev);
}

int kaas_topic_rev_claim(struct kaas_substrate *cluster, const char *name, uint64_t rev)
{
	/* The fence directory's rules (contiguous names, one owner each) with
	 * the claim primitives: a revision lost to another writer is an
	 * ordinary outcome here, not an epoch someone must hand out again
	 * (kaas_fence_claim would remember it as a lost epoch). */
	char dir[300];
	rev_dir(name, dir);
	uint64_t high;
	int rc = kaas_fence_highest(cluster, dir, &high);
	if (rc < 0)
		return rc;
	if (high >= rev)
		return kaas_sub_fail(KAAS_EFENCED, "topic %s: revision %llu is claimed", name,
				     (unsigned long long)rev);
	if (rev - high > KAAS_FENCE_MAX_GAP)
		return kaas_sub_fail(-EOVERFLOW, "topic %s: revision %llu is far above %llu", name,
				     (unsigned long long)rev, (unsigned long long)high);
	rc = kaas_sub_mkdirs(cluster, dir, 0755);
	for (uint64_t n = high + 1; rc >= 0 && n < rev; n++) {
		rc = kaas_claim_exact(cluster, dir, KAAS_FENCE_PREFIX, n, "skipped");
		if (rc == -EEXIST)
			rc = 0; /* someone else's claim or skip */
	}
	if (rc >= 0)
		rc = kaas_claim_exact(cluster, dir, KAAS_FENCE_PREFIX, rev, REV_NOTE);
	if (rc >= 0)
		rc = kaas_fence_check(cluster, dir, rev, NULL);
	return rc < 0 ? rc : 0;
}

int kaas_topic_rev_check(struct kaas_substrate *cluster, const char *name, uint64_t rev)
{
	char dir[300];
	rev_dir(name, dir);
	return kaas_fence_check(cluster, dir, rev, NULL);
}

/* ------------------------------------------------------------ stamps */

int kaas_topic_stamp_read(struct kaas_substrate *data, const char *name,
			  struct kaas_topic_stamp *s)
{
	cJSON *body;
	int id_ok, irc;
	int rc = read_record(data, 1, name, &body, s, &id_ok, &irc);
	cJSON_Delete(body);
	return rc < 0 ? rc : id_ok ? 0 : -EBADMSG;
}

int kaas_topic_stamp_state(struct kaas_substrate *data, const char *name, const uint8_t id[16])
{
	struct kaas_topic_stamp s;
	int rc = kaas_topic_stamp_read(data, name, &s);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	return memcmp(s.id, id, 16) == 0 ? 1 : 2;
}

int kaas_topic_stamp_write(struct kaas_substrate *data, const char *name, const uint8_t id[16],
			   uint64_t inc)
{
	int rc = kaas_sub_mkdirs(data, name, 0755);
	if (rc < 0)
		return rc;
	char hex[33], path[300];
	kaas_topic_id_hex(id, hex);
	stamp_path(name, path);
	cJSON *body = cJSON_CreateObject();
	if (!body || !cJSON_AddStringToObject(body, "id", hex) ||
	    !cJSON_AddStringToObject(body, "name", name) ||
	    (inc && kaas_json_add_u64(body, "incarnation", inc) < 0)) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	rc = kaas_doc_write(data, path, TOPIC_ID_KIND, 1, body);
	cJSON_Delete(body);
	return rc;
}
