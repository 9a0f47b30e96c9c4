/*
 * api_produce.c — Produce 3..11 (9+ flexible); 0..2 (the pre-0.11 message
 * formats) are answered UNSUPPORTED_VERSION on every partition.
 *
 * The loop parses the request and looks its topics up; validation (batch.h:
 * CRC, sizes, decompression) and the appends run on each partition's
 * produce lane (broker/lanes.h): one item per partition of the request,
 * queued in arrival order on that partition's lane, so a partition's
 * batches are checked and appended in the order the requests arrived,
 * while partitions go on independently: neither the CPU of decompression
 * nor one log's back-pressure (kaas_log_append_nowait: the lane parks
 * until the log has room) stalls the network loop or other partitions.  A
 * partition's batches are appended only if every one of them is valid.
 * A retry of a batch still in flight (an idempotent duplicate) is answered
 * through a completion (kaas_log_when_durable) once the original is
 * durable: no thread waits for it.
 * acks=0: appended and not answered; acks=1 and -1: answered once the log's
 * group-committed fsync covering every batch of the request completed (the
 * log calls back on its I/O pool; completions come back to the loop
 * through kaas_broker_complete, as does the last lane item's "all
 * submitted").
 *
 * Errors of the append path, as a client must read them:
 *   KAFKA_STORAGE_ERROR      the log is failed (or failed during the
 *                            checks): the batch was NOT written.  Answered
 *                            before any sequence rule (kaas_idem_check).
 *   REQUEST_TIMED_OUT        the batch was queued and its write or fsync
 *                            failed: it MAY be on the volume (a re-open
 *                            recovers what is valid by CRC).  Retried with
 *                            the same sequence it is either answered as a
 *                            duplicate with its original offset or appended
 *                            — exactly one copy either way.
 *                            Also a queued append a newer leader fenced
 *                            (it was written before the fence check).
 *   NOT_LEADER_OR_FOLLOWER   a newer leader fenced the log before the
 *                            batch was queued: not written.
 *   NOT_ENOUGH_REPLICAS      a sequence gap (KAAS_ESEQGAP): an earlier
 *                            batch of the producer is missing; not written,
 *                            retry.
 */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/idempotence.h"
#include "broker/txn/verify.h"
#include "broker/agent.h"
#include "util/logger.h"
#include "kafka/authz.h"
#include "kafka/batch.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/req_metrics.h"
#include "kafka/throttle.h"
#include "cluster/quota_store.h"
#include "util/metrics.h"
#include "kafka/status_map.h"
#include "kafka/wire_topics.h"
#include "util/status.h"

struct produce_ctx;
struct pt;

struct pp {                       /* one partition of the request */
	int32_t index;
	struct kaas_kslice records;
	int16_t err;              /* set on the loop before, or the lane during, the item */
	int16_t sync_err;         /* set on the loop by a failed append completion */
	int64_t base_offset;
	int64_t log_start;
	/* Its lane item (the partition's lane, while queued or parked). */
	struct kaas_lane_item item;
	struct produce_ctx *ctx;
	struct pt *t;
	size_t pos;               /* the next batch to check and append */
	bool started;             /* validated, log_start read */
	bool have_base;           /* base_offset is the first batch's */
	uint8_t *recompressed;    /* records, recompressed to the topic's
	                             compression.type (owned; NULL: as sent) */
	struct kaas_log_waiter room; /* kaas_log_append_nowait: resumes the lane */
	/* The coordinator check of a transactional batch (verify_txn): the
	 * lane parks, the loop queues the read on the work pool, whose end
	 * resumes the lane; verify_pos is the batch verify_rc answers
	 * (SIZE_MAX: none yet). */
	struct kaas_completion verify_c;
	size_t verify_pos;
	int verify_rc;
};

struct pt {                       /* one topic of the request */
	struct kaas_kslice name;
	int32_t n;
	struct pp *parts;
	struct kaas_topic *topic;       /* referenced while appends are pending */
};

static void read_part(struct kaas_kr *r, int16_t v, int flex, void *part)
{
	(void)v;
	struct pp *p = part;
	p->index = kaas_kr_i32(r);
	p->records = kaas_kr_nbytes(r, flex);
}

static const struct kaas_wire_topics_shape produce_shape =
	KAAS_WIRE_TOPICS_SHAPE(struct pt, struct pp, 8, read_part);

