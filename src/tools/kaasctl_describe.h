/* kaasctl_describe.h — ask a group's coordinator for its state and members
 * (kaasctl_describe.c). */
#ifndef KAAS_TOOLS_KAASCTL_DESCRIBE_H
#define KAAS_TOOLS_KAASCTL_DESCRIBE_H

#include <stddef.h>

#include "tools/kaasctl.h"

/* One DescribeGroups v0 request for `group` to host:port (connect, send and
 * each receive bounded by timeout_ms).  0 with o given "state",
 * "protocol_type", "protocol" and "members": [{member_id, client_id,
 * client_host}]; or < 0 with why[] saying what failed (unreachable, a
 * timeout, a Kafka error code such as NOT_COORDINATOR 16). */
int kctl_describe_group(const char *host, int port, const char *group, int timeout_ms,
			cJSON *o, char *why, size_t whysz);

#endif
