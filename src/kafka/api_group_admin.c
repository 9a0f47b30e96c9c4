/*
 * api_group_admin.c — the wire side of the group queries: FindCoordinator
 * 0–5 (3+ flexible, 4+ batched; the work queue: a group's or a
 * transactional id's coordinator is the leader of its coordinator slot in
 * the cluster assignment),
 * DescribeGroups 0–5 (5 flexible) and ListGroups 0–5 (3+ flexible, 4+ with
 * the states filter, 5+ the types filter: every kaas group is "classic"; loop
 * thread: the groups' state is the loop's).  The
 * answers come from the group coordinator (broker/groups/groups.h).
 * While a coordinator slot this broker took over is still being searched
 * for its groups, DescribeGroups and ListGroups wait for it (up to
 * LOAD_WAIT_MS), then answer COORDINATOR_LOAD_IN_PROGRESS as Kafka does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "broker/groups/groups.h"
#include "kafka/authz.h"
#include "kafka/group_wire.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/security.h"
#include "util/grow.h"

/* A coordinator as answered: its id and its address on the listener the
 * request came in on (host points into the kaas_broker_info it came from). */
struct node {
	int32_t id;
	const char *host;
	int32_t port;
};

/* Find the coordinator of one key (type 0 a group id, 1 a transactional id:
 * both map to the same coordinator slots): its Kafka error, *msg, and *out
 * when found (*who holds it). */
static int16_t find_one(struct kaas_req *req, struct kaas_kslice key, int8_t type,
			struct kaas_broker_info *who, struct node *out, const char **msg)
{
	int16_t err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	*msg = "the group's coordinator slot has no live leader";
	/* ACLs: DESCRIBE on the group / the transactional id. */
	if ((type == 0 || type == 1) &&
	    !kaas_req_allowed_slice(req, KAAS_OP_DESCRIBE,
				    type == 1 ? KAAS_RES_TRANSACTIONAL_ID : KAAS_RES_GROUP, key)) {
		*msg = "not authorized";
		return type == 1 ? KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
				 : KAAS_KERR_GROUP_AUTHORIZATION_FAILED;
	}
	if (type != 0 && type != 1)
		*msg = "unknown coordinator key type";
	else if (key.len >= 0)
		err = kaas_group_kerr(kaas_groups_find_coordinator(
			req->broker->groups, key.len ? (const char *)key.p : "", (size_t)key.len, who));
	const struct kaas_conn_security *sec = kaas_conn_security(req->conn);
	if (!err && kaas_broker_address(who, sec ? sec->listener : NULL, &out->host, &out->port) < 0)
		err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	out->id = who->id;
	if (!err)
		*msg = NULL;
	return err;
}

static void write_node(struct kaas_kw *w, int f, int16_t err, const struct node *n)
{
	kaas_kw_i32(w, err ? -1 : n->id);
	kaas_kw_str(w, f, err ? "" : n->host);
	kaas_kw_i32(w, err ? -1 : n->port);
}

int kaas_api_find_coordinator(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct kaas_kslice key = { NULL, -1 };
	if (v <= 3)
		key = kaas_kr_str(r, f);
	int8_t type = v >= 1 ? kaas_kr_i8(r) : 0;
	/* v4+: a batch of keys (read again below, as they are answered). */
	int32_t nkeys = v >= 4 ? kaas_kr_array(r, f, 1) : 0;
	const uint8_t *keys_at = r->p;
	for (int32_t i = 0; i < nkeys && kaas_kr_ok(r); i++)
		(void)kaas_kr_str(r, f);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || nkeys < 0)
		return KAAS_REQ_CLOSE;
	struct kaas_broker_info who;
	struct node node;
	const char *msg;
	if (v >= 1)
		kaas_kw_i32(w, 0);
	if (v >= 4) {
		struct kaas_kr keys;
		kaas_kr_init(&keys, keys_at, (size_t)(r->end - keys_at));
		kaas_kw_array(w, f, nkeys);
		for (int32_t i = 0; i < nkeys; i++) {
			key = kaas_kr_str(&keys, f);
			int16_t err = find_one(req, key, type, &who, &node, &msg);
			kaas_kw_strn(w, f, key.p, key.len);
			write_node(w, f, err, &node);
			kaas_kw_i16(w, err);
			kaas_kw_str(w, f, msg);
			kaas_kw_tags(w, f);
		}
	} else {
		int16_t err = find_one(req, key, type, &who, &node, &msg);
		kaas_kw_i16(w, err);
		if (v >= 1)
			kaas_kw_str(w, f, msg);
		write_node(w, f, err, &node);
	}
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}

