/*
 * api_group_membership.c — the wire side of group membership: JoinGroup
 * 0–9 (6+ flexible), SyncGroup 0–5, Heartbeat 0–4 and LeaveGroup 0–5 (4+
 * flexible).  Each handler
 * parses the request, validates what is the wire's to validate, calls the
 * group coordinator (broker/groups/groups.h) and encodes its answer with
 * the statuses mapped to Kafka error codes.  Loop thread; a JoinGroup or
 * SyncGroup that waits for the rebalance is finished by its completion,
 * later on the loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/groups/groups.h"
#include "kafka/authz.h"
#include "kafka/group_wire.h"
#include "kafka/protocol.h"
#include "kafka/request.h"

/* ------------------------------------------------------------ JoinGroup */

static void write_join(struct kaas_req *req, int16_t err, const struct kaas_group_joined *res)
{
	KAAS_REQ_IO(req);
	if (v >= 2)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_i32(w, err ? -1 : res->generation);
	if (v >= 7) {
		/* A member joins only with the group's protocol type: its own. */
		const struct kaas_kslice *pt = req->ctx;
		if (err || !pt)
			kaas_kw_str(w, f, NULL);
		else
			kaas_kw_strn(w, f, pt->p, pt->len);
	}
	if (v >= 7 && (err || !res->protocol))
		kaas_kw_str(w, f, NULL);
	else
		kaas_kw_str(w, f, err || !res->protocol ? "" : res->protocol);
	kaas_kw_str(w, f, err || !res->leader ? "" : res->leader);
	if (v >= 9)
		kaas_kw_i8(w, !err && res->skip_assignment);
	kaas_kw_str(w, f, res->member_id ? res->member_id : "");
	int n = err ? 0 : res->nmembers;
	kaas_kw_array(w, f, n);
	for (int i = 0; i < n; i++) {
		const struct kaas_group_member_info *m = &res->members[i];
		kaas_kw_str(w, f, m->id);
		if (v >= 5)
			kaas_kw_str(w, f, m->instance_id);
		kaas_kw_bytes(w, f, m->meta ? m->meta : (const uint8_t *)"", m->meta ? m->meta_len : 0);
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void join_done(void *ctx, const struct kaas_group_joined *res)
{
	write_join(ctx, kaas_group_kerr(res->status), res);
}

/* Answer a JoinGroup refused before it reached the coordinator. */
static void join_refused(struct kaas_req *req, int16_t err, const char *member_id)
{
	struct kaas_group_joined res = { .member_id = member_id, .generation = -1 };
	write_join(req, err, &res);
}

/* Where a member's client connects from, as Kafka shows it: "/ip". */
static char *client_host(struct kaas_req *req)
{
	char host[80];
	snprintf(host, sizeof(host), "/%s", kaas_conn_peer(req->conn));
	char *colon = strrchr(host, ':');
	if (colon && colon != host + 1)
		*colon = '\0';
	return strdup(host);
}

/* Parse the protocols[name, metadata] of a JoinGroup: 0 with *out (n
 * entries; *err UNKNOWN_SERVER_ERROR when one could not be copied), or -1
 * when malformed. */
static int parse_protocols(struct kaas_kr *r, int f, int32_t n, struct kaas_group_protocol **out,
			   int16_t *err)
{
	struct kaas_group_protocol *prot = calloc((size_t)n + 1, sizeof(*prot));
	if (!prot)
		*err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	for (int32_t i = 0; prot && i < n && kaas_kr_ok(r); i++) {
		struct kaas_kslice name = kaas_kr_str(r, f);
		struct kaas_kslice meta = kaas_kr_nbytes(r, f);
		kaas_kr_tags(r, f);
		if (!kaas_kr_ok(r))
			break;
		prot[i].name = kaas_kslice_dup(name);
		prot[i].meta_len = meta.len > 0 ? meta.len : 0;
		prot[i].meta = malloc((size_t)prot[i].meta_len + 1);
		if (!prot[i].name || !prot[i].meta)
			*err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
		else if (meta.len > 0)
			memcpy(prot[i].meta, meta.p, (size_t)meta.len);
	}
	*out = prot;
	if (kaas_kr_ok(r))
		return 0;
	kaas_group_protocols_free(prot, n);
	*out = NULL;
	return -1;
}

void kaas_api_join_group(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	KAAS_REQ_IO(req);
	struct kaas_kslice gid = kaas_kr_str(r, f);
	int32_t session_ms = kaas_kr_i32(r);
	int32_t rebalance_ms = v >= 1 ? kaas_kr_i32(r) : session_ms;
	struct kaas_kslice mid = kaas_kr_str(r, f);
	struct kaas_kslice iid = { NULL, -1 };
	if (v >= 5)
		iid = kaas_kr_nstr(r, f);
	struct kaas_kslice ptype = kaas_kr_str(r, f);
	int32_t n = kaas_kr_array(r, f, f ? 3 : 6);
	struct kaas_group_protocol *prot = NULL;
	int16_t err = 0;
	if (!kaas_kr_ok(r) || n < 0 || parse_protocols(r, f, n, &prot, &err) < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (v >= 8)
		(void)kaas_kr_nstr(r, f); /* reason */
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r)) {
		kaas_group_protocols_free(prot, n);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	/* The protocol type, for the answer of v7+ (the frame outlives it). */
	struct kaas_kslice *pt = malloc(sizeof(*pt));
	if (pt) {
		*pt = ptype;
		req->ctx = pt;
		req->ctx_free = free;
	}
	if (!err && !kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_GROUP, gid))
		err = KAAS_KERR_GROUP_AUTHORIZATION_FAILED; /* ACLs */
	char *id = err ? NULL : kaas_group_id_dup(gid, &err);
	char *member_id = err ? NULL : kaas_kslice_dup(mid);
	char *ptype_s = err ? NULL : kaas_kslice_dup(ptype);
	char *iid_s = NULL, *cid = NULL, *host = NULL;
	if (!err && (!member_id || !ptype_s))
		err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	if (!err && (session_ms < KAAS_GROUP_MIN_SESSION_MS || session_ms > KAAS_GROUP_MAX_SESSION_MS))
		err = KAAS_KERR_INVALID_SESSION_TIMEOUT;
	if (!err && (n == 0 || ptype.len <= 0 || memchr(ptype.p, 0, (size_t)ptype.len)))
		err = KAAS_KERR_INCONSISTENT_GROUP_PROTOCOL; /* none, or not a name */
	if (!err && iid.len >= 0 && (iid.len == 0 || memchr(iid.p, 0, (size_t)iid.len)))
		err = KAAS_KERR_INVALID_REQUEST; /* an empty or NUL-bearing instance id */
	if (!err && iid.len >= 0 && !(iid_s = kaas_kslice_dup(iid)))
		err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	if (!err) {
		cid = req->hdr.client_id.len > 0 ? kaas_kslice_dup(req->hdr.client_id) : strdup("");
		host = client_host(req);
	}
	if (err) {
		kaas_group_protocols_free(prot, n);
		join_refused(req, err, member_id);
	} else {
		struct kaas_group_join rq = {
			.group = id, .member_id = member_id, .instance_id = iid_s,
			.protocol_type = ptype_s, .client_id = cid ? cid : "",
			.client_host = host ? host : "", .session_ms = session_ms,
			.rebalance_ms = rebalance_ms, .require_member_id = v >= 4,
			.skip_assignment_ok = v >= 9,
			.nprot = n, .prot = prot,
		};
		kaas_groups_join(g, &rq, join_done, req);
	}
	free(id);
	free(member_id);
	free(ptype_s);
	free(iid_s);
	free(cid);
	free(host);
}

/* ------------------------------------------------------------ SyncGroup */

/* `ptype` and `protocol`: the group's (NULL: null on the wire, as on an
 * error). */
static void write_sync(struct kaas_req *req, int16_t err, const uint8_t *a, int32_t len,
		       const char *ptype, const char *protocol)
{
	KAAS_REQ_IO(req);
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	if (req->hdr.api_version >= 5) {
		/* protocol type and name (KIP-559): the group's, which the
		 * client checks against its own; null on an error */
		kaas_kw_str(w, f, err ? NULL : ptype);
		kaas_kw_str(w, f, err ? NULL : protocol);
	}
	kaas_kw_bytes(w, f, err || !a ? (const uint8_t *)"" : a, err || !a ? 0 : len);
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void sync_done(void *ctx, int status, const uint8_t *a, int32_t len, const char *ptype,
		      const char *protocol)
{
	write_sync(ctx, kaas_group_kerr(status), a, len, ptype, protocol);
}

/* Heartbeat's answer, and the error-only answer of the others. */
static void finish_error(struct kaas_req *req, int16_t err)
{
	struct kaas_kw *w = &req->w;
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_tags(w, req->hdr.flex);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

/* The ids of a SyncGroup or Heartbeat: 0 with them copied (the caller frees
 * all three), or the Kafka error to answer. */
static int16_t member_ids(const struct kaas_group_member_ref *ref, char **id, char **member_id,
			  char **iid_s)
{
	int16_t err = 0;
	int oom = 0;
	*member_id = *iid_s = NULL;
	if (!(*id = kaas_group_id_dup(ref->group, &err)))
		return err;
	*member_id = kaas_kslice_dup(ref->member);
	*iid_s = kaas_group_opt_dup(ref->instance, &oom);
	return *member_id && !oom ? 0 : KAAS_KERR_UNKNOWN_SERVER_ERROR;
}

void kaas_api_sync_group(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct kaas_group_member_ref ref;
	kaas_group_read_member(r, req->hdr.api_version, f, 3, &ref);
	if (req->hdr.api_version >= 5) {
		(void)kaas_kr_nstr(r, f); /* protocol type: the coordinator checked it at join */
		(void)kaas_kr_nstr(r, f); /* protocol name */
	}
	int32_t n = kaas_kr_array(r, f, f ? 3 : 6);
	if (n < 0)
		n = 0; /* a null array: no assignments */
	struct kaas_group_assignment *assign =
		kaas_kr_ok(r) ? calloc((size_t)n + 1, sizeof(*assign)) : NULL;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		struct kaas_kslice to = kaas_kr_str(r, f);
		struct kaas_kslice a = kaas_kr_nbytes(r, f);
		kaas_kr_tags(r, f);
		if (assign) /* else out of memory: answered below, once read whole */
			assign[i] = (struct kaas_group_assignment){ (const char *)to.p, to.len,
								    a.p, a.len };
	}
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r)) {
		free(assign);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id, *member_id, *iid_s;
	int16_t err = member_ids(&ref, &id, &member_id, &iid_s);
	if (!err && !kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_GROUP, ref.group))
		err = KAAS_KERR_GROUP_AUTHORIZATION_FAILED; /* ACLs */
	if (!err && !assign)
		err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	if (err) {
		write_sync(req, err, NULL, 0, NULL, NULL);
	} else {
		struct kaas_group_sync rq = { .group = id, .member_id = member_id,
					      .instance_id = iid_s, .generation = ref.generation,
					      .nassign = n, .assign = assign };
		kaas_groups_sync(req->broker->groups, &rq, sync_done, req);
	}
	free(assign);
	free(id);
	free(member_id);
	free(iid_s);
}