struct produce_ctx {
	struct kaas_req *req;
	struct kaas_kslice txn_id;      /* transactional_id (len -1: null) */
	int16_t acks;
	int32_t nt;
	struct pt *topics;
	struct kaas_completion submitted_c; /* lanes -> loop: all appends queued */
	atomic_uint items_left;         /* lane items not done yet */
	atomic_uint submitted;          /* completions to wait for (lanes, then read on loop) */
	unsigned completed;             /* their completions seen (loop) */
	int worker_done;                /* loop: every lane item is done */
};

struct pcomp {
	struct kaas_completion c;
	struct produce_ctx *ctx;
	struct pp *part;
	struct kaas_partition *kp;
	int64_t result;
	bool dup;                       /* a retry's wait for its original */
	struct kaas_log_waiter w;       /* kaas_log_when_durable */
};

static void ctx_free(void *arg)
{
	struct produce_ctx *ctx = arg;
	if (!ctx)
		return;
	for (int32_t i = 0; i < ctx->nt; i++) {
		kaas_topic_put(ctx->topics[i].topic);
		for (int32_t j = 0; ctx->topics[i].parts && j < ctx->topics[i].n; j++)
			free(ctx->topics[i].parts[j].recompressed);
	}
	kaas_wire_topics_free(ctx->topics, ctx->nt, &produce_shape);
	free(ctx);
}

/* The error_message of a partition's answer (v8+), for the codes whose
 * Kafka name alone would mislead; NULL for the others. */
static const char *error_message(int16_t err)
{
	switch (err) {
	case KAAS_KERR_REQUEST_TIMED_OUT:
		return "the batch may be in the log (its write failed after it was queued, or "
		       "is not durable yet): retry it with the same producer epoch and sequence";
	case KAAS_KERR_NOT_ENOUGH_REPLICAS:
		return "sequence gap: an earlier batch of this producer is not in the log; "
		       "not written, retry after that batch";
	case KAAS_KERR_KAFKA_STORAGE_ERROR:
		return "the partition's log failed: not written";
	default:
		return NULL;
	}
}

static void write_part(struct kaas_kw *w, struct kaas_kslice topic, const void *part, void *arg)
{
	struct kaas_req *req = arg;
	const struct pp *p = part;
	int16_t v = req->hdr.api_version;
	int16_t err = p->err ? p->err : p->sync_err;
	if (kaas_metrics_enabled()) /* no batch walk without the endpoint */
		kaas_req_metric_part(req, 1, topic.p, topic.len, err, p->records.len,
				     kaas_records_count(p->records.p, p->records.len));
	kaas_kw_i32(w, p->index);
	kaas_kw_i16(w, err);
	kaas_kw_i64(w, err ? -1 : p->base_offset);
	if (v >= 2)
		kaas_kw_i64(w, -1); /* log_append_time_ms: CreateTime */
	if (v >= 5)
		kaas_kw_i64(w, p->log_start);
	if (v >= 8) {
		kaas_kw_array(w, req->hdr.flex, 0);                 /* record_errors */
		kaas_kw_str(w, req->hdr.flex, error_message(err)); /* error_message */
	}
	/* current_leader (v10+, tagged): not sent */
}

static void respond_body(struct produce_ctx *ctx)
{
	struct kaas_req *req = ctx->req;
	KAAS_REQ_IO(req);
	kaas_wire_write_topics(w, f, &produce_shape, ctx->topics, ctx->nt, write_part, req);
	if (v >= 1) /* producer_byte_rate: the request's size (kafka/throttle.h) */
		kaas_kw_i32(w, kaas_req_throttle(req, KAAS_QK_PRODUCER_BYTE_RATE,
						 (double)req->frame_len));
	kaas_kw_tags(w, f); /* node_endpoints (v10+): not sent */
}

static void respond(struct produce_ctx *ctx)
{
	if (atomic_load(&ctx->submitted) && kaas_idem_drop_response()) {
		kaas_warn("test knob: dropping the response to a produce request");
		kaas_req_finish(ctx->req, KAAS_REQ_CLOSE);
		return;
	}
	respond_body(ctx);
	kaas_req_finish(ctx->req, KAAS_REQ_RESPOND);
}

