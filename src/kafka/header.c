/* header.c — request header parsing and the served-API table. */
#include "kafka/header.h"

#include <errno.h>
#include <stddef.h>

#include "kafka/protocol.h"

const struct kaas_api_range kaas_api_table[] = {
	{ KAAS_API_PRODUCE, 3, 8, 9 },
	{ KAAS_API_FETCH, 4, 11, 12 },
	{ KAAS_API_LIST_OFFSETS, 0, 7, 6 },
	{ KAAS_API_METADATA, 0, 8, 9 },
	{ KAAS_API_OFFSET_COMMIT, 2, 7, 8 },
	{ KAAS_API_OFFSET_FETCH, 1, 5, 6 },
	{ KAAS_API_FIND_COORDINATOR, 0, 2, 3 },
	{ KAAS_API_JOIN_GROUP, 0, 5, 6 },
	{ KAAS_API_HEARTBEAT, 0, 3, 4 },
	{ KAAS_API_LEAVE_GROUP, 0, 3, 4 },
	{ KAAS_API_SYNC_GROUP, 0, 3, 4 },
	{ KAAS_API_DESCRIBE_GROUPS, 0, 4, 5 },
	{ KAAS_API_LIST_GROUPS, 0, 2, 3 },
	{ KAAS_API_API_VERSIONS, 0, 3, 3 },
	{ KAAS_API_CREATE_TOPICS, 0, 4, 5 },
	{ KAAS_API_DELETE_TOPICS, 0, 3, 4 },
	{ KAAS_API_INIT_PRODUCER_ID, 0, 1, 2 },
	{ KAAS_API_DESCRIBE_CONFIGS, 0, 4, 4 },
	{ KAAS_API_ALTER_CONFIGS, 0, 2, 2 },
	{ KAAS_API_DELETE_GROUPS, 0, 2, 2 },
	{ KAAS_API_OFFSET_DELETE, 0, 0, INT16_MAX },
	{ KAAS_API_INCREMENTAL_ALTER_CONFIGS, 0, 1, 1 },
	{ KAAS_API_CREATE_PARTITIONS, 0, 1, 2 },
	{ -1, 0, 0, 0 },
};

const struct kaas_api_range *kaas_api_find(int16_t key)
{
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++)
		if (a->key == key)
			return a;
	return NULL;
}

int kaas_api_supported(int16_t key, int16_t version)
{
	const struct kaas_api_range *a = kaas_api_find(key);
	return a && version >= a->min && version <= a->max;
}

int kaas_req_header_parse(struct kaas_kr *r, struct kaas_req_header *h)
{
	h->api_key = kaas_kr_i16(r);
	h->api_version = kaas_kr_i16(r);
	h->correlation_id = kaas_kr_i32(r);
	h->client_id.p = NULL;
	h->client_id.len = -1;
	h->flex = 0;
	h->resp_tags = 0;
	if (!kaas_kr_ok(r))
		return -EBADMSG;
	const struct kaas_api_range *a = kaas_api_find(h->api_key);
	int flex = a && h->api_version >= a->flex_from;
	/* ControlledShutdown v0 is the only header-v0 request; kaas does not
	 * serve it, so every request has a client id. */
	h->client_id = kaas_kr_nstr(r, 0);
	if (flex && kaas_api_supported(h->api_key, h->api_version))
		kaas_kr_tags(r, 1);
	if (!kaas_kr_ok(r))
		return -EBADMSG;
	h->flex = flex;
	h->resp_tags = flex && h->api_key != KAAS_API_API_VERSIONS;
	return 0;
}
