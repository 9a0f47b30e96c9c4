/*
 * api_txn_offsets.c — TxnOffsetCommit 0–3 (3 flexible): a transactional
 * producer's consumer offsets, sent to the group's coordinator, held
 * pending until the transaction commits (broker/groups/groups.h,
 * kaas_groups_txn_commit).  Loop thread; answered when the coordinator
 * completes.  v3's member fields (KIP-447) are read and not checked.
 * PRODUCER_FENCED from v3 on, INVALID_PRODUCER_EPOCH before (KIP-588).
 */
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/groups/groups.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/txn_wire.h"
#include "util/status.h"

/* One TxnOffsetCommit in flight. */
struct txn_offsets_call {
	struct kaas_req *req;
	struct kaas_group_txn_commit rq;
	struct kaas_kslice *names;     /* the topics' names as sent */
	int16_t refused;               /* ACLs: the whole request's error, or 0 */
	unsigned char *topic_refused;  /* ACLs: per topic, READ refused */
};

/* What one topic of the batch owns. */
static void topic_free(struct kaas_offset_topic *t)
{
	for (int32_t j = 0; t->parts && j < t->n; j++)
		free((char *)t->parts[j].metadata);
	free(t->parts);
	free((char *)t->name);
}

static void call_free(void *arg)
{
	struct txn_offsets_call *c = arg;
	if (c->rq.batch.topics)
		for (int32_t i = 0; i < c->rq.batch.nt; i++)
			topic_free(&c->rq.batch.topics[i]);
	free(c->rq.batch.topics);
	free(c->names);
	free(c->topic_refused);
	free((char *)c->rq.group);
	free((char *)c->rq.txn_id);
	free(c);
}

/* topics[name, partitions[index, offset, leader_epoch (2+), metadata]]:
 * 0, or -1 when malformed or out of memory. */
static int parse_topics(struct kaas_kr *r, struct txn_offsets_call *c, int16_t v, int f)
{
	struct kaas_offset_batch *b = &c->rq.batch;
	void *topics = NULL;
	b->nt = kaas_kr_array_alloc(r, f, 3, sizeof *b->topics, &topics);
	b->topics = topics;
	int oom = b->nt > 0 && !(c->names = calloc((size_t)b->nt, sizeof *c->names));
	if (b->nt < 0 || oom)
		b->nt = 0; /* nothing to free below */
	for (int32_t i = 0; i < b->nt && kaas_kr_ok(r); i++) {
		struct kaas_offset_topic *t = &b->topics[i];
		struct kaas_kslice name = kaas_kr_str(r, f);
		void *parts = NULL;
		c->names[i] = name;
		t->n = kaas_kr_array_alloc(r, f, 4, sizeof *t->parts, &parts);
		t->parts = parts;
		if (t->n < 0)
			t->n = 0;
		if (name.len > 0 && !memchr(name.p, 0, (size_t)name.len))
			t->name = kaas_kslice_dup(name);
		for (int32_t j = 0; j < t->n && kaas_kr_ok(r); j++) {
			struct kaas_offset_part *p = &t->parts[j];
			p->partition = kaas_kr_i32(r);
			p->offset = kaas_kr_i64(r);
			p->leader_epoch = v >= 2 ? kaas_kr_i32(r) : -1;
			struct kaas_kslice md = kaas_kr_nstr(r, f);
			if (md.len > 4096 || (md.len > 0 && memchr(md.p, 0, (size_t)md.len)))
				p->status = KAAS_ETXN_STATE; /* refused: answered per partition */
			else if (md.len >= 0)
				p->metadata = kaas_kslice_dup(md);
			if (!t->name)
				p->status = KAAS_EUNKNOWN_PARTITION;
			kaas_kr_tags(r, f);
		}
		kaas_kr_tags(r, f);
	}
	return kaas_kr_ok(r) && !oom ? 0 : -1;
}

