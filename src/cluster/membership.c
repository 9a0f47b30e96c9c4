/* membership.c — broker documents and counter-progress liveness. */
#include "cluster/membership.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract/doc.h"

#define DOC_KIND "broker"
#define DOC_VERSION 1

uint64_t kaas_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void broker_path(char *out, size_t size, int32_t id)
{
	snprintf(out, size, KAAS_BROKERS_DIR "/%" PRId32 ".json", id);
}

int kaas_broker_publish(struct kaas_substrate *cluster, const struct kaas_broker_info *b)
{
	if (b->id < 0)
		return kaas_sub_fail(EINVAL, "broker id %d is negative", (int)b->id);
	int rc = kaas_sub_mkdirs(cluster, KAAS_BROKERS_DIR, 0755);
	if (rc < 0)
		return rc;
	cJSON *o = cJSON_CreateObject();
	kaas_json_add_i64(o, "id", b->id);
	cJSON_AddStringToObject(o, "host", b->host);
	kaas_json_add_i64(o, "port", b->port);
	/* 64-bit values that may exceed 2^53 are kept as decimal strings. */
	char inc[32];
	snprintf(inc, sizeof inc, "%" PRIu64, b->incarnation);
	cJSON_AddStringToObject(o, "incarnation", inc);
	kaas_json_add_u64(o, "counter", b->counter);
	kaas_json_add_u64(o, "controller_epoch", b->controller_epoch);
	if (b->stopped)
		cJSON_AddBoolToObject(o, "stopped", 1);
	if (b->nlisteners > 0) {
		cJSON *ls = cJSON_AddArrayToObject(o, "listeners");
		for (int i = 0; ls && i < b->nlisteners; i++) {
			cJSON *l = cJSON_CreateObject();
			if (!l || !cJSON_AddItemToArray(ls, l))
				break;
			cJSON_AddStringToObject(l, "name", b->listeners[i].name);
			cJSON_AddStringToObject(l, "host", b->listeners[i].host);
			kaas_json_add_i64(l, "port", b->listeners[i].port);
		}
	}
	assert(b->nlost >= 0 && b->nlost <= KAAS_BROKER_LOST_MAX);
	if (b->nlost > 0) {
		cJSON *ls = cJSON_AddArrayToObject(o, "lost_epochs");
		for (int i = 0; ls && i < b->nlost; i++) {
			cJSON *l = cJSON_CreateObject();
			if (!l || !cJSON_AddItemToArray(ls, l))
				break;
			cJSON_AddStringToObject(l, "topic", b->lost[i].topic);
			kaas_json_add_i64(l, "partition", b->lost[i].partition);
			kaas_json_add_u64(l, "epoch", b->lost[i].epoch);
		}
	}
	char path[64];
	broker_path(path, sizeof path, b->id);
	rc = kaas_doc_write(cluster, path, DOC_KIND, DOC_VERSION, o);
	cJSON_Delete(o);
	return rc;
}

/* The optional "listeners" array (absent in documents of older brokers):
 * 0, or -EBADMSG when present but malformed.  Listeners past
 * KAAS_MAX_LISTENERS (a newer broker) are ignored. */
static int parse_listeners(const char *path, const cJSON *ls, struct kaas_broker_info *b)
{
	if (!ls)
		return 0;
	if (!cJSON_IsArray(ls))
		return kaas_sub_fail(EBADMSG, "%s: \"listeners\" is not an array", path);
	const cJSON *l;
	cJSON_ArrayForEach(l, ls) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(l, "name");
		const cJSON *host = cJSON_GetObjectItemCaseSensitive(l, "host");
		int64_t port;
		if (!cJSON_IsString(name) || !cJSON_IsString(host) ||
		    kaas_json_get_i64(l, "port", &port) < 0 || port < 0 || port > 65535 ||
		    strlen(name->valuestring) >= KAAS_LISTENER_NAME_MAX ||
		    strlen(host->valuestring) >= sizeof b->host)
			return kaas_sub_fail(EBADMSG, "%s: malformed listener", path);
		if (b->nlisteners == KAAS_MAX_LISTENERS)
			continue;
		struct kaas_listener_addr *a = &b->listeners[b->nlisteners++];
		snprintf(a->name, sizeof a->name, "%s", name->valuestring);
		snprintf(a->host, sizeof a->host, "%s", host->valuestring);
		a->port = (int32_t)port;
	}
	return 0;
}

/* The optional "lost_epochs" array: 0, or -EBADMSG when present but
 * malformed.  Entries past KAAS_BROKER_LOST_MAX are ignored. */
static int parse_lost(const char *path, const cJSON *ls, struct kaas_broker_info *b)
{
	if (!ls)
		return 0;
	if (!cJSON_IsArray(ls))
		return kaas_sub_fail(EBADMSG, "%s: \"lost_epochs\" is not an array", path);
	const cJSON *l;
	cJSON_ArrayForEach(l, ls) {
		const cJSON *topic = cJSON_GetObjectItemCaseSensitive(l, "topic");
		int64_t part;
		uint64_t epoch;
		if (!cJSON_IsString(topic) || strlen(topic->valuestring) >= sizeof b->lost[0].topic ||
		    kaas_json_get_i64(l, "partition", &part) < 0 || part < 0 || part > INT32_MAX ||
		    kaas_json_get_u64(l, "epoch", &epoch) < 0 || epoch > UINT32_MAX)
			return kaas_sub_fail(EBADMSG, "%s: malformed lost epoch", path);
		if (b->nlost == KAAS_BROKER_LOST_MAX)
			continue;
		struct kaas_lost_epoch *e = &b->lost[b->nlost++];
		snprintf(e->topic, sizeof e->topic, "%s", topic->valuestring);
		e->partition = (int32_t)part;
		e->epoch = (uint32_t)epoch;
	}
	return 0;
}

