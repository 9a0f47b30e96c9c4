/*
 * group_wire.h — what the group API handlers (api_group_*.c) share: the
 * group coordinator's statuses as Kafka error codes, and the ids they copy
 * out of a request.  (The status map is to merge into the central one in
 * src/kafka.)
 */
#ifndef KAAS_KAFKA_GROUP_WIRE_H
#define KAAS_KAFKA_GROUP_WIRE_H

#include <stdint.h>

#include "kafka/codec.h"

/* The Kafka error code of a group coordinator status (0 or negative; see
 * broker/groups/groups.h): an unknown one is UNKNOWN_SERVER_ERROR. */
int16_t kaas_group_kerr(int status);

/* Copy a group id out of a request: a NUL-terminated string, or NULL with
 * *kerr set (INVALID_GROUP_ID for an empty id or one holding a NUL,
 * UNKNOWN_SERVER_ERROR when out of memory). */
char *kaas_group_id_dup(struct kaas_kslice s, int16_t *kerr);

/* Copy an optional id (an instance id) out of a request: NULL when absent
 * (len < 0, *oom 0); one holding a NUL, which no member can be registered
 * under, as "" (nor can that one).  NULL with *oom = 1 when out of memory. */
char *kaas_group_opt_dup(struct kaas_kslice s, int *oom);

/* The member a SyncGroup, Heartbeat or OffsetCommit names: its group id,
 * generation, member id and, from version `iid_from` on, its instance id
 * (len < 0: absent). */
struct kaas_group_member_ref {
	struct kaas_kslice group;
	int32_t generation;
	struct kaas_kslice member;
	struct kaas_kslice instance;
};

/* Read a kaas_group_member_ref of request version v (flex: a flexible
 * version; check kaas_kr_ok). */
void kaas_group_read_member(struct kaas_kr *r, int16_t v, int flex, int16_t iid_from,
			    struct kaas_group_member_ref *out);

#endif
