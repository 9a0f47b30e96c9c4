/*
 * api_group_admin.c — FindCoordinator 0–2 (a group's coordinator is the
 * leader of its coordinator slot in the cluster assignment), DescribeGroups
 * 0–4 and ListGroups 0–2 (loop thread: the groups' state is the loop's).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "broker/groups.h"
#include "kafka/protocol.h"
#include "kafka/request.h"

#define FIND_MAX_BROKERS 256

/* The broker leading `key`'s coordinator slot: 0 and *out, else the error
 * (COORDINATOR_NOT_AVAILABLE: no leader, or a leader whose address this
 * broker does not know). */
static int16_t group_coordinator(struct kaas_broker *b, struct kaas_kslice key,
				 struct kaas_broker_info *out)
{
	int32_t leader;
	uint32_t epoch;
	if (b->draining)
		return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	if (!b->agent || key.len < 0 ||
	    kaas_agent_coordinator(b->agent, key.len ? (const char *)key.p : "", (size_t)key.len,
				     &leader, &epoch) < 0)
		return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	struct kaas_broker_info *v = malloc(FIND_MAX_BROKERS * sizeof(*v));
	if (!v)
		return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	size_t n = kaas_agent_brokers(b->agent, v, FIND_MAX_BROKERS);
	int16_t err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	for (size_t i = 0; i < n; i++) {
		if (v[i].id == leader) {
			*out = v[i];
			err = KAAS_KERR_NONE;
			break;
		}
	}
	free(v);
	return err;
}

int kaas_api_find_coordinator(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	struct kaas_kslice key = kaas_kr_str(r, 0);
	int8_t type = v >= 1 ? kaas_kr_i8(r) : 0;
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	struct kaas_broker_info who;
	int16_t err;
	const char *msg = NULL;
	if (type != 0) {
		err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
		msg = "transactions are not supported";
	} else {
		err = group_coordinator(b, key, &who);
		if (err)
			msg = "the group's coordinator slot has no live leader";
	}
	if (v >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	if (v >= 1)
		kaas_kw_str(w, 0, msg);
	kaas_kw_i32(w, err ? -1 : who.id);
	kaas_kw_str(w, 0, err ? "" : who.host);
	kaas_kw_i32(w, err ? -1 : who.port);
	return KAAS_REQ_RESPOND;
}

static int count_live(const struct group *gr)
{
	int n = 0;
	for (const struct group_member *m = gr->members; m; m = m->next)
		n += !m->pending;
	return n;
}

void kaas_api_describe_groups(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	int32_t n = kaas_kr_array(r, 0, 2);
	const uint8_t *at = r->p;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++)
		(void)kaas_kr_str(r, 0);
	if (v >= 3)
		(void)kaas_kr_i8(r);
	if (!kaas_kr_ok(r) || n < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	struct kaas_kr ids;
	kaas_kr_init(&ids, at, (size_t)(r->end - at));
	if (v >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_array(w, 0, n);
	for (int32_t i = 0; i < n; i++) {
		struct kaas_kslice id = kaas_kr_str(&ids, 0);
		char *s = id.len > 0 ? kaas_kslice_dup(id) : NULL;
		int16_t err = id.len <= 0 ? KAAS_KERR_INVALID_GROUP_ID
			      : s ? kaas_groups_check(g, s) : KAAS_KERR_UNKNOWN_SERVER_ERROR;
		struct group *gr = s && !err ? kaas_group_lookup(g, s, 0) : NULL;
		free(s);
		int live = gr && count_live(gr) > 0;
		kaas_kw_i16(w, err);
		kaas_kw_strn(w, 0, id.p, id.len);
		kaas_kw_str(w, 0, !gr ? "Dead" : kaas_group_state_name(gr->state));
		kaas_kw_str(w, 0, gr && gr->protocol_type ? gr->protocol_type : "");
		kaas_kw_str(w, 0, gr && gr->state == GROUP_STABLE && gr->protocol ? gr->protocol : "");
		kaas_kw_array(w, 0, live ? count_live(gr) : 0);
		for (const struct group_member *m = live ? gr->members : NULL; m; m = m->next) {
			if (m->pending)
				continue;
			const struct group_protocol *p = NULL;
			for (int k = 0; gr->protocol && k < m->nprot; k++)
				if (strcmp(m->prot[k].name, gr->protocol) == 0)
					p = &m->prot[k];
			int stable = gr->state == GROUP_STABLE;
			kaas_kw_str(w, 0, m->id);
			if (v >= 4)
				kaas_kw_str(w, 0, m->instance_id);
			kaas_kw_str(w, 0, m->client_id ? m->client_id : "");
			kaas_kw_str(w, 0, m->client_host ? m->client_host : "");
			kaas_kw_bytes(w, 0, stable && p ? p->meta : (const uint8_t *)"",
				      stable && p ? p->meta_len : 0);
			kaas_kw_bytes(w, 0, stable && m->assignment ? m->assignment : (const uint8_t *)"",
				      stable && m->assignment ? m->assignment_len : 0);
		}
		if (v >= 3)
			kaas_kw_i32(w, INT32_MIN); /* authorized_operations: not computed */
	}
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

void kaas_api_list_groups(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kw *w = &req->w;
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, KAAS_KERR_NONE);
	int32_t n = 0;
	for (struct group *gr = g->list; gr; gr = gr->next)
		n += gr->protocol_type || gr->loaded;
	kaas_kw_array(w, 0, n);
	for (struct group *gr = g->list; gr; gr = gr->next) {
		if (!gr->protocol_type && !gr->loaded)
			continue;
		kaas_kw_str(w, 0, gr->id);
		kaas_kw_str(w, 0, gr->protocol_type ? gr->protocol_type : "");
	}
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}