/* ------------------------------------------------------------ Heartbeat */

void kaas_api_heartbeat(struct kaas_req *req)
{
	struct kaas_group_member_ref ref;
	kaas_group_read_member(&req->r, req->hdr.api_version, req->hdr.flex, 3, &ref);
	kaas_kr_tags(&req->r, req->hdr.flex);
	if (!kaas_kr_ok(&req->r)) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id, *member_id, *iid_s;
	int16_t err = member_ids(&ref, &id, &member_id, &iid_s);
	if (!err && !kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_GROUP, ref.group))
		err = KAAS_KERR_GROUP_AUTHORIZATION_FAILED; /* ACLs */
	if (!err)
		err = kaas_group_kerr(kaas_groups_heartbeat(req->broker->groups, id, member_id, iid_s,
							    ref.generation));
	finish_error(req, err);
	free(id);
	free(member_id);
	free(iid_s);
}

/* ------------------------------------------------------------ LeaveGroup */

/* The members a LeaveGroup names: v3+ a list of [member id, instance id],
 * before that one member id. */
struct leave_list {
	int32_t n;
	struct kaas_kslice *ms, *is;   /* as sent (for the v3 answer) */
	struct kaas_group_leaver *v;
};

/* Read the members into *l: 0, or -1 when malformed. */
static int parse_leavers(struct kaas_kr *r, int16_t v, int f, struct leave_list *l)
{
	l->n = 1;
	if (v >= 3)
		l->n = kaas_kr_array(r, f, f ? 3 : 4);
	if (!kaas_kr_ok(r) || l->n < 0)
		return -1;
	l->ms = calloc((size_t)l->n + 1, sizeof(*l->ms));
	l->is = calloc((size_t)l->n + 1, sizeof(*l->is));
	l->v = calloc((size_t)l->n + 1, sizeof(*l->v));
	for (int32_t i = 0; i < l->n && kaas_kr_ok(r); i++) {
		struct kaas_kslice ms = kaas_kr_str(r, f);
		struct kaas_kslice is = v >= 3 ? kaas_kr_nstr(r, f) : (struct kaas_kslice){ NULL, -1 };
		if (v >= 5)
			(void)kaas_kr_nstr(r, f); /* reason */
		if (v >= 3)
			kaas_kr_tags(r, f);
		if (l->ms && l->is) { /* else out of memory: leave_ids says so */
			l->ms[i] = ms;
			l->is[i] = is;
		}
	}
	return kaas_kr_ok(r) ? 0 : -1;
}

