/*
 * api_describe_topics.c — DescribeTopicPartitions 0 (KIP-966, flexible):
 * topics and their partitions as Metadata answers them, in name order, at
 * most ResponsePartitionLimit partitions (and at most 2000, as Kafka's
 * default max.request.partition.size.limit) an answer, paged with a
 * cursor (topic name, first partition index).  No topics asked: every
 * topic.  A topic not known is UNKNOWN_TOPIC_OR_PARTITION (it takes none
 * of the limit); a cursor naming a topic that was not asked for makes
 * every topic INVALID_REQUEST, as Kafka answers.  A topic's authorized
 * operations are always answered (kaas_req_topic_ops), as Kafka's; a topic
 * in error has none (INT32_MIN).  kaas has no topic ids
 * yet (the zero id, as in Metadata) and no eligible leader replicas (empty
 * lists, as Kafka).
 * Work queue.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/wire_cluster.h"

#define MAX_PARTITIONS 2000

/* One topic of the answer. */
struct dtp_topic {
	struct kaas_kslice name;     /* as asked, or the listed topic's */
	struct kaas_topic *tp;       /* NULL: not known here */
	int16_t err;
	int32_t from, to;            /* the partitions answered */
	int shown;                   /* in this answer (before the cursor's end) */
};

static int by_name(const void *a, const void *b)
{
	const struct kaas_kslice *x = &((const struct dtp_topic *)a)->name;
	const struct kaas_kslice *y = &((const struct dtp_topic *)b)->name;
	assert(x->len >= 0 && y->len >= 0); /* kaas_kr_str fails the reader on a null */
	int n = x->len < y->len ? x->len : y->len;
	int c = n > 0 ? memcmp(x->p, y->p, (size_t)n) : 0;
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int slice_cmp(struct kaas_kslice a, struct kaas_kslice b)
{
	struct dtp_topic x = { .name = a }, y = { .name = b };
	return by_name(&x, &y);
}

/* Plan the answer: which topics and partitions it shows from the cursor
 * (cursor.len < 0: none) on, up to limit partitions; *next is where the
 * next page starts (next->len < 0: nothing left). */
static void plan(struct dtp_topic *t, int32_t n, struct kaas_kslice cursor, int32_t cursor_part,
		 int32_t limit, struct kaas_kslice *next, int32_t *next_part)
{
	next->len = -1;
	*next_part = 0;
	for (int32_t i = 0; i < n; i++) {
		int c = cursor.len >= 0 ? slice_cmp(t[i].name, cursor) : 1;
		if (c < 0)
			continue;
		int32_t start = c == 0 && cursor_part > 0 ? cursor_part : 0;
		if (!t[i].tp || t[i].err) {
			t[i].shown = 1;
			continue;
		}
		if (limit == 0) {
			*next = t[i].name;
			*next_part = start;
			return;
		}
		int32_t np = t[i].tp->npart, take = np > start ? np - start : 0;
		if (take > limit)
			take = limit;
		t[i].shown = 1;
		t[i].from = start;
		t[i].to = start + take;
		limit -= take;
		if (t[i].to < np) {
			*next = t[i].name;
			*next_part = t[i].to;
			return;
		}
	}
}

static void write_partitions(struct kaas_kw *w, struct kaas_broker *b, const struct dtp_topic *t)
{
	kaas_kw_array(w, 1, t->tp ? t->to - t->from : 0);
	for (int32_t i = t->from; t->tp && i < t->to; i++) {
		int32_t leader, epoch;
		kaas_kw_i16(w, kaas_wire_part_leader(b, t->tp, &t->tp->parts[i], &leader, &epoch));
		kaas_kw_i32(w, i);
		kaas_kw_i32(w, leader);
		kaas_kw_i32(w, epoch);
		kaas_kw_array(w, 1, 1); /* replicas: the leader (the volume keeps the copies) */
		kaas_kw_i32(w, leader);
		kaas_kw_array(w, 1, 1); /* isr */
		kaas_kw_i32(w, leader);
		/* No eligible leader replicas (KIP-966): empty lists, as Kafka
		 * answers; Kafka's admin client fails on null ones
		 * (kafka-transactions.sh find-hanging, kafka-topics --describe). */
		kaas_kw_array(w, 1, 0); /* eligible leader replicas */
		kaas_kw_array(w, 1, 0); /* last known ELR */
		kaas_kw_array(w, 1, 0);  /* offline replicas */
		kaas_kw_tags(w, 1);
	}
}

static void write_answer(struct kaas_req *req, const struct dtp_topic *t, int32_t n,
			 struct kaas_kslice next, int32_t next_part)
{
	static const uint8_t zero_id[16];
	struct kaas_kw *w = &req->w;
	kaas_kw_i32(w, 0); /* throttle */
	int32_t shown = 0;
	for (int32_t i = 0; i < n; i++)
		shown += t[i].shown;
	kaas_kw_array(w, 1, shown);
	for (int32_t i = 0; i < n; i++) {
		if (!t[i].shown)
			continue;
		kaas_kw_i16(w, t[i].err);
		kaas_kw_strn(w, 1, t[i].name.p, t[i].name.len);
		kaas_kw_raw(w, zero_id, sizeof(zero_id));
		kaas_kw_i8(w, 0); /* is_internal */
		write_partitions(w, req->broker, &t[i]);
		/* topic_authorized_operations: always filled in, as Kafka (the
		 * request has no flag for it); not for a topic in error */
		kaas_kw_i32(w, t[i].tp && !t[i].err ? kaas_req_topic_ops(req, t[i].name) : INT32_MIN);
		kaas_kw_tags(w, 1);
	}
	if (next.len < 0) {
		kaas_kw_i8(w, -1); /* no next cursor */
	} else {
		kaas_kw_i8(w, 1);
		kaas_kw_strn(w, 1, next.p, next.len);
		kaas_kw_i32(w, next_part);
		kaas_kw_tags(w, 1);
	}
	kaas_kw_tags(w, 1);
}

/* The topics to answer, sorted by name, duplicates dropped: those asked
 * (nt > 0, names already in t[].name), else every listed topic the
 * principal may DESCRIBE (ACLs hide the others, as in Metadata).  Returns
 * their count, or -1 (out of memory). */
static int32_t gather(struct kaas_req *req, struct dtp_topic **t, int32_t nt)
{
	if (nt == 0) {
		int k = 0, kept = 0;
		struct kaas_topic **list = kaas_topics_list(req->broker->topics, &k);
		free(*t);
		*t = list ? calloc((size_t)k + 1, sizeof(**t)) : NULL;
		for (int i = 0; i < k; i++) {
			const char *nm = list[i]->name;
			if (*t && kaas_req_allowed(req, KAAS_OP_DESCRIBE, KAAS_RES_TOPIC, nm,
						   strlen(nm))) {
				(*t)[kept].tp = list[i];
				(*t)[kept++].name = (struct kaas_kslice){ (const uint8_t *)nm,
									  (int32_t)strlen(nm) };
			} else {
				kaas_topic_put(list[i]);
			}
		}
		free(list);
		nt = *t ? kept : -1;
	}
	if (nt <= 0)
		return nt;
	qsort(*t, (size_t)nt, sizeof(**t), by_name);
	int32_t k = 0;
	for (int32_t i = 0; i < nt; i++) {
		if (k > 0 && by_name(&(*t)[k - 1], &(*t)[i]) == 0) {
			kaas_topic_put((*t)[i].tp);
			continue;
		}
		(*t)[k++] = (*t)[i];
	}
	return k;
}

int kaas_api_describe_topic_partitions(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	struct dtp_topic *t = NULL;
	int32_t nt = kaas_kr_array_alloc(r, 1, 2, sizeof(*t), (void **)&t);
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		t[i].name = kaas_kr_str(r, 1);
		kaas_kr_tags(r, 1);
	}
	int32_t limit = kaas_kr_i32(r);
	struct kaas_kslice cursor = { NULL, -1 };
	int32_t cursor_part = 0;
	if (kaas_kr_i8(r) >= 0) { /* a cursor */
		cursor = kaas_kr_str(r, 1);
		cursor_part = kaas_kr_i32(r);
		kaas_kr_tags(r, 1);
	}
	kaas_kr_tags(r, 1);
	if (!kaas_kr_ok(r) || nt < 0) {
		free(t);
		return KAAS_REQ_CLOSE;
	}
	int asked = nt > 0;
	for (int32_t i = 0; i < nt; i++) {
		const char *nm = (const char *)t[i].name.p;
		if (!kaas_req_allowed_slice(req, KAAS_OP_DESCRIBE, KAAS_RES_TOPIC, t[i].name))
			t[i].err = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED; /* ACLs */
		else if (!kaas_topic_name_valid(nm, t[i].name.len))
			t[i].err = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		else if (!(t[i].tp = kaas_topics_get(b->topics, nm, t[i].name.len)))
			t[i].err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
		else if (t[i].tp->offline)
			t[i].err = KAAS_KERR_KAFKA_STORAGE_ERROR;
	}
	if ((nt = gather(req, &t, nt)) < 0)
		return KAAS_REQ_CLOSE;
	int cursor_asked = !asked || cursor.len < 0;
	for (int32_t i = 0; i < nt && !cursor_asked; i++)
		cursor_asked = slice_cmp(t[i].name, cursor) == 0;
	if (limit > MAX_PARTITIONS)
		limit = MAX_PARTITIONS;
	if (limit < 1)
		limit = 1;
	struct kaas_kslice next = { NULL, -1 };
	int32_t next_part = 0;
	if (!cursor_asked || cursor_part < 0) {
		/* "the cursor topic is not in the requested topics": every
		 * topic refused */
		for (int32_t i = 0; i < nt; i++) {
			t[i].err = KAAS_KERR_INVALID_REQUEST;
			t[i].shown = 1;
		}
	} else {
		plan(t, nt, cursor, cursor_part, limit, &next, &next_part);
	}
	write_answer(req, t, nt, next, next_part);
	for (int32_t i = 0; i < nt; i++)
		kaas_topic_put(t[i].tp);
	free(t);
	return KAAS_REQ_RESPOND;
}