/* One group of a DescribeGroups answer. */
static void write_group(struct kaas_kw *w, int16_t v, int f, struct kaas_kslice id, int16_t err,
			const struct kaas_group_info *gi)
{
	int stable = gi->stable;
	kaas_kw_i16(w, err);
	kaas_kw_strn(w, f, id.p, id.len);
	kaas_kw_str(w, f, gi->state);
	kaas_kw_str(w, f, gi->protocol_type ? gi->protocol_type : "");
	kaas_kw_str(w, f, stable && gi->protocol ? gi->protocol : "");
	kaas_kw_array(w, f, gi->nmembers);
	for (int k = 0; k < gi->nmembers; k++) {
		const struct kaas_group_member_info *m = &gi->members[k];
		kaas_kw_str(w, f, m->id);
		if (v >= 4)
			kaas_kw_str(w, f, m->instance_id);
		kaas_kw_str(w, f, m->client_id);
		kaas_kw_str(w, f, m->client_host);
		kaas_kw_bytes(w, f, stable && m->meta ? m->meta : (const uint8_t *)"",
			      stable && m->meta ? m->meta_len : 0);
		kaas_kw_bytes(w, f, stable && m->assignment ? m->assignment : (const uint8_t *)"",
			      stable && m->assignment ? m->assignment_len : 0);
		kaas_kw_tags(w, f);
	}
	if (v >= 3)
		kaas_kw_i32(w, INT32_MIN); /* authorized_operations: not computed */
	kaas_kw_tags(w, f);
}

/* How long DescribeGroups and ListGroups wait for a coordinator that took
 * slots over to find their groups before they answer
 * COORDINATOR_LOAD_IN_PROGRESS (clients retry it). */
#define LOAD_WAIT_MS 10000

static void describe_groups(struct kaas_req *req, int waited);

static void describe_after_load(void *ctx)
{
	describe_groups(ctx, 1);
}

void kaas_api_describe_groups(struct kaas_req *req)
{
	describe_groups(req, 0);
}

/* Wait for the takeover's load (once) when a slot is loading: 1 if the
 * request now waits (handler(req) runs again later), 0 to answer now. */
static int wait_for_load(struct kaas_req *req, int waited, void (*handler)(void *))
{
	struct kaas_groups *g = req->broker->groups;
	return !waited && kaas_groups_loading(g, NULL) &&
	       kaas_groups_await_load(g, handler, req, LOAD_WAIT_MS) == 0;
}

