/*
 * api_partition_admin.c — the partition APIs of the admin tools, answered
 * by the broker that leads each partition (another one's partition is
 * NOT_LEADER_OR_FOLLOWER, as for Produce; the clients send each partition
 * to its leader):
 *   DeleteRecords 0..2 (2+ flexible): move the log start (kaas_log_delete_
 *     records; -1 means the high watermark); past the high watermark or
 *     below -1 is OFFSET_OUT_OF_RANGE.
 *   OffsetForLeaderEpoch 0..4 (4+): the end offset of a leader epoch, from
 *     the epochs stamped in the segment names (kaas_log_epoch_end), after
 *     the current-leader-epoch check of v2+ (FENCED_LEADER_EPOCH /
 *     UNKNOWN_LEADER_EPOCH).
 *   DescribeProducers 0: the producer state the log keeps (the last
 *     sequence, the first offset of an open transaction, and the
 *     coordinator epoch of its last marker, -1 none: what an admin's
 *     abort of a hanging transaction sends back in WriteTxnMarkers).
 * Work queue (DeleteRecords writes the manifest).
 */
#include <errno.h>
#include <stdlib.h>

#include "broker/broker.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/status_map.h"
#include "kafka/wire_cluster.h"
#include "kafka/wire_topics.h"
#include "util/logger.h"
#include "util/status.h"

/* One partition of any of the three: what was asked and what is answered. */
struct pa_part {
	int32_t index;
	int16_t err;
	int64_t offset;        /* DeleteRecords: asked; then the low watermark.
	                          OffsetForLeaderEpoch: the end offset */
	int32_t current_epoch; /* OffsetForLeaderEpoch: the client's view, -1 none */
	int32_t epoch;         /* OffsetForLeaderEpoch: asked; then the one found */
	struct kaas_log_producer *producers; /* DescribeProducers */
	size_t nproducers;
};

struct pa_topic {
	struct kaas_kslice name;
	int32_t n;
	struct pa_part *parts;
};

static void read_delete_part(struct kaas_kr *r, int16_t v, int flex, void *part)
{
	(void)v, (void)flex;
	struct pa_part *p = part;
	p->index = kaas_kr_i32(r);
	p->offset = kaas_kr_i64(r);
}

static void read_epoch_part(struct kaas_kr *r, int16_t v, int flex, void *part)
{
	(void)flex;
	struct pa_part *p = part;
	p->index = kaas_kr_i32(r);
	p->current_epoch = v >= 2 ? kaas_kr_i32(r) : -1;
	p->epoch = kaas_kr_i32(r);
}

static const struct kaas_wire_topics_shape delete_shape =
	KAAS_WIRE_TOPICS_SHAPE(struct pa_topic, struct pa_part, 12, read_delete_part);
static const struct kaas_wire_topics_shape epoch_shape =
	KAAS_WIRE_TOPICS_SHAPE(struct pa_topic, struct pa_part, 8, read_epoch_part);

/* Run fn on every partition: with its log when this broker leads it, else
 * with the partition's error set.  A topic the principal may not `op`
 * (ACLs) gets TOPIC_AUTHORIZATION_FAILED on every partition, before its
 * existence is looked at, as Kafka answers. */
typedef void part_fn(struct kaas_req *req, struct kaas_kslice topic, struct kaas_log *log,
		     struct pa_part *p);

static void each_part(struct kaas_req *req, struct pa_topic *topics, int32_t nt, int op,
		      part_fn *fn)
{
	struct kaas_broker *b = req->broker;
	for (int32_t i = 0; i < nt; i++) {
		struct pa_topic *t = &topics[i];
		struct kaas_topic *tp = NULL;
		if (!kaas_req_allowed_slice(req, op, KAAS_RES_TOPIC, t->name)) {
			for (int32_t j = 0; j < t->n; j++)
				t->parts[j].err = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED;
			continue;
		}
		if (kaas_topic_name_valid((const char *)t->name.p, t->name.len))
			tp = kaas_topics_get(b->topics, (const char *)t->name.p, t->name.len);
		for (int32_t j = 0; j < t->n; j++) {
			struct kaas_log *log;
			t->parts[j].err = kaas_wire_partition_log(b, tp, t->parts[j].index, &log);
			fn(req, t->name, t->parts[j].err ? NULL : log, &t->parts[j]);
		}
		kaas_topic_put(tp);
	}
}