/* Loop thread: one append completed. */
static void on_complete(struct kaas_completion *c)
{
	struct pcomp *pc = (struct pcomp *)c;
	struct produce_ctx *ctx = pc->ctx;
	if (pc->result < 0 && pc->dup) {
		/* The original of a retry failed: its bytes may be on the
		 * volume (as for the original itself, below), so the retry
		 * is "possibly persisted" too (broker/idempotence.h), never
		 * "not persisted", which lets a client renumber; the
		 * original's own completion marks the partition failed. */
		pc->part->sync_err = kaas_kafka_error(KAAS_EINDOUBT, 0);
	} else if (pc->result < 0) {
		kaas_error("append to partition %d failed: %s", pc->part->index,
			   kaas_strerror((int)pc->result));
		/* The batch was queued, so its bytes may be on the volume
		 * (a failed fsync, a write that failed part-way) and a later
		 * open may recover them.  Say "possibly persisted": a client
		 * then retries the very batch (same producer epoch and
		 * sequence) and the idempotence check answers it with the
		 * original offset if it was recovered.  KAFKA_STORAGE_ERROR
		 * would mean "not persisted": librdkafka may then bump its
		 * epoch and renumber the messages, and a recovered copy
		 * would be duplicated.
		 * A fenced append too: it was written before the fence
		 * check, and the new leader may have recovered it — so not
		 * NOT_LEADER_OR_FOLLOWER, which librdkafka reads as "not
		 * persisted" (the retry then goes to the new leader anyway,
		 * after this broker answers the next try NOT_LEADER). */
		pc->part->sync_err = kaas_kafka_error(KAAS_EINDOUBT, 0);
		if (pc->result != KAAS_LOG_EFENCED)
			kaas_partition_mark_failed(pc->kp);
	}
	free(pc);
	ctx->completed++;
	if (ctx->worker_done && ctx->completed == atomic_load(&ctx->submitted))
		respond(ctx);
}

/* Loop thread: the lanes have queued every append of the request. */
static void on_submitted(struct kaas_completion *c)
{
	struct produce_ctx *ctx = (struct produce_ctx *)((char *)c -
							 offsetof(struct produce_ctx, submitted_c));
	ctx->worker_done = 1;
	if (ctx->acks == 0) {
		/* No answer to carry it, but the connection is muted all the same. */
		(void)kaas_req_throttle(ctx->req, KAAS_QK_PRODUCER_BYTE_RATE,
					(double)ctx->req->frame_len);
		kaas_req_finish(ctx->req, KAAS_REQ_NO_RESPONSE);
	} else if (ctx->completed == atomic_load(&ctx->submitted))
		respond(ctx);
}

/* Log I/O pool (or a thread rolling the log): an append, or a retry's
 * original, is durable or failed. */
static void on_appended(void *arg, int64_t result)
{
	struct pcomp *pc = arg;
	pc->result = result;
	kaas_broker_complete(pc->ctx->req->broker, &pc->c);
}

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* append_partition: the log has no room now; the lane parks the item.
 * Outside every Kafka error code (UNKNOWN_SERVER_ERROR is -1). */
#define PARKED INT16_MIN

static struct pcomp *pcomp_new(struct produce_ctx *ctx, struct pp *p, struct kaas_partition *kp)
{
	struct pcomp *pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->c.fn = on_complete;
	pc->ctx = ctx;
	pc->part = p;
	pc->kp = kp;
	return pc;
}

/* The log has room again (or failed): the lane runs the parked item. */
static void on_room(void *arg, int64_t result)
{
	(void)result; /* the item's next try sees a failure itself */
	kaas_lane_resume(arg);
}

/* Work pool: read the coordinator's record for the batch at p->pos. */
static void verify_work(void *arg)
{
	struct pp *p = arg;
	struct produce_ctx *ctx = p->ctx;
	const uint8_t *bb = p->records.p + p->pos;
	p->verify_rc = kaas_txn_verify_partition(
		ctx->req->broker->cluster, (const char *)ctx->txn_id.p, (size_t)ctx->txn_id.len,
		(int64_t)(((uint64_t)be32(bb + 43) << 32) | be32(bb + 47)),
		(int16_t)((bb[51] << 8) | bb[52]), (const char *)p->t->name.p,
		(size_t)p->t->name.len, p->index);
}

