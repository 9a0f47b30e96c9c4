/*
 * api_txn.c — the transactional producer's requests to its coordinator:
 * AddPartitionsToTxn 0–3, AddOffsetsToTxn 0–3 and EndTxn 0–3 (3+ flexible
 * for each).  The work queue (they wait for the coordinator's state on the
 * volume, broker/txn/txn.h).  Versions before KIP-588 (2 here) learn of a
 * fenced producer as INVALID_PRODUCER_EPOCH, later ones as PRODUCER_FENCED.
 */
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/topics.h"
#include "broker/txn/txn.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/status_map.h"
#include "kafka/txn_wire.h"
#include "util/status.h"

int16_t kaas_txn_kerr(int rc, int16_t version, int16_t fenced_from)
{
	if (rc >= 0)
		return KAAS_KERR_NONE;
	int16_t e = kaas_kafka_error(rc, KAAS_KERR_COORDINATOR_NOT_AVAILABLE);
	if (e == KAAS_KERR_PRODUCER_FENCED && version < fenced_from)
		e = KAAS_KERR_INVALID_PRODUCER_EPOCH;
	return e;
}

char *kaas_txn_id_dup(struct kaas_kslice id)
{
	if (id.len <= 0 || memchr(id.p, 0, (size_t)id.len))
		return NULL;
	return kaas_kslice_dup(id);
}

/* Does this broker know topic/partition (UNKNOWN_TOPIC_OR_PARTITION if not)? */
static int known_partition(struct kaas_broker *b, struct kaas_kslice topic, int32_t p)
{
	if (topic.len <= 0)
		return 0;
	struct kaas_topic *kt = kaas_topics_get(b->topics, (const char *)topic.p, topic.len);
	int ok = kt && !kt->deleting && p >= 0 && p < kt->npart;
	kaas_topic_put(kt);
	return ok;
}

/* The fields a producer's request to its coordinator starts with. */
struct producer_ref {
	struct kaas_kslice id;
	int64_t pid;
	int16_t epoch;
};

static void read_producer(struct kaas_kr *r, int f, struct producer_ref *p)
{
	p->id = kaas_kr_str(r, f);
	p->pid = kaas_kr_i64(r);
	p->epoch = kaas_kr_i16(r);
}