/* The common end: the request's tagged fields, then the answer (throttle
 * when `throttle`, the topics written by write_part, tagged fields); the
 * topics are freed. */
static int answer(struct kaas_req *req, const struct kaas_wire_topics_shape *s,
		  struct pa_topic *topics, int32_t nt, int throttle,
		  void (*write_part)(struct kaas_kw *w, struct kaas_kslice topic, const void *part,
				     void *arg))
{
	KAAS_REQ_IO(req);
	if (throttle)
		kaas_kw_i32(w, 0);
	kaas_wire_write_topics(w, f, s, topics, nt, write_part, req);
	kaas_kw_tags(w, f);
	kaas_wire_topics_free(topics, nt, s);
	return KAAS_REQ_RESPOND;
}

/* ------------------------------------------------------------ DeleteRecords */

static void delete_one(struct kaas_req *req, struct kaas_kslice topic, struct kaas_log *log,
		       struct pa_part *p)
{
	(void)req;
	if (!log) {
		p->offset = -1;
		return;
	}
	int64_t to = p->offset == -1 ? kaas_log_high_watermark(log) : p->offset;
	int rc = to < 0 ? -ERANGE : kaas_log_delete_records(log, to);
	if (rc == -ERANGE) {
		p->err = KAAS_KERR_OFFSET_OUT_OF_RANGE;
	} else if (rc < 0) {
		kaas_warn("delete records %.*s/%d before %lld: %s", topic.len, (const char *)topic.p,
			  p->index, (long long)to, kaas_strerror(rc));
		p->err = kaas_kafka_error(rc, KAAS_KERR_KAFKA_STORAGE_ERROR);
	}
	p->offset = p->err ? -1 : kaas_log_start_offset(log);
}

static void write_delete_part(struct kaas_kw *w, struct kaas_kslice topic, const void *part,
			      void *arg)
{
	(void)topic, (void)arg;
	const struct pa_part *p = part;
	kaas_kw_i32(w, p->index);
	kaas_kw_i64(w, p->offset); /* low watermark */
	kaas_kw_i16(w, p->err);
}

int kaas_api_delete_records(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	void *arr = NULL;
	int32_t nt = kaas_wire_read_topics(r, v, f, &delete_shape, &arr);
	(void)kaas_kr_i32(r); /* timeout: the deletion is done before the answer */
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || nt < 0) {
		kaas_wire_topics_free(arr, nt, &delete_shape);
		return KAAS_REQ_CLOSE;
	}
	each_part(req, arr, nt, KAAS_OP_DELETE, delete_one);
	return answer(req, &delete_shape, arr, nt, 1, write_delete_part);
}

/* ------------------------------------------------------------ OffsetForLeaderEpoch */

static void epoch_one(struct kaas_req *req, struct kaas_kslice topic, struct kaas_log *log,
		      struct pa_part *p)
{
	(void)req, (void)topic;
	int32_t asked = p->epoch;
	p->epoch = -1;
	p->offset = -1;
	if (!log)
		return;
	int32_t ours = (int32_t)kaas_log_epoch(log);
	if (p->current_epoch >= 0 && p->current_epoch < ours)
		p->err = KAAS_KERR_FENCED_LEADER_EPOCH;
	else if (p->current_epoch > ours)
		p->err = KAAS_KERR_UNKNOWN_LEADER_EPOCH;
	else
		(void)kaas_log_epoch_end(log, asked, &p->epoch, &p->offset); /* -1s: unknown */
}