/* Loop: the read is done (status < 0: it never ran); the lane goes on. */
static void verify_done(void *arg, int status)
{
	struct pp *p = arg;
	if (status < 0)
		p->verify_rc = -EAGAIN;
	p->verify_pos = p->pos;
	kaas_lane_resume(p->t->topic->parts[p->index].lane);
}

/* Loop: queue the read (the work pool is the loop's to use). */
static void verify_queue(struct kaas_completion *c)
{
	struct pp *p = (struct pp *)((char *)c - offsetof(struct pp, verify_c));
	int rc = kaas_pool_queue(p->ctx->req->broker, verify_work, verify_done, p);
	if (rc < 0)
		verify_done(p, rc);
}

/* Lane thread: may the transactional batch lb at p->pos be appended
 * (KIP-890 part 1, broker/txn/verify.h)?  Only a batch that would open a
 * transaction of its producer here is checked with the coordinator's
 * record on the volume: the log (with the batches in flight folded in) has
 * none open for it, or one of another epoch.  A batch inside an open
 * transaction costs no read.  The read does not hold the lane's thread:
 * the item parks (PARKED) while the work pool reads, and runs this batch
 * again with the answer.  Without a transactional id in the request there
 * is no record to check (as Kafka, which verifies only requests that name
 * one).  0, PARKED, or the Kafka error: INVALID_PRODUCER_EPOCH (fenced),
 * INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE (the partition was never
 * added, or no transaction is under way), NOT_ENOUGH_REPLICAS (retriable:
 * the transaction is completing, or the document could not be read);
 * nothing appended. */
static int16_t verify_txn(struct produce_ctx *ctx, struct pp *p, struct kaas_log *log,
			  const struct kaas_log_batch *lb)
{
	struct kaas_broker *b = ctx->req->broker;
	if (!b->cfg.txn_verify || ctx->txn_id.len <= 0)
		return 0;
	struct kaas_log_producer st;
	int rc = kaas_log_producer_pending(log, lb->producer_id, &st);
	if (rc == 0 && st.txn_first_offset >= 0 && st.epoch == lb->producer_epoch)
		return 0; /* inside its open transaction */
	if (rc < 0 && rc != -ENOENT)
		return kaas_kafka_error(rc, KAAS_KERR_KAFKA_STORAGE_ERROR);
	if (p->verify_pos != p->pos) {
		p->verify_pos = SIZE_MAX;
		p->verify_c.fn = verify_queue;
		kaas_broker_complete(b, &p->verify_c);
		return PARKED; /* verify_done resumes the lane: this batch again */
	}
	p->verify_pos = SIZE_MAX;
	rc = p->verify_rc;
	if (rc == 0)
		return 0;
	kaas_info("partition %d: transactional batch of producer %lld epoch %d not verified "
		  "with transactional id %.*s: %s", p->index, (long long)lb->producer_id,
		  lb->producer_epoch, ctx->txn_id.len, (const char *)ctx->txn_id.p,
		  kaas_strerror(rc));
	switch (rc) {
	case KAAS_ETXN_FENCED:
		return KAAS_KERR_INVALID_PRODUCER_EPOCH;
	case KAAS_ETXN_PID_MAPPING:
		return KAAS_KERR_INVALID_PRODUCER_ID_MAPPING;
	case KAAS_ETXN_STATE:
		return KAAS_KERR_INVALID_TXN_STATE;
	default: /* completing, or unreadable: not written, retry (as Kafka) */
		return KAAS_KERR_NOT_ENOUGH_REPLICAS;
	}
}

/* Lane thread: check and append the partition's batches from p->pos on.
 * 0 when all are queued, a Kafka error code, or PARKED (the log's pending
 * bytes are at their limit: p->pos is the batch to try again, after
 * on_room resumed the lane). */
