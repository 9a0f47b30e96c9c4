/*
 * group_offsets.c — OffsetCommit 2–7 and OffsetFetch 1–5.
 *
 * Membership checks run on the loop; the volume work (loading the group's
 * committed offsets on first use, kaas_group_commit) runs on libuv's work
 * queue, one operation per group at a time in arrival order, so two
 * commits never race on the group's document.  A commit is answered only
 * after kaas_group_commit returned 0 (durable and not fenced); when it
 * fails the in-memory state is dropped and reloaded from the volume by the
 * next operation, so nothing not durable is ever served.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/broker.h"
#include "broker/groups.h"
#include "util/logger.h"
#include "kafka/protocol.h"
#include "util/status.h"

#define METADATA_MAX 4096

struct op_part {
	int32_t index;
	int64_t offset;
	int32_t leader_epoch;
	char *meta;
	int16_t err;
};

struct op_topic {
	struct kaas_kslice name;  /* points into the request frame */
	char *name_s;
	char topic_id[33];        /* commit: the topic's incarnation id (hex) */
	int32_t n;
	struct op_part *p;
};

struct group_op {
	struct group_op *next;
	struct group *gr;
	struct kaas_req *req;
	int commit;               /* 1 OffsetCommit, 0 OffsetFetch */
	int all;                  /* OffsetFetch of every topic */
	int16_t err;              /* for every partition (set before or after the work) */
	int32_t nt;
	struct op_topic *t;
	int rc;                   /* the work's result */
};

static void op_free(struct group_op *op)
{
	for (int32_t i = 0; i < op->nt; i++) {
		for (int32_t j = 0; j < op->t[i].n; j++)
			free(op->t[i].p[j].meta);
		free(op->t[i].p);
		free(op->t[i].name_s);
	}
	free(op->t);
	free(op);
}

static int16_t map_err(int rc)
{
	if (rc == KAAS_EFENCED)
		return KAAS_KERR_NOT_COORDINATOR;
	return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
}

/* ------------------------------------------------------------ answers */