int kaas_api_add_partitions_to_txn(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct kaas_broker *b = req->broker;
	struct producer_ref pr;
	read_producer(r, f, &pr);
	char *id = kaas_txn_id_dup(pr.id);
	/* First pass: count and check the partitions; the second answers. */
	int32_t nt = kaas_kr_array(r, f, 1);
	const uint8_t *topics_at = r->p;
	size_t n = 0;
	int unknown = 0;
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		struct kaas_kslice name = kaas_kr_str(r, f);
		int32_t np = kaas_kr_array(r, f, 4);
		/* ACLs: WRITE on each topic (refused ones answered below) */
		int denied = !kaas_req_allowed_slice(req, KAAS_OP_WRITE, KAAS_RES_TOPIC, name);
		for (int32_t j = 0; j < np && kaas_kr_ok(r); j++) {
			int32_t p = kaas_kr_i32(r);
			unknown |= denied || !known_partition(b, name, p);
			n++;
		}
		kaas_kr_tags(r, f);
	}
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || nt < 0) {
		free(id);
		return KAAS_REQ_CLOSE;
	}
	struct kaas_txn_part *parts = calloc(n ? n : 1, sizeof *parts);
	int16_t all = KAAS_KERR_NONE;
	if (!id)
		all = KAAS_KERR_INVALID_REQUEST;
	else if (!kaas_req_allowed(req, KAAS_OP_WRITE, KAAS_RES_TRANSACTIONAL_ID, id, strlen(id)))
		all = KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED; /* ACLs */
	else if (!parts)
		all = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	struct kaas_kr again;
	kaas_kr_init(&again, topics_at, (size_t)(r->end - topics_at));
	size_t k = 0;
	for (int32_t i = 0; parts && i < nt; i++) {
		struct kaas_kslice name = kaas_kr_str(&again, f);
		int32_t np = kaas_kr_array(&again, f, 4);
		for (int32_t j = 0; j < np; j++) {
			parts[k].topic = kaas_kslice_dup(name);
			parts[k++].partition = kaas_kr_i32(&again);
		}
		kaas_kr_tags(&again, f);
	}
	if (!all && !unknown)
		all = kaas_txn_kerr(kaas_txns_add_partitions(b->txns, id, pr.pid, pr.epoch, parts, k), v, 2);
	/* The answer, in the request's order. */
	kaas_kw_i32(w, 0);
	kaas_kw_array(w, f, nt);
	kaas_kr_init(&again, topics_at, (size_t)(r->end - topics_at));
	for (int32_t i = 0; i < nt; i++) {
		struct kaas_kslice name = kaas_kr_str(&again, f);
		int32_t np = kaas_kr_array(&again, f, 4);
		kaas_kw_strn(w, f, name.p, name.len);
		kaas_kw_array(w, f, np);
		for (int32_t j = 0; j < np; j++) {
			int32_t p = kaas_kr_i32(&again);
			int16_t err = all;
			if (!all && unknown)
				err = !kaas_req_allowed_slice(req, KAAS_OP_WRITE, KAAS_RES_TOPIC, name)
					      ? KAAS_KERR_TOPIC_AUTHORIZATION_FAILED
				      : known_partition(b, name, p) ? KAAS_KERR_OPERATION_NOT_ATTEMPTED
								    : KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
			kaas_kw_i32(w, p);
			kaas_kw_i16(w, err);
			kaas_kw_tags(w, f);
		}
		kaas_kr_tags(&again, f);
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	for (size_t i = 0; i < k; i++)
		free(parts[i].topic);
	free(parts);
	free(id);
	return KAAS_REQ_RESPOND;
}

/* The answer of AddOffsetsToTxn and EndTxn: throttle time and one error. */
static int answer_error(struct kaas_req *req, int16_t err)
{
	KAAS_REQ_IO(req);
	(void)r;
	(void)v;
	kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}

int kaas_api_add_offsets_to_txn(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct producer_ref p;
	read_producer(r, f, &p);
	struct kaas_kslice group = kaas_kr_str(r, f);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	(void)w;
	char *id = kaas_txn_id_dup(p.id), *g = group.len >= 0 ? kaas_kslice_dup(group) : NULL;
	int16_t err = !id || !g ? KAAS_KERR_INVALID_REQUEST
		      /* ACLs: WRITE on the transactional id, READ on the group */
		      : !kaas_req_allowed(req, KAAS_OP_WRITE, KAAS_RES_TRANSACTIONAL_ID, id, strlen(id))
			      ? KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
		      : !kaas_req_allowed(req, KAAS_OP_READ, KAAS_RES_GROUP, g, strlen(g))
			      ? KAAS_KERR_GROUP_AUTHORIZATION_FAILED
			      : kaas_txn_kerr(kaas_txns_add_group(req->broker->txns, id, p.pid,
								  p.epoch, g), v, 2);
	free(g);
	free(id);
	return answer_error(req, err);
}

int kaas_api_end_txn(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct producer_ref p;
	read_producer(r, f, &p);
	int commit = kaas_kr_i8(r) != 0;
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	(void)w;
	char *id = kaas_txn_id_dup(p.id);
	int16_t err = !id ? KAAS_KERR_INVALID_REQUEST
		      /* ACLs: WRITE on the transactional id */
		      : !kaas_req_allowed(req, KAAS_OP_WRITE, KAAS_RES_TRANSACTIONAL_ID, id, strlen(id))
			      ? KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
			      : kaas_txn_kerr(kaas_txns_end(req->broker->txns, id, p.pid, p.epoch,
							    commit), v, 2);
	free(id);
	return answer_error(req, err);
}