static int16_t append_partition(struct produce_ctx *ctx, struct kaas_partition *kp, struct pp *p)
{
	struct kaas_log *log = kp->log;
	const uint8_t *buf = p->records.p;
	size_t len = (size_t)p->records.len;
	while (p->pos < len) {
		const uint8_t *bb = buf + p->pos;
		size_t blen = (size_t)be32(bb + 8) + 12;
		struct kaas_log_batch lb = {
			.data = bb,
			.len = blen,
			.record_count = be32(bb + 23) + 1,
			.max_timestamp = (int64_t)(((uint64_t)be32(bb + 35) << 32) | be32(bb + 39)),
			.producer_id = (int64_t)(((uint64_t)be32(bb + 43) << 32) | be32(bb + 47)),
			.producer_epoch = (int16_t)((bb[51] << 8) | bb[52]),
			.base_sequence = (int32_t)be32(bb + 53),
		};
		/* Markers are the log's own (kaas_log_append_marker); a
		 * transaction needs a producer id.  The log records a
		 * transactional batch as its producer's open transaction. */
		uint16_t attrs = (uint16_t)((bb[21] << 8) | bb[22]);
		if ((attrs & KAAS_BATCH_ATTR_CONTROL) ||
		    ((attrs & KAAS_BATCH_ATTR_TRANSACTIONAL) && lb.producer_id < 0))
			return KAAS_KERR_INVALID_RECORD;
		int64_t dup = -1;
		/* A failed log is answered here too, before any sequence rule. */
		int ic = kaas_idem_check(log, &lb, &dup);
		/* A failed log's -errno: not written, the log failed. */
		int16_t ierr = kaas_kafka_error(ic, KAAS_KERR_KAFKA_STORAGE_ERROR);
		if (ic == KAAS_ESEQORDER || ic == KAAS_EPRODUNKNOWN || ic == KAAS_EPRODFENCED ||
		    ic == KAAS_ESEQGAP)
			/* Rare, and a client may answer it by renumbering its
			 * messages under a new epoch: worth a line. */
			kaas_info("partition %d: producer %lld epoch %d batch seq %d (%d records) refused: error %d",
				  p->index, (long long)lb.producer_id, lb.producer_epoch, lb.base_sequence,
				  (int)lb.record_count, ierr);
		if (ic < 0)
			return ierr;
		if (ic == KAAS_IDEM_APPEND && (attrs & KAAS_BATCH_ATTR_TRANSACTIONAL)) {
			int16_t verr = verify_txn(ctx, p, log, &lb);
			if (verr)
				return verr;
		}
		if (ic == KAAS_IDEM_DUPLICATE) {
			/* Already in the log: answered with its original offset
			 * once that is durable — a completion, not a wait. */
			if (ctx->acks != 0) {
				struct pcomp *pc = pcomp_new(ctx, p, kp);
				if (!pc)
					return KAAS_KERR_UNKNOWN_SERVER_ERROR;
				pc->dup = true;
				pc->w.cb = on_appended;
				pc->w.arg = pc;
				int w = kaas_log_when_durable(log, dup, &pc->w);
				if (w == 0) {
					atomic_fetch_add(&ctx->submitted, 1);
				} else {
					free(pc);
					if (w == -ERANGE) /* not found: cannot say it is durable */
						return kaas_kafka_error(KAAS_EINDOUBT, 0);
					if (w < 0) /* the log failed: the original may be on the volume */
						return kaas_kafka_error(KAAS_EINDOUBT, 0);
				}
			}
			if (!p->have_base)
				p->base_offset = dup;
			p->have_base = true;
			p->pos += blen;
			continue;
		}
		struct pcomp *pc = NULL;
		if (ctx->acks != 0 && !(pc = pcomp_new(ctx, p, kp)))
			return KAAS_KERR_UNKNOWN_SERVER_ERROR;
		int64_t base = -1;
		p->room.cb = on_room;
		p->room.arg = kp->lane;
		int rc = kaas_log_append_nowait(log, &lb, pc ? on_appended : NULL, pc, &base, &p->room);
		if (rc == KAAS_ENOROOM) {
			free(pc);
			return PARKED; /* on_room resumes the lane: this batch again */
		}
		if (rc < 0) {
			free(pc);
			kaas_warn("append to partition %d failed: %s", p->index, kaas_strerror(rc));
			if (rc != -EFBIG && rc != -EINVAL && rc != KAAS_LOG_EFENCED && rc != -ENOMEM)
				kaas_partition_mark_failed(kp);
			return rc == -EFBIG ? KAAS_KERR_MESSAGE_TOO_LARGE
					    : kaas_kafka_error(rc, KAAS_KERR_KAFKA_STORAGE_ERROR);
		}
		if (pc)
			atomic_fetch_add(&ctx->submitted, 1);
		if (!p->have_base)
			p->base_offset = base;
		p->have_base = true;
		p->pos += blen;
	}
	return 0;
}

/* Queue creation of an unknown topic produced to (answered as unknown now;
 * the client retries after its metadata refresh). */