static void answer_commit(struct group_op *op)
{
	struct kaas_req *req = op->req;
	struct kaas_kw *w = &req->w;
	if (req->hdr.api_version >= 3)
		kaas_kw_i32(w, 0);
	kaas_kw_array(w, 0, op->nt);
	for (int32_t i = 0; i < op->nt; i++) {
		kaas_kw_strn(w, 0, op->t[i].name.p, op->t[i].name.len);
		kaas_kw_array(w, 0, op->t[i].n);
		for (int32_t j = 0; j < op->t[i].n; j++) {
			kaas_kw_i32(w, op->t[i].p[j].index);
			kaas_kw_i16(w, op->t[i].p[j].err ? op->t[i].p[j].err : op->err);
		}
	}
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void topic_id_hex(const struct kaas_topic *kt, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", kt->id[i]);
}

/* Was commit c made to the incarnation of its topic listed now?  Offsets
 * are committed per incarnation (names are not identities): after a delete
 * and re-create, the earlier incarnation's offsets are not the new one's.
 * A commit without an id (made before ids were recorded), or a topic not
 * listed here, is taken as it is. */
static int same_incarnation(struct kaas_broker *b, const struct kaas_committed *c)
{
	if (!c->topic_id[0])
		return 1;
	struct kaas_topic *kt = kaas_topics_get(b->topics, c->topic, (int)strlen(c->topic));
	if (!kt)
		return 1;
	char hex[33];
	topic_id_hex(kt, hex);
	kaas_topic_put(kt);
	return strcmp(hex, c->topic_id) == 0;
}

static void fetch_part(struct kaas_kw *w, int16_t v, const struct kaas_committed *c, int32_t index,
		       int16_t err)
{
	kaas_kw_i32(w, index);
	kaas_kw_i64(w, c && !err ? c->offset : -1);
	if (v >= 5)
		kaas_kw_i32(w, c && !err ? c->leader_epoch : -1);
	kaas_kw_str(w, 0, c && !err && c->metadata ? c->metadata : "");
	kaas_kw_i16(w, err);
}

static void answer_fetch(struct group_op *op)
{
	struct kaas_req *req = op->req;
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	const struct kaas_group_offsets *g = op->gr && op->gr->loaded && !op->err ? &op->gr->offs : NULL;
	/* v1 has no top-level error: it goes on every partition. */
	int16_t perr = op->err;
	if (v >= 3)
		kaas_kw_i32(w, 0);
	if (op->all) {
		size_t nt = 0;
		for (size_t i = 0; g && i < g->n; i++) {
			size_t k = 0;
			while (k < i && strcmp(g->items[k].topic, g->items[i].topic))
				k++;
			nt += k == i;
		}
		kaas_kw_array(w, 0, (int32_t)nt);
		for (size_t i = 0; g && i < g->n; i++) {
			size_t k = 0;
			while (k < i && strcmp(g->items[k].topic, g->items[i].topic))
				k++;
			if (k < i)
				continue;
			int32_t np = 0;
			for (size_t j = i; j < g->n; j++)
				np += strcmp(g->items[j].topic, g->items[i].topic) == 0;
			kaas_kw_str(w, 0, g->items[i].topic);
			kaas_kw_array(w, 0, np);
			for (size_t j = i; j < g->n; j++)
				if (strcmp(g->items[j].topic, g->items[i].topic) == 0)
					fetch_part(w, v,
						   same_incarnation(op->gr->reg->b, &g->items[j])
							   ? &g->items[j]
							   : NULL,
						   g->items[j].partition, 0);
		}
	} else {
		kaas_kw_array(w, 0, op->nt);
		for (int32_t i = 0; i < op->nt; i++) {
			kaas_kw_strn(w, 0, op->t[i].name.p, op->t[i].name.len);
			kaas_kw_array(w, 0, op->t[i].n);
			for (int32_t j = 0; j < op->t[i].n; j++) {
				const struct kaas_committed *c =
					g && op->t[i].name_s
						? kaas_group_get(g, op->t[i].name_s, op->t[i].p[j].index)
						: NULL;
				if (c && !same_incarnation(op->gr->reg->b, c))
					c = NULL; /* an earlier incarnation's: none */
				fetch_part(w, v, c, op->t[i].p[j].index, v >= 2 ? 0 : perr);
			}
		}
	}
	if (v >= 2)
		kaas_kw_i16(w, op->err);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void answer(struct group_op *op)
{
	if (op->commit)
		answer_commit(op);
	else
		answer_fetch(op);
}

/* ------------------------------------------------------------ the queue */

static void run_next(struct group *gr);

/* Work queue: load the group if needed, then apply and persist a commit. */
static void op_work(void *arg)
{
	struct group *gr = arg;
	struct group_op *op = gr->ops_head;
	struct kaas_substrate *cluster = gr->reg->b->cluster;
	op->rc = 0;
	if (!gr->loaded) {
		kaas_group_offsets_free(&gr->offs);
		memset(&gr->offs, 0, sizeof(gr->offs));
		/* The slot's epoch now (0: no longer ours, so never take over). */
		uint64_t epoch = kaas_groups_coordinator_epoch(gr->reg, gr->id);
		int rc = epoch ? kaas_group_open(cluster, gr->id, epoch, &gr->offs) : KAAS_EFENCED;
		if (rc < 0) {
			kaas_warn("group %s: cannot load committed offsets: %s (%s)", gr->id,
				  kaas_strerror(rc), kaas_sub_errdetail());
			kaas_group_offsets_free(&gr->offs);
			memset(&gr->offs, 0, sizeof(gr->offs));
			op->rc = rc;
			return;
		}
		gr->loaded = 1;
	}
	if (!op->commit)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000; /* informational */
	int any = 0;
	for (int32_t i = 0; i < op->nt; i++) {
		for (int32_t j = 0; j < op->t[i].n; j++) {
			struct op_part *p = &op->t[i].p[j];
			if (p->err)
				continue;
			int rc = kaas_group_set(&gr->offs, op->t[i].name_s, p->index, p->offset,
						p->leader_epoch, p->meta, now);
			if (rc == 0)
				rc = kaas_group_set_topic_id(&gr->offs, op->t[i].name_s, p->index,
							     op->t[i].topic_id);
			if (rc < 0) {
				op->rc = rc;
				gr->loaded = 0;
				return;
			}
			any = 1;
		}
	}
	if (!any)
		return;
	int rc = kaas_group_commit(cluster, &gr->offs);
	if (rc < 0) {
		kaas_warn("group %s: commit not durable: %s (%s)", gr->id, kaas_strerror(rc),
			  kaas_sub_errdetail());
		op->rc = rc;
		gr->loaded = 0; /* reload from the volume before serving again */
	}
}

static void op_done(void *arg, int status)
{
	struct group *gr = arg;
	struct group_op *op = gr->ops_head;
	gr->ops_head = op->next;
	if (!gr->ops_head)
		gr->ops_tail = NULL;
	gr->op_running = 0;
	if (status < 0)
		op->rc = -ECANCELED;
	if (op->rc < 0 && !op->err)
		op->err = map_err(op->rc);
	answer(op);
	op_free(op);
	if (gr->reload) {
		gr->reload = 0;
		gr->loaded = 0; /* dropped meanwhile: the next op loads at the new epoch */
	}
	run_next(gr);
}

static void run_next(struct group *gr)
{
	if (gr->op_running || !gr->ops_head)
		return;
	struct kaas_broker *b = gr->reg->b;
	gr->op_running = 1;
	if (kaas_pool_queue(b, op_work, op_done, gr) < 0) {
		gr->op_running = 0;
		struct group_op *op = gr->ops_head;
		gr->ops_head = op->next;
		if (!gr->ops_head)
			gr->ops_tail = NULL;
		op->err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
		answer(op);
		op_free(op);
		run_next(gr);
	}
}

static void enqueue(struct group *gr, struct group_op *op)
{
	op->gr = gr;
	if (gr->ops_tail)
		gr->ops_tail->next = op;
	else
		gr->ops_head = op;
	gr->ops_tail = op;
	run_next(gr);
}

int kaas_group_ops_pending(struct group *gr)
{
	return gr->op_running + (gr->ops_head != NULL);
}

/* ------------------------------------------------------------ requests */

static char *gid_dup(struct kaas_kslice s)
{
	if (s.len <= 0 || memchr(s.p, 0, (size_t)s.len))
		return NULL;
	return kaas_kslice_dup(s);
}

/* Parse topics[name, partitions[...]] of a commit (commit=1) or a fetch. */
static int parse_topics(struct kaas_kr *r, struct group_op *op, int16_t v)
{
	int32_t nt = kaas_kr_array(r, 0, 6);
	if (!kaas_kr_ok(r))
		return -1;
	if (nt < 0) {
		if (op->commit || v < 2)
			return -1;
		op->all = 1;
		return 0;
	}
	op->t = calloc((size_t)nt + 1, sizeof(*op->t));
	if (!op->t)
		return -1;
	op->nt = nt;
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		struct op_topic *t = &op->t[i];
		t->name = kaas_kr_str(r, 0);
		int32_t np = kaas_kr_array(r, 0, 4);
		if (!kaas_kr_ok(r) || np < 0)
			return -1;
		t->p = calloc((size_t)np + 1, sizeof(*t->p));
		if (!t->p)
			return -1;
		t->n = np;
		if (t->name.len > 0 && !memchr(t->name.p, 0, (size_t)t->name.len))
			t->name_s = kaas_kslice_dup(t->name);
		for (int32_t j = 0; j < np && kaas_kr_ok(r); j++) {
			struct op_part *p = &t->p[j];
			p->index = kaas_kr_i32(r);
			p->leader_epoch = -1;
			if (!op->commit)
				continue;
			p->offset = kaas_kr_i64(r);
			if (v >= 6)
				p->leader_epoch = kaas_kr_i32(r);
			struct kaas_kslice meta = kaas_kr_nstr(r, 0);
			if (meta.len > METADATA_MAX)
				p->err = KAAS_KERR_OFFSET_METADATA_TOO_LARGE;
			else if (meta.len >= 0 && memchr(meta.p, 0, (size_t)meta.len))
				p->err = KAAS_KERR_INVALID_REQUEST;
			else if (meta.len >= 0 && !(p->meta = kaas_kslice_dup(meta)))
				p->err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
		}
	}
	return kaas_kr_ok(r) ? 0 : -1;
}

void kaas_api_offset_commit(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	struct kaas_groups *g = b->groups;
	struct kaas_kr *r = &req->r;
	int16_t v = req->hdr.api_version;
	struct group_op *op = calloc(1, sizeof(*op));
	if (!op) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	op->req = req;
	op->commit = 1;
	struct kaas_kslice gid = kaas_kr_str(r, 0);
	int32_t gen = kaas_kr_i32(r);
	struct kaas_kslice mid = kaas_kr_str(r, 0);
	struct kaas_kslice iid = { NULL, -1 };
	if (v >= 7)
		iid = kaas_kr_nstr(r, 0);
	if (v <= 4)
		(void)kaas_kr_i64(r); /* retention_time_ms: offsets are kept */
	if (!kaas_kr_ok(r) || parse_topics(r, op, v) < 0) {
		op_free(op);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id = gid_dup(gid);
	char *member_id = kaas_kslice_dup(mid);
	struct group *gr = NULL;
	if (!id)
		op->err = KAAS_KERR_INVALID_GROUP_ID;
	else if ((op->err = kaas_groups_check(g, id)))
		;
	else if (!member_id || !(gr = kaas_group_lookup(g, id, 1)))
		op->err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	else if (gen < 0 && gr->state == GROUP_EMPTY)
		; /* a standalone commit (no group membership) */
	else if (gr->state == GROUP_COMPLETING)
		op->err = KAAS_KERR_REBALANCE_IN_PROGRESS;
	else {
		struct group_member *m = NULL;
		if ((op->err = kaas_group_member_check(gr, member_id, iid, &m)))
			; /* UNKNOWN_MEMBER_ID, or FENCED_INSTANCE_ID (KIP-345) */
		else if (gen != gr->generation)
			op->err = KAAS_KERR_ILLEGAL_GENERATION;
		else
			m->last_seen_ms = kaas_now_ms();
	}
	/* Partitions of unknown topics are refused one by one. */
	for (int32_t i = 0; !op->err && i < op->nt; i++) {
		struct op_topic *t = &op->t[i];
		struct kaas_topic *kt = t->name_s ? kaas_topics_get(b->topics, t->name_s,
								   (int)strlen(t->name_s))
						  : NULL;
		for (int32_t j = 0; j < t->n; j++)
			if (!t->p[j].err && (!kt || t->p[j].index < 0 || t->p[j].index >= kt->npart))
				t->p[j].err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
		if (kt)
			topic_id_hex(kt, t->topic_id);
		kaas_topic_put(kt);
	}
	if (op->err && gr)
		kaas_info("group %s: commit by %s at generation %d refused (error %d; group at generation %d, %s)",
			  gr->id, member_id ? member_id : "?", gen, op->err, gr->generation,
			  kaas_group_state_name(gr->state));
	free(id);
	free(member_id);
	if (op->err || !gr) {
		answer(op);
		op_free(op);
		if (gr)
			kaas_group_maybe_free(gr);
		return;
	}
	enqueue(gr, op);
}

void kaas_api_offset_fetch(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	struct kaas_kr *r = &req->r;
	int16_t v = req->hdr.api_version;
	struct group_op *op = calloc(1, sizeof(*op));
	if (!op) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	op->req = req;
	struct kaas_kslice gid = kaas_kr_str(r, 0);
	if (!kaas_kr_ok(r) || parse_topics(r, op, v) < 0) {
		op_free(op);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id = gid_dup(gid);
	struct group *gr = NULL;
	if (!id)
		op->err = KAAS_KERR_INVALID_GROUP_ID;
	else if ((op->err = kaas_groups_check(b->groups, id)))
		;
	else if (!(gr = kaas_group_lookup(b->groups, id, 1)))
		op->err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	free(id);
	if (op->err) {
		answer(op);
		op_free(op);
		return;
	}
	if (gr->loaded && !gr->op_running && !gr->ops_head) {
		op->gr = gr;
		answer(op);
		op_free(op);
		return;
	}
	enqueue(gr, op);
}