static void describe_groups(struct kaas_req *req, int waited)
{
	struct kaas_groups *g = req->broker->groups;
	if (wait_for_load(req, waited, describe_after_load))
		return;
	KAAS_REQ_IO(req);
	int32_t n = kaas_kr_array(r, f, f ? 1 : 2);
	const uint8_t *at = r->p;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++)
		(void)kaas_kr_str(r, f);
	if (v >= 3)
		(void)kaas_kr_i8(r);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || n < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	struct kaas_kr ids;
	kaas_kr_init(&ids, at, (size_t)(r->end - at));
	if (v >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_array(w, f, n);
	for (int32_t i = 0; i < n; i++) {
		struct kaas_kslice id = kaas_kr_str(&ids, f);
		char *s = id.len > 0 ? kaas_kslice_dup(id) : NULL;
		struct kaas_group_info gi = { .state = "Dead" };
		int16_t err = id.len <= 0 ? KAAS_KERR_INVALID_GROUP_ID
			      : !s        ? KAAS_KERR_UNKNOWN_SERVER_ERROR
			      : !kaas_req_allowed_slice(req, KAAS_OP_DESCRIBE, KAAS_RES_GROUP, id)
					  ? KAAS_KERR_GROUP_AUTHORIZATION_FAILED /* ACLs */
					  : kaas_groups_loading(g, s)
					  ? KAAS_KERR_COORDINATOR_LOAD_IN_PROGRESS
					  : kaas_group_kerr(kaas_groups_describe(g, s, &gi));
		free(s);
		write_group(w, v, f, id, err, &gi);
		kaas_group_info_free(&gi);
	}
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

/* ListGroups: its filters (v4+ states, v5+ types: readers at the lists,
 * matched without regard to case as Kafka does; an empty list takes every
 * group) and, while counting, how many groups pass them. */
struct list_call {
	struct kaas_req *req;
	struct kaas_kr states, types;
	int32_t nstates, ntypes;
	int32_t count;
	int counting;
	/* ACLs: without DESCRIBE on the cluster, only the groups the
	 * principal may DESCRIBE, decided once per group while counting
	 * (the cache may change between the two passes; the count and the
	 * list must agree) */
	int check_acl;
	unsigned char *allow; /* decision of the k-th group passing the filters */
	size_t seen, cap;
	int oom;
};

/* Does the group passing the filters as the call's next one pass the
 * ACLs too (decided while counting, remembered for the writing pass)? */
static int list_allowed(struct list_call *c, const char *id)
{
	if (!c->check_acl)
		return 1;
	size_t k = c->seen++;
	if (c->counting) {
		unsigned char *a = kaas_grow(c->allow, &c->cap, k, 1, 64);
		if (!a) {
			c->oom = 1;
			return 0;
		}
		c->allow = a;
		a[k] = (unsigned char)kaas_req_allowed(c->req, KAAS_OP_DESCRIBE, KAAS_RES_GROUP,
							id, strlen(id));
		return a[k];
	}
	return k < c->cap && c->allow && c->allow[k];
}

/* Is s in the list of n strings at kr (or the list empty)? */
static int listed(struct kaas_kr kr, int32_t n, int flex, const char *s)
{
	for (int32_t i = 0; i < n; i++) {
		struct kaas_kslice x = kaas_kr_str(&kr, flex);
		if ((size_t)x.len == strlen(s) && strncasecmp((const char *)x.p, s, (size_t)x.len) == 0)
			return 1;
	}
	return n <= 0;
}

/* Every kaas group is a classic one (the KIP-848 "consumer" protocol is
 * not served). */
#define GROUP_TYPE "classic"

static void list_one(void *ctx, const char *id, const char *protocol_type, const char *state)
{
	struct list_call *c = ctx;
	struct kaas_req *req = c->req;
	int f = req->hdr.flex;
	if (!listed(c->states, c->nstates, f, state) || !listed(c->types, c->ntypes, f, GROUP_TYPE))
		return;
	if (!list_allowed(c, id))
		return;
	c->count++;
	if (c->counting)
		return;
	kaas_kw_str(&req->w, f, id);
	kaas_kw_str(&req->w, f, protocol_type);
	if (req->hdr.api_version >= 4)
		kaas_kw_str(&req->w, f, state);
	if (req->hdr.api_version >= 5)
		kaas_kw_str(&req->w, f, GROUP_TYPE);
	kaas_kw_tags(&req->w, f);
}

/* Read a filter: a string list, remembered at kr; its count. */
static int32_t read_filter(struct kaas_kr *r, int f, struct kaas_kr *kr)
{
	int32_t n = kaas_kr_array(r, f, f ? 1 : 2);
	*kr = *r;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++)
		(void)kaas_kr_str(r, f);
	return n;
}

static void list_groups(struct kaas_req *req, int waited);

static void list_after_load(void *ctx)
{
	list_groups(ctx, 1);
}

void kaas_api_list_groups(struct kaas_req *req)
{
	list_groups(req, 0);
}

static void list_groups(struct kaas_req *req, int waited)
{
	struct kaas_groups *g = req->broker->groups;
	if (wait_for_load(req, waited, list_after_load))
		return;
	KAAS_REQ_IO(req);
	struct list_call c = { .req = req, .counting = 1 };
	if (v >= 4)
		c.nstates = read_filter(r, f, &c.states);
	if (v >= 5)
		c.ntypes = read_filter(r, f, &c.types);
	kaas_kr_tags(&req->r, f);
	if (!kaas_kr_ok(&req->r)) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	/* Still loading after the wait: what is known, and the error
	 * Kafka answers then (the client retries). */
	kaas_kw_i16(w, kaas_groups_loading(g, NULL) ? KAAS_KERR_COORDINATOR_LOAD_IN_PROGRESS
						    : KAAS_KERR_NONE);
	c.check_acl = !kaas_req_allowed_cluster(req, KAAS_OP_DESCRIBE);
	(void)kaas_groups_list(g, list_one, &c);
	kaas_kw_array(w, f, c.count);
	c.counting = 0;
	c.seen = 0;
	(void)kaas_groups_list(g, list_one, &c);
	free(c.allow);
	if (c.oom)
		w->err = -ENOMEM;
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}
