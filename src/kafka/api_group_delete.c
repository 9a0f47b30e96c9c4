/*
 * api_group_delete.c — DeleteGroups 0..2 and OffsetDelete 0: erasing a
 * group's committed offsets through the group coordinator
 * (broker/groups/groups.h: kaas_groups_delete, kaas_groups_delete_offsets),
 * answered when its completions ran.  Loop thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/groups/groups.h"
#include "kafka/authz.h"
#include "kafka/group_wire.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/status.h"

/* ------------------------------------------------------------ DeleteGroups */

struct delete_call {
	struct kaas_req *req;
	int32_t n, pending;
	struct {
		struct kaas_kslice id;     /* as sent */
		char *group;               /* NULL: refused before asking */
		int16_t err;
	} *g;
};

static void delete_answer(struct delete_call *c)
{
	struct kaas_req *req = c->req;
	struct kaas_kw *w = &req->w;
	int flex = req->hdr.flex;
	kaas_kw_i32(w, 0); /* throttle */
	kaas_kw_array(w, flex, c->n);
	for (int32_t i = 0; i < c->n; i++) {
		kaas_kw_strn(w, flex, c->g[i].id.p, c->g[i].id.len);
		kaas_kw_i16(w, c->g[i].err);
		kaas_kw_tags(w, flex);
		free(c->g[i].group);
	}
	kaas_kw_tags(w, flex);
	free(c->g);
	free(c);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

/* Completion of one group's delete: its index is ctx - c->g. */
struct delete_one {
	struct delete_call *c;
	int32_t i;
};

static void delete_done(void *ctx, int status, struct kaas_offset_batch *batch)
{
	(void)batch;
	struct delete_one *o = ctx;
	struct delete_call *c = o->c;
	c->g[o->i].err = kaas_group_kerr(status);
	free(o);
	if (--c->pending == 0)
		delete_answer(c);
}

void kaas_api_delete_groups(struct kaas_req *req)
{
	struct kaas_kr *r = &req->r;
	int flex = req->hdr.flex;
	struct delete_call *c = calloc(1, sizeof *c);
	int32_t n = c ? kaas_kr_array(r, flex, 1) : -1;
	if (c && n >= 0)
		c->g = calloc((size_t)n + 1, sizeof *c->g);
	for (int32_t i = 0; c && c->g && i < n && kaas_kr_ok(r); i++)
		c->g[i].id = kaas_kr_str(r, flex);
	kaas_kr_tags(r, flex);
	if (!c || !c->g || !kaas_kr_ok(r)) {
		if (c)
			free(c->g);
		free(c);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	c->req = req;
	c->n = n;
	c->pending = n + 1; /* +1: held until every delete is asked */
	for (int32_t i = 0; i < n; i++) {
		struct delete_one *o = NULL;
		if (!kaas_req_allowed_slice(req, KAAS_OP_DELETE, KAAS_RES_GROUP, c->g[i].id))
			c->g[i].err = KAAS_KERR_GROUP_AUTHORIZATION_FAILED; /* ACLs */
		else
			c->g[i].group = kaas_group_id_dup(c->g[i].id, &c->g[i].err);
		if (c->g[i].group && !(o = malloc(sizeof *o)))
			c->g[i].err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
		if (!o) {
			c->pending--;
			continue;
		}
		*o = (struct delete_one){ c, i };
		kaas_groups_delete(req->broker->groups, c->g[i].group, delete_done, o);
	}
	if (--c->pending == 0)
		delete_answer(c);
}

/* ------------------------------------------------------------ OffsetDelete */

struct offset_delete_call {
	struct kaas_req *req;
	char *group;
	struct kaas_kslice *names;     /* as sent */
	struct kaas_offset_batch batch;
};

static void offset_delete_free(struct offset_delete_call *c)
{
	for (int32_t i = 0; i < c->batch.nt; i++) {
		free(c->batch.topics[i].parts);
		free((char *)c->batch.topics[i].name);
	}
	free(c->batch.topics);
	free(c->names);
	free(c->group);
	free(c);
}

static void offset_delete_answer(struct offset_delete_call *c, int16_t err)
{
	struct kaas_kw *w = &c->req->w;
	kaas_kw_i16(w, err);
	kaas_kw_i32(w, 0); /* throttle */
	kaas_kw_array(w, 0, err ? 0 : c->batch.nt);
	for (int32_t i = 0; !err && i < c->batch.nt; i++) {
		const struct kaas_offset_topic *t = &c->batch.topics[i];
		kaas_kw_strn(w, 0, c->names[i].p, c->names[i].len);
		kaas_kw_array(w, 0, t->n);
		for (int32_t j = 0; j < t->n; j++) {
			kaas_kw_i32(w, t->parts[j].partition);
			kaas_kw_i16(w, t->parts[j].status == -EACCES /* ACLs: set below */
					       ? KAAS_KERR_TOPIC_AUTHORIZATION_FAILED
					       : kaas_group_kerr(t->parts[j].status));
		}
	}
	struct kaas_req *req = c->req;
	offset_delete_free(c);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void offset_delete_done(void *ctx, int status, struct kaas_offset_batch *batch)
{
	(void)batch; /* the call's own */
	offset_delete_answer(ctx, kaas_group_kerr(status));
}

/* Read topics[name, partitions[index]] into c, marking partitions of
 * topics or indexes this broker does not know: 0, or -1 (malformed or out
 * of memory). */
static int offset_delete_parse(struct kaas_req *req, struct offset_delete_call *c)
{
	struct kaas_kr *r = &req->r;
	int32_t nt = kaas_kr_array(r, 0, 6);
	if (!kaas_kr_ok(r) || nt < 0 ||
	    !(c->batch.topics = calloc((size_t)nt + 1, sizeof *c->batch.topics)) ||
	    !(c->names = calloc((size_t)nt + 1, sizeof *c->names)))
		return -1;
	c->batch.nt = nt;
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		struct kaas_offset_topic *t = &c->batch.topics[i];
		c->names[i] = kaas_kr_str(r, 0);
		int32_t np = kaas_kr_array(r, 0, 4);
		if (!kaas_kr_ok(r) || np < 0 || !(t->parts = calloc((size_t)np + 1, sizeof *t->parts)))
			return -1;
		t->n = np;
		struct kaas_topic *kt = kaas_topic_name_valid((const char *)c->names[i].p, c->names[i].len)
						? kaas_topics_get(req->broker->topics,
								  (const char *)c->names[i].p,
								  c->names[i].len)
						: NULL;
		if (kt && !(t->name = kaas_kslice_dup(c->names[i]))) {
			kaas_topic_put(kt);
			return -1;
		}
		for (int32_t j = 0; j < np && kaas_kr_ok(r); j++) {
			t->parts[j].partition = kaas_kr_i32(r);
			if (!kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_TOPIC, c->names[i]))
				t->parts[j].status = -EACCES; /* ACLs: not the principal's */
			else if (!kt || t->parts[j].partition < 0 ||
				 t->parts[j].partition >= kt->npart)
				t->parts[j].status = KAAS_EUNKNOWN_PARTITION;
		}
		kaas_topic_put(kt);
	}
	return kaas_kr_ok(r) ? 0 : -1;
}

void kaas_api_offset_delete(struct kaas_req *req)
{
	struct offset_delete_call *c = calloc(1, sizeof *c);
	if (!c) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	c->req = req;
	struct kaas_kslice gid = kaas_kr_str(&req->r, 0);
	if (!kaas_kr_ok(&req->r) || offset_delete_parse(req, c) < 0) {
		offset_delete_free(c);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	int16_t err = 0;
	if (!kaas_req_allowed_slice(req, KAAS_OP_DELETE, KAAS_RES_GROUP, gid))
		err = KAAS_KERR_GROUP_AUTHORIZATION_FAILED; /* ACLs */
	if (err || !(c->group = kaas_group_id_dup(gid, &err))) {
		offset_delete_answer(c, err);
		return;
	}
	kaas_groups_delete_offsets(req->broker->groups, c->group, &c->batch, offset_delete_done, c);
}
