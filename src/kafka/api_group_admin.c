/*
 * api_group_admin.c — the wire side of the group queries: FindCoordinator
 * 0–2 (the work queue: a group's coordinator is the leader of its
 * coordinator slot in the cluster assignment), DescribeGroups 0–4 and
 * ListGroups 0–2 (loop thread: the groups' state is the loop's).  The
 * answers come from the group coordinator (broker/groups/groups.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "broker/groups/groups.h"
#include "kafka/group_wire.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/security.h"

int kaas_api_find_coordinator(struct kaas_req *req)
{
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	struct kaas_kslice key = kaas_kr_str(r, 0);
	int8_t type = v >= 1 ? kaas_kr_i8(r) : 0;
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	struct kaas_broker_info who;
	int16_t err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	const char *msg = "the group's coordinator slot has no live leader";
	if (type != 0)
		msg = "transactions are not supported";
	else if (key.len >= 0)
		err = kaas_group_kerr(kaas_groups_find_coordinator(
			req->broker->groups, key.len ? (const char *)key.p : "", (size_t)key.len, &who));
	/* The coordinator's address on the listener this request came in on. */
	const struct kaas_conn_security *sec = kaas_conn_security(req->conn);
	const char *host = "";
	int32_t port = -1;
	if (!err && kaas_broker_address(&who, sec ? sec->listener : NULL, &host, &port) < 0)
		err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	if (!err)
		msg = NULL;
	if (v >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	if (v >= 1)
		kaas_kw_str(w, 0, msg);
	kaas_kw_i32(w, err ? -1 : who.id);
	kaas_kw_str(w, 0, err ? "" : host);
	kaas_kw_i32(w, err ? -1 : port);
	return KAAS_REQ_RESPOND;
}

/* One group of a DescribeGroups answer. */
static void write_group(struct kaas_kw *w, int16_t v, struct kaas_kslice id, int16_t err,
			const struct kaas_group_info *gi)
{
	int stable = gi->stable;
	kaas_kw_i16(w, err);
	kaas_kw_strn(w, 0, id.p, id.len);
	kaas_kw_str(w, 0, gi->state);
	kaas_kw_str(w, 0, gi->protocol_type ? gi->protocol_type : "");
	kaas_kw_str(w, 0, stable && gi->protocol ? gi->protocol : "");
	kaas_kw_array(w, 0, gi->nmembers);
	for (int k = 0; k < gi->nmembers; k++) {
		const struct kaas_group_member_info *m = &gi->members[k];
		kaas_kw_str(w, 0, m->id);
		if (v >= 4)
			kaas_kw_str(w, 0, m->instance_id);
		kaas_kw_str(w, 0, m->client_id);
		kaas_kw_str(w, 0, m->client_host);
		kaas_kw_bytes(w, 0, stable && m->meta ? m->meta : (const uint8_t *)"",
			      stable && m->meta ? m->meta_len : 0);
		kaas_kw_bytes(w, 0, stable && m->assignment ? m->assignment : (const uint8_t *)"",
			      stable && m->assignment ? m->assignment_len : 0);
	}
	if (v >= 3)
		kaas_kw_i32(w, INT32_MIN); /* authorized_operations: not computed */
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
		struct kaas_group_info gi = { .state = "Dead" };
		int16_t err = id.len <= 0 ? KAAS_KERR_INVALID_GROUP_ID
			      : !s        ? KAAS_KERR_UNKNOWN_SERVER_ERROR
					  : kaas_group_kerr(kaas_groups_describe(g, s, &gi));
		free(s);
		write_group(w, v, id, err, &gi);
		kaas_group_info_free(&gi);
	}
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void list_one(void *ctx, const char *id, const char *protocol_type)
{
	struct kaas_kw *w = ctx;
	kaas_kw_str(w, 0, id);
	kaas_kw_str(w, 0, protocol_type);
}

void kaas_api_list_groups(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kw *w = &req->w;
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, KAAS_KERR_NONE);
	kaas_kw_array(w, 0, kaas_groups_list(g, NULL, NULL));
	(void)kaas_groups_list(g, list_one, w);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}
