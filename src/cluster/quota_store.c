/* quota_store.c — client quotas as documents named by (entity, key)
 * (quota_store.h). */
#include "cluster/quota_store.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "contract/doc.h"
#include "util/logger.h"

#define QUOTA_DOC_VERSION 1

static const char *const key_names[KAAS_QK_COUNT] = {
	"producer_byte_rate", "consumer_byte_rate", "request_percentage",
	"controller_mutation_rate",
};

int kaas_quota_key_parse(const char *name, size_t len)
{
	for (int i = 0; name && i < KAAS_QK_COUNT; i++)
		if (strlen(key_names[i]) == len && memcmp(key_names[i], name, len) == 0)
			return i;
	return -1;
}

const char *kaas_quota_key_name(int key)
{
	return key >= 0 && key < KAAS_QK_COUNT ? key_names[key] : "unknown";
}

const char *kaas_quota_value_invalid(int key, double value)
{
	if (!isfinite(value) || value <= 0)
		return "a quota must be a positive number";
	if ((key == KAAS_QK_PRODUCER_BYTE_RATE || key == KAAS_QK_CONSUMER_BYTE_RATE) &&
	    (value != floor(value) || value > 9007199254740992.0))
		return "a byte rate must be a whole number of bytes per second";
	return NULL;
}

static const char *name_invalid(const char *n)
{
	if (!n)
		return NULL;
	size_t len = strlen(n);
	if (len == 0)
		return "an entity name must not be empty (null is the default)";
	if (len > KAAS_QUOTA_NAME_MAX)
		return "an entity name is at most 1024 bytes";
	return NULL;
}

const char *kaas_quota_entity_invalid(const struct kaas_quota_entity *e)
{
	if (!e->has_user && !e->has_client)
		return "an entity names a user, a client id or both";
	const char *why = e->has_user ? name_invalid(e->user) : NULL;
	if (!why && e->has_client)
		why = name_invalid(e->client);
	return why;
}

static int str_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int kaas_quota_entity_same(const struct kaas_quota_entity *a, const struct kaas_quota_entity *b)
{
	return a->has_user == b->has_user && a->has_client == b->has_client &&
	       (!a->has_user || str_same(a->user, b->user)) &&
	       (!a->has_client || str_same(a->client, b->client));
}

int kaas_quota_entity_copy(struct kaas_quota_entity *dst, const struct kaas_quota_entity *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->has_user = src->has_user;
	dst->has_client = src->has_client;
	if ((src->has_user && src->user && !(dst->user = strdup(src->user))) ||
	    (src->has_client && src->client && !(dst->client = strdup(src->client)))) {
		kaas_quota_entity_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

void kaas_quota_entity_clear(struct kaas_quota_entity *e)
{
	if (!e)
		return;
	free(e->user);
	free(e->client);
	e->user = e->client = NULL;
}

static void fnv(uint64_t *h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*h ^= (unsigned char)s[i];
		*h *= 0x100000001b3ull;
	}
}

/* One part of the canonical encoding: '-' absent, 'd' default, 'n' then
 * the name; each part ends with a NUL. */
static void hash_part(uint64_t h[2], int has, const char *name)
{
	char tag = !has ? '-' : !name ? 'd' : 'n';
	for (int i = 0; i < 2; i++) {
		fnv(&h[i], &tag, 1);
		if (has && name)
			fnv(&h[i], name, strlen(name));
		fnv(&h[i], "", 1);
	}
	h[1] = (h[1] << 29) | (h[1] >> 35); /* the second hash differs by position */
}

void kaas_quota_doc_name(const struct kaas_quota_entity *e, int key, char *buf, size_t size)
{
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x9e3779b97f4a7c15ull };
	hash_part(h, e->has_user, e->user);
	hash_part(h, e->has_client, e->client);
	hash_part(h, 1, kaas_quota_key_name(key));
	snprintf(buf, size, "%016llx%016llx.json", (unsigned long long)h[0],
		 (unsigned long long)h[1]);
}

