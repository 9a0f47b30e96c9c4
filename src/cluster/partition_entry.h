/*
 * partition_entry.h — the entry naming one topic partition in the cluster's
 * documents (the assignment's slots, a group's committed offsets):
 *   {"topic": "<name>", "partition": <0..INT32_MAX>, ...the document's own fields}
 * Private to src/cluster.
 */
#ifndef KAAS_CLUSTER_PARTITION_ENTRY_H
#define KAAS_CLUSTER_PARTITION_ENTRY_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "contract/doc.h"

/* A new entry for topic/partition appended to arr; the caller adds its own
 * fields to it.  NULL when out of memory (cJSON's adders ignore a NULL
 * object, so the document then lacks the entry and its write fails the
 * caller's checks as before). */
static inline cJSON *kaas_partition_entry_add(cJSON *arr, const char *topic, int64_t partition)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "topic", topic);
	kaas_json_add_i64(o, "partition", partition);
	cJSON_AddItemToArray(arr, o);
	return o;
}

/* The topic (borrowed from o) and partition of an entry: 0, or -1 when
 * either is missing or the partition is out of range. */
static inline int kaas_partition_entry_get(const cJSON *o, const char **topic, int32_t *partition)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "topic");
	int64_t p;
	if (!cJSON_IsString(t) || kaas_json_get_i64(o, "partition", &p) < 0 || p < 0 || p > INT32_MAX)
		return -1;
	*topic = t->valuestring;
	*partition = (int32_t)p;
	return 0;
}

#endif