static void leave_list_free(struct leave_list *l)
{
	for (int32_t i = 0; l->v && i < l->n; i++) {
		free((char *)l->v[i].member_id);
		free((char *)l->v[i].instance_id);
	}
	free(l->ms);
	free(l->is);
	free(l->v);
}

/* Copy the leavers' ids: 0, or UNKNOWN_SERVER_ERROR. */
static int16_t leave_ids(struct leave_list *l)
{
	if (!l->ms || !l->is || !l->v)
		return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	for (int32_t i = 0; i < l->n; i++) {
		int oom = 0;
		l->v[i].member_id = kaas_kslice_dup(l->ms[i]); /* NULL: unknown */
		l->v[i].instance_id = kaas_group_opt_dup(l->is[i], &oom);
		if (oom)
			return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
	return 0;
}

void kaas_api_leave_group(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	KAAS_REQ_IO(req);
	struct kaas_kslice gid = kaas_kr_str(r, f);
	struct leave_list l = { 0 };
	int bad = !kaas_kr_ok(r) || parse_leavers(r, v, f, &l) < 0;
	kaas_kr_tags(r, f);
	if (bad || !kaas_kr_ok(r)) {
		leave_list_free(&l);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	int16_t err = KAAS_KERR_GROUP_AUTHORIZATION_FAILED; /* ACLs */
	char *id = NULL;
	if (kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_GROUP, gid) && (err = 0) == 0)
		id = kaas_group_id_dup(gid, &err);
	if (id)
		err = leave_ids(&l);
	if (id && !err)
		err = kaas_group_kerr(kaas_groups_leave(g, id, l.v, l.n));
	if (v >= 1)
		kaas_kw_i32(w, 0);
	if (v >= 3) {
		/* v3: per-member errors; the top-level one only for the group id. */
		kaas_kw_i16(w, err);
		kaas_kw_array(w, f, err ? 0 : l.n);
		for (int32_t i = 0; !err && i < l.n; i++) {
			kaas_kw_strn(w, f, l.ms[i].p, l.ms[i].len);
			kaas_kw_strn(w, f, l.is[i].p, l.is[i].len);
			kaas_kw_i16(w, kaas_group_kerr(l.v[i].status));
			kaas_kw_tags(w, f);
		}
	} else {
		kaas_kw_i16(w, err ? err : kaas_group_kerr(l.v[0].status));
	}
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
	leave_list_free(&l);
	free(id);
}