struct create_job {
	struct kaas_broker *b;
	char *name;
};

static void create_work(void *arg)
{
	struct create_job *j = arg;
	(void)kaas_topics_create(j->b->topics, j->name, j->b->cfg.num_partitions, 0, NULL);
}

static void create_done(void *arg, int status)
{
	struct create_job *j = arg;
	free(j->name);
	free(j);
}

static void auto_create(struct kaas_broker *b, struct kaas_kslice name)
{
	if (!b->cfg.auto_create || b->draining)
		return;
	struct create_job *j = malloc(sizeof(*j));
	char *s = kaas_kslice_dup(name);
	if (!j || !s) {
		free(j);
		free(s);
		return;
	}
	j->b = b;
	j->name = s;
	if (kaas_pool_queue(b, create_work, create_done, j) < 0)
		create_done(j, 0);
}

/* Lane thread, after validation: the partition's batches in the topic's
 * compression.type (issue 33: Kafka recompresses a batch in another codec
 * on append; "producer" keeps them as sent).  The new record set is
 * validated as a produced one would be (max.message.bytes applies to the
 * batch as stored).  0 or a Kafka error code. */
static int16_t recompress(struct pt *t, struct pp *p, size_t max)
{
	int64_t codec = kaas_topic_setting(t->topic, compression);
	if (codec < 0 || !kaas_batch_needs_recompress(p->records.p, (size_t)p->records.len, (int)codec))
		return 0;
	uint8_t *nb = NULL;
	size_t nl = 0;
	struct kaas_batch_summary sum;
	const char *why = "out of memory";
	int rc = kaas_batch_recompress(p->records.p, (size_t)p->records.len, (int)codec, &nb, &nl);
	int16_t e = rc < 0 || nl > INT32_MAX ? KAAS_KERR_UNKNOWN_SERVER_ERROR
					      : (int16_t)kaas_batch_validate(nb, nl, max, &sum, &why);
	if (rc < 0 || e) {
		kaas_warn("produce to %.*s/%d: recompressing for compression.type failed (error %d): %s",
			  t->name.len, (const char *)t->name.p, p->index, e,
			  rc < 0 ? kaas_strerror(rc) : why);
		free(nb);
		return e ? e : KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
	assert(!p->recompressed);
	p->recompressed = nb;
	p->records.p = nb;
	p->records.len = (int32_t)nl;
	return 0;
}

/* Lane thread: validate the partition's batches (once), then append them.
 * The topic is referenced by the request, so its log stays open. */
static int part_run(struct kaas_lane_item *it)
{
	struct pp *p = (struct pp *)((char *)it - offsetof(struct pp, item));
	struct produce_ctx *ctx = p->ctx;
	struct pt *t = p->t;
	struct kaas_partition *kp = &t->topic->parts[p->index];
	if (!p->started) {
		p->started = true;
		struct kaas_batch_summary sum;
		const char *why = NULL;
		/* max.message.bytes of the topic (its override, else the
		 * broker's message.max.bytes) */
		size_t max = (size_t)kaas_topic_setting(t->topic, max_message_bytes);
		int16_t e = (int16_t)kaas_batch_validate(p->records.p, (size_t)p->records.len, max,
							 &sum, &why);
		if (e) {
			kaas_warn("produce to %.*s/%d rejected (error %d): %s", t->name.len,
				  (const char *)t->name.p, p->index, e, why);
			p->err = e;
			goto done;
		}
		int16_t rerr = recompress(t, p, max);
		if (rerr) {
			p->err = rerr;
			goto done;
		}
		p->log_start = kaas_log_start_offset(kp->log);
	}
	int16_t r = append_partition(ctx, kp, p);
	if (r == PARKED)
		return KAAS_LANE_PARK;
	p->err = r;
done:
	/* The last item tells the loop; after that neither p nor ctx is ours. */
	if (atomic_fetch_sub(&ctx->items_left, 1) == 1)
		kaas_broker_complete(ctx->req->broker, &ctx->submitted_c);
	return KAAS_LANE_DONE;
}

void kaas_api_produce(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	struct produce_ctx *ctx = kaas_req_ctx_new(req, sizeof(*ctx), ctx_free);
	if (!ctx)
		return;
	ctx->req = req;
	struct kaas_kslice txn_id = { NULL, -1 };
	if (v >= 3)
		txn_id = kaas_kr_nstr(r, f); /* transactional_id */
	ctx->txn_id = txn_id;
	ctx->acks = kaas_kr_i16(r);
	(void)kaas_kr_i32(r); /* timeout_ms */
	void *arr;
	int32_t nt = kaas_wire_read_topics(r, v, f, &produce_shape, &arr);
	ctx->topics = arr;
	ctx->nt = arr ? nt : 0;
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || nt < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (kaas_wire_topics_refused(req, ctx->topics, ctx->nt, &produce_shape)) {
		/* the pre-0.11 message formats */
		ctx->worker_done = 1;
		if (ctx->acks == 0)
			kaas_req_finish(req, KAAS_REQ_NO_RESPONSE);
		else
			respond(ctx);
		return;
	}
	int acks_ok = ctx->acks == 0 || ctx->acks == 1 || ctx->acks == -1;
	int work = 0;
	for (int32_t i = 0; i < ctx->nt; i++) {
		struct pt *t = &ctx->topics[i];
		int16_t terr = 0;
		if (!acks_ok)
			terr = KAAS_KERR_INVALID_REQUIRED_ACKS;
		else if (!kaas_topic_name_valid((const char *)t->name.p, t->name.len))
			terr = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		else if (txn_id.len >= 0 && !kaas_req_allowed_slice(req, KAAS_OP_WRITE,
								   KAAS_RES_TRANSACTIONAL_ID, txn_id))
			terr = KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED; /* ACLs */
		else if (!kaas_req_allowed_slice(req, KAAS_OP_WRITE, KAAS_RES_TOPIC, t->name))
			terr = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED;
		else if (!(t->topic = kaas_topics_get(b->topics, (const char *)t->name.p,
						      t->name.len))) {
			terr = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
			if (kaas_req_may_create_topic(req, (const char *)t->name.p,
						      (size_t)t->name.len))
				auto_create(b, t->name);
		}
		for (int32_t j = 0; j < t->n; j++) {
			struct pp *p = &t->parts[j];
			p->base_offset = -1;
			p->log_start = -1;
			if (terr)
				p->err = terr;
			else if (p->index < 0 || p->index >= t->topic->npart)
				p->err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
			else if (!t->topic->parts[p->index].log)
				p->err = kaas_partition_not_led(&t->topic->parts[p->index])
						 ? KAAS_KERR_NOT_LEADER_OR_FOLLOWER
						 : KAAS_KERR_KAFKA_STORAGE_ERROR;
			else if (kaas_agent_fenced(b->agent))
				p->err = KAAS_KERR_NOT_LEADER_OR_FOLLOWER;
			else if (p->records.len <= 0)
				p->err = KAAS_KERR_INVALID_RECORD; /* no batch: as Kafka */
			else
				work++;
		}
	}
	/* Every partition to append to has a lane (made here, the loop being
	 * the only submitter). */
	for (int32_t i = 0; i < ctx->nt && work; i++) {
		struct pt *t = &ctx->topics[i];
		for (int32_t j = 0; j < t->n; j++) {
			struct pp *p = &t->parts[j];
			if (p->err)
				continue;
			struct kaas_partition *kp = &t->topic->parts[p->index];
			if (!kp->lane && !(kp->lane = kaas_lane_new(b->lanes))) {
				p->err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
				work--;
			}
		}
	}
	if (!work) {
		/* Nothing to append: every partition has its answer already. */
		if (ctx->acks == 0 && acks_ok) {
			kaas_req_finish(req, KAAS_REQ_NO_RESPONSE);
		} else {
			ctx->worker_done = 1;
			respond(ctx);
		}
		return;
	}
	ctx->submitted_c.fn = on_submitted;
	atomic_init(&ctx->submitted, 0);
	atomic_init(&ctx->items_left, (unsigned)work); /* before any item can finish */
	for (int32_t i = 0; i < ctx->nt; i++) {
		struct pt *t = &ctx->topics[i];
		for (int32_t j = 0; j < t->n; j++) {
			struct pp *p = &t->parts[j];
			if (p->err)
				continue;
			p->ctx = ctx;
			p->t = t;
			p->verify_pos = SIZE_MAX;
			p->item.run = part_run;
			kaas_lane_submit(t->topic->parts[p->index].lane, &p->item);
		}
	}
}
