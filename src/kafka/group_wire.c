/* group_wire.c — statuses to Kafka codes and id copies for the group APIs.
 * See group_wire.h. */
#include "kafka/group_wire.h"

#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "kafka/status_map.h"
#include "util/status.h"

int16_t kaas_group_kerr(int status)
{
	return kaas_kafka_error(status, KAAS_KERR_UNKNOWN_SERVER_ERROR);
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

void kaas_group_read_member(struct kaas_kr *r, int16_t v, int flex, int16_t iid_from,
			    struct kaas_group_member_ref *out)
{
	out->group = kaas_kr_str(r, flex);
	out->generation = kaas_kr_i32(r);
	out->member = kaas_kr_str(r, flex);
	out->instance = v >= iid_from ? kaas_kr_nstr(r, flex) : (struct kaas_kslice){ NULL, -1 };
}
