/* kaasctl_admin_group.h — what `kaasctl group describe|delete`
 * (kaasctl_admin_group.c) and `group reset-offsets`
 * (kaasctl_admin_reset.c) share: the group's coordinator and its state. */
#ifndef KAAS_TOOLS_KAASCTL_ADMIN_GROUP_H
#define KAAS_TOOLS_KAASCTL_ADMIN_GROUP_H

#include "tools/kaasctl_admin.h"

/* FindCoordinator for group, then a connection to it: 0 with *c open and
 * the coordinator's id in *node, or KCTL_EXIT_ERROR (printed). */
int kctl_group_coordinator(struct kctl_admin *a, const char *group, struct kctl_conn *c,
			   int32_t *node);

/* DescribeGroups of group at its coordinator c: 0 with o given "state",
 * "protocol_type", "protocol" and "members": [{member_id, client_id,
 * client_host, assignment: [{topic, partitions: [...]}]}], or
 * KCTL_EXIT_ERROR (printed). */
int kctl_group_describe(struct kctl_conn *c, const char *group, cJSON *o);

/* Commit offsets[i] for partitions parts[0..n) of topic as an admin does
 * (generation -1, no member): 0, or KCTL_EXIT_ERROR (printed). */
int kctl_group_commit(struct kctl_conn *c, const char *group, const char *topic,
		      const int32_t *parts, const int64_t *offsets, int n);

/* `group reset-offsets` (kaasctl_admin_reset.c); argv[0] "group". */
int kctl_admin_group_reset(struct kctl_admin *a, int argc, char **argv);

#endif