static int doc_path(const struct kaas_quota_entity *e, int key, char *buf, size_t size)
{
	char name[48];
	kaas_quota_doc_name(e, key, name, sizeof name);
	int n = snprintf(buf, size, "%s/%s", KAAS_QUOTAS_DIR, name);
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

static int add_part(cJSON *o, const char *k, int has, const char *name)
{
	if (!has)
		return 1;
	return name ? cJSON_AddStringToObject(o, k, name) != NULL
		    : cJSON_AddNullToObject(o, k) != NULL;
}

int kaas_quota_store_put(struct kaas_substrate *cluster, const struct kaas_quota *q)
{
	const char *why = kaas_quota_entity_invalid(&q->e);
	if (!why && (q->key < 0 || q->key >= KAAS_QK_COUNT))
		why = "unknown quota key";
	if (!why)
		why = kaas_quota_value_invalid(q->key, q->value);
	if (why)
		return kaas_sub_fail(EINVAL, "client quota: %s", why);
	char path[96];
	int rc = doc_path(&q->e, q->key, path, sizeof path);
	if (rc < 0)
		return rc;
	rc = kaas_sub_mkdirs(cluster, KAAS_QUOTAS_DIR, 0755);
	if (rc < 0 && rc != -EEXIST)
		return rc;
	cJSON *o = cJSON_CreateObject();
	if (!o || !add_part(o, "user", q->e.has_user, q->e.user) ||
	    !add_part(o, "client_id", q->e.has_client, q->e.client) ||
	    !cJSON_AddStringToObject(o, "key", kaas_quota_key_name(q->key)) ||
	    !cJSON_AddNumberToObject(o, "value", q->value)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	rc = kaas_doc_write(cluster, path, KAAS_QUOTA_DOC_KIND, QUOTA_DOC_VERSION, o);
	cJSON_Delete(o);
	return rc;
}

int kaas_quota_store_remove(struct kaas_substrate *cluster, const struct kaas_quota_entity *e,
			    int key)
{
	char path[96];
	int rc = doc_path(e, key, path, sizeof path);
	if (rc < 0)
		return rc;
	rc = kaas_sub_unlink(cluster, path);
	return rc == -ENOENT ? 0 : rc;
}

/* A part of a body: 0 (absent), 1 (present; *name NULL = default, else a
 * copy), or -EBADMSG / -ENOMEM. */
static int get_part(const cJSON *o, const char *k, char **name)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	*name = NULL;
	if (!x)
		return 0;
	if (cJSON_IsNull(x))
		return 1;
	if (!cJSON_IsString(x))
		return -EBADMSG;
	return (*name = strdup(x->valuestring)) ? 1 : -ENOMEM;
}

static int from_json(const cJSON *o, struct kaas_quota *q)
{
	memset(q, 0, sizeof(*q));
	int u = get_part(o, "user", &q->e.user);
	int c = u < 0 ? u : get_part(o, "client_id", &q->e.client);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "value");
	int rc = u < 0 ? u : c < 0 ? c : 0;
	if (rc == 0) {
		q->e.has_user = u;
		q->e.has_client = c;
		q->key = cJSON_IsString(k) ? kaas_quota_key_parse(k->valuestring,
								   strlen(k->valuestring)) : -1;
		q->value = cJSON_IsNumber(v) ? v->valuedouble : -1;
		if (q->key < 0 || kaas_quota_entity_invalid(&q->e) ||
		    kaas_quota_value_invalid(q->key, q->value))
			rc = -EBADMSG;
	}
	if (rc < 0)
		kaas_quota_entity_clear(&q->e);
	return rc;
}

int kaas_quota_store_read(struct kaas_substrate *cluster, const char *docname,
			  struct kaas_quota *q)
{
	char path[96];
	if (snprintf(path, sizeof path, "%s/%s", KAAS_QUOTAS_DIR, docname) >= (int)sizeof path)
		return -ENAMETOOLONG;
	cJSON *body = NULL;
	int version;
	int rc = kaas_doc_read(cluster, path, KAAS_QUOTA_DOC_KIND, QUOTA_DOC_VERSION, &body,
			       &version);
	if (rc < 0)
		return rc;
	rc = from_json(body, q);
	cJSON_Delete(body);
	if (rc == -EBADMSG)
		return kaas_sub_fail(EBADMSG, "%s: not a client quota", path);
	if (rc < 0)
		return rc;
	char want[48];
	kaas_quota_doc_name(&q->e, q->key, want, sizeof want);
	if (strcmp(want, docname) != 0) {
		kaas_quota_entity_clear(&q->e);
		return kaas_sub_fail(EBADMSG, "%s: its quota is named %s", path, want);
	}
	return 0;
}

static int is_doc_name(const char *n)
{
	if (strlen(n) != 37 || strcmp(n + 32, ".json") != 0)
		return 0;
	for (int i = 0; i < 32; i++)
		if (!strchr("0123456789abcdef", n[i]))
			return 0;
	return 1;
}

int kaas_quota_store_load(struct kaas_substrate *cluster, struct kaas_quota **out, size_t *n,
			  size_t *nbad)
{
	*out = NULL;
	*n = *nbad = 0;
	struct kaas_dirlist l;
	int rc = kaas_sub_list(cluster, KAAS_QUOTAS_DIR, &l);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	struct kaas_quota *v = calloc(l.n + 1, sizeof(*v));
	size_t k = 0, bad = 0;
	if (!v)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		if (!is_doc_name(l.names[i]))
			continue; /* temps, strangers */
		int r = kaas_quota_store_read(cluster, l.names[i], &v[k]);
		if (r == 0) {
			k++;
		} else if (r == -EBADMSG || r == -EPROTO) {
			kaas_warn("client quotas: skipping %s/%s: %s", KAAS_QUOTAS_DIR,
				  l.names[i], kaas_sub_errdetail());
			bad++;
		} else if (r != -ENOENT) {
			rc = r;
		}
	}
	assert(!v || k <= l.n);
	kaas_dirlist_free(&l);
	if (rc < 0) {
		kaas_quota_store_free(v, k);
		return rc;
	}
	*out = v;
	*n = k;
	*nbad = bad;
	return 0;
}

void kaas_quota_store_free(struct kaas_quota *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		kaas_quota_entity_clear(&v[i].e);
	free(v);
}