static int parse_broker(const char *path, const cJSON *o, struct kaas_broker_info *b)
{
	memset(b, 0, sizeof *b);
	int64_t id, port;
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(o, "host");
	const cJSON *inc = cJSON_GetObjectItemCaseSensitive(o, "incarnation");
	if (kaas_json_get_i64(o, "id", &id) < 0 || kaas_json_get_i64(o, "port", &port) < 0 ||
	    kaas_json_get_u64(o, "counter", &b->counter) < 0 || !cJSON_IsString(host) ||
	    !cJSON_IsString(inc) || id < 0 || id > INT32_MAX || port < 0 || port > 65535)
		return kaas_sub_fail(EBADMSG, "%s: malformed broker document", path);
	kaas_json_get_u64(o, "controller_epoch", &b->controller_epoch);
	b->stopped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "stopped"));
	b->id = (int32_t)id;
	b->port = (int32_t)port;
	snprintf(b->host, sizeof b->host, "%s", host->valuestring);
	b->incarnation = strtoull(inc->valuestring, NULL, 10);
	int rc = parse_listeners(path, cJSON_GetObjectItemCaseSensitive(o, "listeners"), b);
	return rc < 0 ? rc : parse_lost(path, cJSON_GetObjectItemCaseSensitive(o, "lost_epochs"), b);
}

int kaas_broker_address(const struct kaas_broker_info *b, const char *name, const char **host,
			int32_t *port)
{
	if (!name || b->nlisteners == 0) {
		*host = b->host;
		*port = b->port;
		return 0;
	}
	for (int i = 0; i < b->nlisteners; i++)
		if (strcmp(b->listeners[i].name, name) == 0) {
			*host = b->listeners[i].host;
			*port = b->listeners[i].port;
			return 0;
		}
	return -ENOENT;
}

int kaas_broker_read(struct kaas_substrate *cluster, int32_t id, struct kaas_broker_info *b)
{
	char path[64];
	broker_path(path, sizeof path, id);
	cJSON *o;
	int rc = kaas_doc_read(cluster, path, DOC_KIND, DOC_VERSION, &o, NULL);
	if (rc < 0)
		return rc;
	rc = parse_broker(path, o, b);
	cJSON_Delete(o);
	if (rc == 0 && b->id != id)
		rc = kaas_sub_fail(EBADMSG, "%s: names broker %d", path, (int)b->id);
	return rc;
}

int kaas_broker_list(struct kaas_substrate *cluster, struct kaas_broker_info **out, size_t *n,
		     size_t *skipped)
{
	*out = NULL;
	*n = 0;
	if (skipped)
		*skipped = 0;
	struct kaas_dirlist l;
	int rc = kaas_sub_list(cluster, KAAS_BROKERS_DIR, &l);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	struct kaas_broker_info *v = calloc(l.n ? l.n : 1, sizeof *v);
	if (!v) {
		kaas_dirlist_free(&l);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < l.n; i++) {
		char *end;
		long id = strtol(l.names[i], &end, 10);
		if (end == l.names[i] || strcmp(end, ".json") != 0 || id < 0 || id > INT32_MAX)
			continue; /* temps and foreign files */
		if (kaas_broker_read(cluster, (int32_t)id, &v[k]) == 0)
			k++;
		else if (skipped)
			(*skipped)++;
	}
	kaas_dirlist_free(&l);
	*out = v;
	*n = k;
	return 0;
}

static struct kaas_liveness_entry *find(const struct kaas_liveness *lv, int32_t id)
{
	for (size_t i = 0; i < lv->n; i++)
		if (lv->e[i].info.id == id)
			return &lv->e[i];
	return NULL;
}

int kaas_liveness_observe(struct kaas_liveness *lv, const struct kaas_broker_info *list, size_t n,
			  uint64_t now_ms)
{
	for (size_t i = 0; i < lv->n; i++)
		lv->e[i].seen = 0;
	for (size_t i = 0; i < n; i++) {
		struct kaas_liveness_entry *e = find(lv, list[i].id);
		if (!e) {
			struct kaas_liveness_entry *ne = realloc(lv->e, (lv->n + 1) * sizeof *ne);
			if (!ne)
				return -ENOMEM;
			lv->e = ne;
			e = &lv->e[lv->n++];
			e->info = list[i];
			e->changed_ms = now_ms;
		} else if (e->info.incarnation != list[i].incarnation || e->info.counter != list[i].counter) {
			e->info = list[i];
			e->changed_ms = now_ms;
		} else {
			e->info = list[i];
		}
		e->seen = 1;
	}
	return 0;
}

int kaas_liveness_alive(const struct kaas_liveness *lv, int32_t id, uint64_t now_ms)
{
	const struct kaas_liveness_entry *e = find(lv, id);
	return e && e->seen && now_ms - e->changed_ms < lv->timeout_ms;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

size_t kaas_liveness_alive_ids(const struct kaas_liveness *lv, uint64_t now_ms, int32_t *ids,
			       size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < lv->n && k < max; i++)
		if (kaas_liveness_alive(lv, lv->e[i].info.id, now_ms))
			ids[k++] = lv->e[i].info.id;
	qsort(ids, k, sizeof *ids, cmp_i32);
	return k;
}

void kaas_liveness_free(struct kaas_liveness *lv)
{
	free(lv->e);
	lv->e = NULL;
	lv->n = 0;
}