static void write_epoch_part(struct kaas_kw *w, struct kaas_kslice topic, const void *part,
			     void *arg)
{
	(void)topic;
	const struct pa_part *p = part;
	const struct kaas_req *req = arg;
	kaas_kw_i16(w, p->err);
	kaas_kw_i32(w, p->index);
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, p->epoch);
	kaas_kw_i64(w, p->offset);
}

int kaas_api_offset_for_leader_epoch(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	if (v >= 3)
		(void)kaas_kr_i32(r); /* replica id: kaas has no followers */
	void *arr = NULL;
	int32_t nt = kaas_wire_read_topics(r, v, f, &epoch_shape, &arr);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || nt < 0) {
		kaas_wire_topics_free(arr, nt, &epoch_shape);
		return KAAS_REQ_CLOSE;
	}
	each_part(req, arr, nt, KAAS_OP_DESCRIBE, epoch_one);
	return answer(req, &epoch_shape, arr, nt, v >= 2, write_epoch_part);
}

/* ------------------------------------------------------------ DescribeProducers */

static void producers_one(struct kaas_req *req, struct kaas_kslice topic, struct kaas_log *log,
			  struct pa_part *p)
{
	(void)req, (void)topic;
	if (log && kaas_log_producers(log, &p->producers, &p->nproducers) < 0)
		p->err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
}

static void write_producers_part(struct kaas_kw *w, struct kaas_kslice topic, const void *part,
				 void *arg)
{
	(void)topic, (void)arg;
	const struct pa_part *p = part;
	kaas_kw_i32(w, p->index);
	kaas_kw_i16(w, p->err);
	kaas_kw_str(w, 1, kaas_wire_partition_why(p->err));
	kaas_kw_array(w, 1, (int32_t)p->nproducers);
	for (size_t i = 0; i < p->nproducers; i++) {
		const struct kaas_log_producer *s = &p->producers[i];
		kaas_kw_i64(w, s->producer_id);
		kaas_kw_i32(w, s->epoch);
		kaas_kw_i32(w, s->n ? s->batches[s->n - 1].last_seq : -1);
		kaas_kw_i64(w, s->last_timestamp);
		kaas_kw_i32(w, s->coordinator_epoch); /* of its last marker here */
		kaas_kw_i64(w, s->txn_first_offset); /* its open transaction's start, -1 */
		kaas_kw_tags(w, 1);
	}
	free(p->producers);
}

/* DescribeProducers asks topics[name, partition_indexes[int32]]: read
 * into the shape of the others (partitions with their index). */
static int32_t read_index_topics(struct kaas_kr *r, struct pa_topic **out)
{
	int32_t nt = kaas_kr_array_alloc(r, 1, 3, sizeof(**out), (void **)out);
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		struct pa_topic *t = &(*out)[i];
		t->name = kaas_kr_str(r, 1);
		int32_t np = kaas_kr_array_alloc(r, 1, 4, sizeof(*t->parts), (void **)&t->parts);
		t->n = np > 0 && t->parts ? np : 0;
		for (int32_t j = 0; j < t->n; j++)
			t->parts[j].index = kaas_kr_i32(r);
		kaas_kr_tags(r, 1);
	}
	return nt;
}

int kaas_api_describe_producers(struct kaas_req *req)
{
	struct pa_topic *topics = NULL;
	int32_t nt = read_index_topics(&req->r, &topics);
	kaas_kr_tags(&req->r, 1);
	if (!kaas_kr_ok(&req->r) || nt < 0) {
		kaas_wire_topics_free(topics, nt, &delete_shape);
		return KAAS_REQ_CLOSE;
	}
	each_part(req, topics, nt, KAAS_OP_READ, producers_one);
	return answer(req, &delete_shape, topics, nt, 1, write_producers_part);
}
