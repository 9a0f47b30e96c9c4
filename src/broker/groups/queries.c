/*
 * queries.c — what the group coordinator tells without changing anything:
 * which broker coordinates a group (any thread), a group's description and
 * the list of groups in use (loop thread).  See groups.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "broker/groups/internal.h"
#include "util/status.h"

#define FIND_MAX_BROKERS 256

int kaas_groups_find_coordinator(struct kaas_groups *g, const char *key, size_t len,
				 struct kaas_broker_info *out)
{
	struct kaas_broker *b = g->b;
	int32_t leader;
	uint32_t epoch;
	if (b->draining || !b->agent ||
	    kaas_agent_coordinator(b->agent, key, len, &leader, &epoch) < 0)
		return KAAS_ENO_COORDINATOR;
	struct kaas_broker_info *v = malloc(FIND_MAX_BROKERS * sizeof(*v));
	if (!v)
		return KAAS_ENO_COORDINATOR;
	size_t n = kaas_agent_brokers(b->agent, v, FIND_MAX_BROKERS);
	int err = KAAS_ENO_COORDINATOR;
	for (size_t i = 0; i < n; i++) {
		if (v[i].id == leader) {
			*out = v[i];
			err = 0;
			break;
		}
	}
	free(v);
	return err;
}

int kaas_groups_describe(struct kaas_groups *g, const char *group, struct kaas_group_info *out)
{
	GROUPS_ON_LOOP(g);
	memset(out, 0, sizeof(*out));
	out->state = "Dead";
	int err = kaas_groups_check(g, group);
	if (err)
		return err;
	struct group *gr = kaas_groups_lookup(g, group, 0);
	if (!gr)
		return 0;
	out->state = kaas_groups_state_name(gr->state);
	out->stable = gr->state == GROUP_STABLE;
	out->protocol_type = gr->protocol_type;
	out->protocol = gr->protocol;
	int n = kaas_groups_count_members(gr);
	if (n == 0)
		return 0;
	if (!(out->members = calloc((size_t)n, sizeof(*out->members))))
		return -ENOMEM;
	for (const struct group_member *m = gr->members; m; m = m->next) {
		if (m->pending)
			continue;
		struct kaas_group_member_info *x = &out->members[out->nmembers++];
		x->id = m->id;
		x->instance_id = m->instance_id;
		x->client_id = m->client_id ? m->client_id : "";
		x->client_host = m->client_host ? m->client_host : "";
		x->assignment = m->assignment;
		x->assignment_len = m->assignment_len;
		for (int k = 0; gr->protocol && k < m->nprot; k++)
			if (strcmp(m->prot[k].name, gr->protocol) == 0) {
				x->meta = m->prot[k].meta;
				x->meta_len = m->prot[k].meta_len;
			}
	}
	return 0;
}

void kaas_group_info_free(struct kaas_group_info *info)
{
	free(info->members);
	info->members = NULL;
	info->nmembers = 0;
}

int kaas_groups_list(struct kaas_groups *g,
		     void (*each)(void *ctx, const char *id, const char *protocol_type,
				  const char *state),
		     void *ctx)
{
	GROUPS_ON_LOOP(g);
	int n = 0;
	for (struct group *gr = g->list; gr; gr = gr->next) {
		if (gr->noffs == 0 && (!gr->protocol_type || (gr->state == GROUP_EMPTY &&
							       kaas_groups_count_members(gr) == 0)))
			continue; /* neither members nor committed offsets (noffs
			             is counted before a takeover's load ends; an
			             Empty group keeps its protocol type) */
		n++;
		if (each)
			each(ctx, gr->id, gr->protocol_type ? gr->protocol_type : "",
			     kaas_groups_state_name(gr->state));
	}
	return n;
}
