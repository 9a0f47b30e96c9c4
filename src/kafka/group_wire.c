/* group_wire.c — statuses to Kafka codes and id copies for the group APIs.
 * See group_wire.h. */
#include "kafka/group_wire.h"

#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "util/status.h"

int16_t kaas_group_kerr(int status)
{
	switch (status) {
	case 0: return KAAS_KERR_NONE;
	case KAAS_ENOT_COORDINATOR: return KAAS_KERR_NOT_COORDINATOR;
	case KAAS_ENO_COORDINATOR: return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	case KAAS_EUNKNOWN_MEMBER: return KAAS_KERR_UNKNOWN_MEMBER_ID;
	case KAAS_EILLEGAL_GENERATION: return KAAS_KERR_ILLEGAL_GENERATION;
	case KAAS_EREBALANCING: return KAAS_KERR_REBALANCE_IN_PROGRESS;
	case KAAS_EFENCED_INSTANCE: return KAAS_KERR_FENCED_INSTANCE_ID;
	case KAAS_EMEMBER_ID_REQUIRED: return KAAS_KERR_MEMBER_ID_REQUIRED;
	case KAAS_EPROTOCOL_MISMATCH: return KAAS_KERR_INCONSISTENT_GROUP_PROTOCOL;
	case KAAS_EUNKNOWN_PARTITION: return KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	default: return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
}

char *kaas_group_id_dup(struct kaas_kslice s, int16_t *kerr)
{
	if (s.len <= 0 || memchr(s.p, 0, (size_t)s.len)) {
		*kerr = KAAS_KERR_INVALID_GROUP_ID;
		return NULL;
	}
	char *id = kaas_kslice_dup(s);
	if (!id)
		*kerr = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	return id;
}

char *kaas_group_opt_dup(struct kaas_kslice s, int *oom)
{
	*oom = 0;
	if (s.len < 0)
		return NULL;
	char *c = s.len > 0 && memchr(s.p, 0, (size_t)s.len) ? strdup("") : kaas_kslice_dup(s);
	*oom = !c;
	return c;
}

void kaas_group_read_member(struct kaas_kr *r, int16_t v, int16_t iid_from,
			    struct kaas_group_member_ref *out)
{
	out->group = kaas_kr_str(r, 0);
	out->generation = kaas_kr_i32(r);
	out->member = kaas_kr_str(r, 0);
	out->instance = v >= iid_from ? kaas_kr_nstr(r, 0) : (struct kaas_kslice){ NULL, -1 };
}