/* A partition's answer: its own refusal, else the request's error. */
static int16_t part_error(const struct kaas_offset_part *p, int16_t top, int16_t v)
{
	if (p->status == KAAS_ETXN_STATE) /* its metadata was refused */
		return KAAS_KERR_OFFSET_METADATA_TOO_LARGE;
	return p->status ? kaas_txn_kerr(p->status, v, 3) : top;
}

static void write_answer(struct txn_offsets_call *c, int status)
{
	struct kaas_req *req = c->req;
	KAAS_REQ_IO(req);
	const struct kaas_offset_batch *b = &c->rq.batch;
	int16_t top = c->refused ? c->refused : kaas_txn_kerr(status, v, 3);
	kaas_kw_i32(w, 0);
	kaas_kw_array(w, f, b->nt);
	for (int32_t i = 0; i < b->nt; i++) {
		const struct kaas_offset_topic *t = &b->topics[i];
		kaas_kw_strn(w, f, c->names[i].p, c->names[i].len);
		kaas_kw_array(w, f, t->n);
		for (const struct kaas_offset_part *p = t->parts; p < t->parts + t->n; p++) {
			kaas_kw_i32(w, p->partition);
			kaas_kw_i16(w, c->refused ? top
				       : c->topic_refused && c->topic_refused[i]
					       ? KAAS_KERR_TOPIC_AUTHORIZATION_FAILED
					       : part_error(p, top, v));
			kaas_kw_tags(w, f);
		}
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void commit_done(void *ctx, int status, struct kaas_offset_batch *batch)
{
	(void)batch;
	write_answer(ctx, status);
}

void kaas_api_txn_offset_commit(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct txn_offsets_call *c = kaas_req_ctx_new(req, sizeof *c, call_free);
	if (!c)
		return;
	c->req = req;
	struct kaas_kslice id = kaas_kr_str(r, f);
	struct kaas_kslice group = kaas_kr_str(r, f);
	c->rq.producer_id = kaas_kr_i64(r);
	c->rq.producer_epoch = kaas_kr_i16(r);
	if (v >= 3) {
		(void)kaas_kr_i32(r);      /* generation_id */
		(void)kaas_kr_str(r, f);   /* member_id */
		(void)kaas_kr_nstr(r, f);  /* group_instance_id */
	}
	int bad = !kaas_kr_ok(r) || parse_topics(r, c, v, f) < 0;
	kaas_kr_tags(r, f);
	if (bad || !kaas_kr_ok(r)) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	c->rq.txn_id = kaas_txn_id_dup(id);
	c->rq.group = kaas_txn_id_dup(group);
	if (!c->rq.txn_id || !c->rq.group) {
		/* An empty transactional id owns no producer id; an empty group
		 * is no group (INVALID_GROUP_ID would need its own status). */
		write_answer(c, KAAS_ETXN_PID_MAPPING);
		return;
	}
	/* ACLs: WRITE on the transactional id, READ on the group, READ on
	 * each topic (a refused topic's offsets are not taken), as Kafka. */
	struct kaas_offset_batch *bt = &c->rq.batch;
	if (!kaas_req_allowed_slice(req, KAAS_OP_WRITE, KAAS_RES_TRANSACTIONAL_ID, id))
		c->refused = KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
	else if (!kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_GROUP, group))
		c->refused = KAAS_KERR_GROUP_AUTHORIZATION_FAILED;
	if (c->refused) {
		write_answer(c, 0);
		return;
	}
	if (!(c->topic_refused = calloc((size_t)bt->nt + 1, 1))) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	for (int32_t i = 0; i < bt->nt; i++) {
		if (kaas_req_allowed_slice(req, KAAS_OP_READ, KAAS_RES_TOPIC, c->names[i]))
			continue;
		c->topic_refused[i] = 1;
		for (int32_t j = 0; j < bt->topics[i].n; j++)
			if (!bt->topics[i].parts[j].status)
				bt->topics[i].parts[j].status = KAAS_EUNKNOWN_PARTITION;
	}
	kaas_groups_txn_commit(req->broker->groups, &c->rq, commit_done, c);
}
