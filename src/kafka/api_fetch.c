/*
 * api_fetch.c — Fetch 4..12 (12 flexible) with long poll; 0..3 (the
 * pre-0.11 message formats) are answered UNSUPPORTED_VERSION at once.
 *
 * Each round reads on the work queue (the log's reads may block on the
 * volume): per partition, in the request's order, whole batches from the
 * fetch offset, bounded by the partition's max_bytes and by what is left of
 * the request's max_bytes (KIP-74).  The one excess: the first batch of the
 * first partition that returns records is sent whole even when larger than
 * both, so a consumer always progresses; every later partition whose next
 * batch does not fit gets no records this time.  max_bytes <= 0 bounds to
 * nothing (that one batch only), as in Kafka.  If the round found fewer
 * than min_bytes, max_wait_ms has not passed and no partition holds more
 * than the round returned (when one does, the bounds or a segment's end
 * stopped the read, and waiting cannot make the answer fuller), the request
 * parks until a log's high watermark moves or the timer fires, then reads
 * again.  A partition whose log holds nothing from the fetch offset up to
 * the high watermark (a cleaned gap at a compacted log's end) is answered
 * an empty batch over the gap (gap_batch).  A fenced broker (kaas_agent_fenced)
 * answers every partition NOT_LEADER_OR_FOLLOWER.
 *
 * Fetch sessions (KIP-227, v7+; kafka/fetch_session.h): a full fetch at
 * epoch 0 gets a new session (created when answering, holding what the
 * answer said of each partition); an incremental one updates the session's
 * partitions from the request, drops its forgotten ones, reads every
 * partition of the session and answers only those with records, an error,
 * or a high watermark, last stable offset or log start other than the
 * session last answered.  The session cache is the loop's.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "util/logger.h"
#include "kafka/authz.h"
#include "kafka/fetch_session.h"
#include "kafka/batch.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/req_metrics.h"
#include "kafka/throttle.h"
#include "cluster/quota_store.h"
#include "kafka/wire_topics.h"
#include "util/grow.h"
#include "util/status.h"

struct fp {
	int32_t index;
	int64_t offset;
	int32_t max_bytes;
	/* round results */
	int16_t err;
	int64_t hw, log_start, lso;
	struct kaas_log_aborted_txn *aborted; /* read_committed: for the records */
	int naborted;
	void *data;                     /* copied records, or NULL */
	size_t len;
	struct kaas_log_slice slice;    /* records left in the segment (zero-copy) */
	int has_slice;
	int gap;                        /* data is gap_batch's empty batch */
	struct kaas_hw_token *token;    /* the partition's, while parked (referenced) */
	/* incremental: what the session last answered of it */
	int64_t prev_hw, prev_lso, prev_log_start;
};

struct ft {
	struct kaas_kslice name;
	int32_t n;
	struct fp *parts;
};

struct fetch_ctx {
	struct kaas_req *req;
	struct kaas_fetch_waiter waiter;
	uv_timer_t timer;
	int timer_live;
	int32_t max_wait, min_bytes, max_bytes;
	int8_t isolation;               /* 1: read_committed */
	int32_t nt;
	struct ft *topics;
	size_t total;
	int errors;
	int in_pool;
	int woken;                      /* data arrived during a pool round */
	int more;                       /* a partition holds more than the round returned */
	int parked;
	uint64_t deadline;
	/* KIP-227 */
	enum { FS_NONE, FS_FULL, FS_INCREMENTAL } session; /* what the answer does */
	int32_t session_id;             /* incremental: the session's */
	int16_t session_err;            /* answered at once, with no partitions */
	char *names;                    /* incremental: the topic names of topics */
};

static void read_part(struct kaas_kr *r, int16_t v, int flex, void *part)
{
	(void)flex;
	struct fp *p = part;
	p->hw = p->log_start = p->lso = -1; /* until a round reads the log */
	p->index = kaas_kr_i32(r);
	if (v >= 9)
		(void)kaas_kr_i32(r); /* current leader epoch */
	p->offset = kaas_kr_i64(r);
	if (v >= 12)
		(void)kaas_kr_i32(r); /* last fetched epoch (followers) */
	if (v >= 5)
		(void)kaas_kr_i64(r); /* log start offset (followers) */
	p->max_bytes = kaas_kr_i32(r);
}

static const struct kaas_wire_topics_shape fetch_shape =
	KAAS_WIRE_TOPICS_SHAPE(struct ft, struct fp, 16, read_part);

static void drop_data(struct fetch_ctx *ctx)
{
	for (int32_t i = 0; i < ctx->nt; i++)
		for (int32_t j = 0; j < ctx->topics[i].n; j++) {
			struct fp *p = &ctx->topics[i].parts[j];
			free(p->data);
			p->data = NULL;
			free(p->aborted);
			p->aborted = NULL;
			p->naborted = 0;
			if (p->has_slice)
				kaas_log_slice_release(&p->slice);
			p->has_slice = 0;
			p->gap = 0;
			p->len = 0;
		}
}

static void free_mem(struct fetch_ctx *ctx)
{
	kaas_wire_topics_free(ctx->topics, ctx->nt, &fetch_shape);
	free(ctx->names);
	free(ctx);
}

static void on_timer_closed(uv_handle_t *h)
{
	free_mem(h->data);
}

static void ctx_free(void *arg)
{
	struct fetch_ctx *ctx = arg;
	if (!ctx)
		return;
	kaas_broker_unpark(&ctx->waiter);
	drop_data(ctx);
	for (int32_t i = 0; i < ctx->nt; i++)
		for (int32_t j = 0; j < ctx->topics[i].n; j++)
			kaas_hw_token_put(ctx->topics[i].parts[j].token);
	if (ctx->timer_live) {
		uv_timer_stop(&ctx->timer);
		uv_close((uv_handle_t *)&ctx->timer, on_timer_closed);
	} else {
		free_mem(ctx);
	}
}

/* The log holds nothing in [p->offset, p->slice.next_offset) (a range a
 * cleaner removed, issue 21, up to the high watermark or the bound): answer
 * an empty batch over it, so that the consumer moves past it (a Fetch
 * without records would leave it there for good).  0 or -ENOMEM. */
static int gap_batch(struct fp *p)
{
	p->data = malloc(KAAS_BATCH_HEADER);
	if (!p->data)
		return -ENOMEM;
	kaas_batch_empty(p->data, p->offset, p->slice.next_offset - 1);
	p->len = KAAS_BATCH_HEADER;
	p->gap = 1;
	return 0;
}

/* Work queue: read every partition. */
static void round_work(void *arg)
{
	struct fetch_ctx *ctx = arg;
	struct kaas_broker *b = ctx->req->broker;
	drop_data(ctx);
	ctx->total = 0;
	ctx->errors = 0;
	ctx->more = 0;
	/* A broker whose last cluster round is older than half the liveness
	 * timeout (paused, cut off from the volume) may no longer lead what
	 * its logs say; its high watermark may be older than the new
	 * leader's, and a client that reads it there sees the watermark go
	 * back (librdkafka keeps the watermark of any Fetch answer, even one
	 * it discards because the partition moved).  It answers
	 * NOT_LEADER_OR_FOLLOWER until a round has applied the assignment
	 * (which closes what it no longer leads). */
	int fenced = kaas_agent_fenced(b->agent);
	for (int32_t i = 0; i < ctx->nt; i++) {
		struct ft *t = &ctx->topics[i];
		struct kaas_topic *tp = NULL;
		int16_t terr = 0;
		if (!kaas_topic_name_valid((const char *)t->name.p, t->name.len))
			terr = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		else if (!kaas_req_allowed_slice(ctx->req, KAAS_OP_READ, KAAS_RES_TOPIC, t->name))
			terr = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED; /* ACLs */
		else if (!(tp = kaas_topics_get(b->topics, (const char *)t->name.p, t->name.len)))
			terr = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
		for (int32_t j = 0; j < t->n; j++) {
			struct fp *p = &t->parts[j];
			p->hw = p->log_start = p->lso = -1;
			p->err = terr;
			if (terr) {
				ctx->errors++;
				continue;
			}
			if (p->index < 0 || p->index >= tp->npart) {
				p->err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
				ctx->errors++;
				continue;
			}
			struct kaas_partition *kp = &tp->parts[p->index];
			if (p->token != kp->token) {
				kaas_hw_token_put(p->token);
				p->token = kaas_hw_token_get(kp->token);
			}
			if (fenced) {
				p->err = KAAS_KERR_NOT_LEADER_OR_FOLLOWER;
				ctx->errors++;
				continue;
			}
			struct kaas_log *log = kp->log;
			if (!log) {
				p->err = kaas_partition_not_led(kp) ? KAAS_KERR_NOT_LEADER_OR_FOLLOWER
								    : KAAS_KERR_KAFKA_STORAGE_ERROR;
				ctx->errors++;
				continue;
			}
			/* The LSO first: it is never above the watermark read after. */
			p->lso = kaas_log_last_stable_offset(log);
			p->hw = kaas_log_high_watermark(log);
			p->log_start = kaas_log_start_offset(log);
			/* read_committed reads below the LSO only. */
			int64_t end = ctx->isolation == 1 ? p->lso : p->hw;
			if (p->offset < p->log_start || p->offset > p->hw) {
				p->err = KAAS_KERR_OFFSET_OUT_OF_RANGE;
				ctx->errors++;
				continue;
			}
			if (p->offset >= end)
				continue;
			/* The bound: what is left of max_bytes, and max_bytes of
			 * the partition; only while no partition before this one
			 * returned records may its first batch exceed it. */
			size_t lim = p->max_bytes > 0 ? (size_t)p->max_bytes : 0;
			size_t left = ctx->max_bytes > 0 && (size_t)ctx->max_bytes > ctx->total
					      ? (size_t)ctx->max_bytes - ctx->total
					      : 0;
			if (left < lim)
				lim = left;
			int first = ctx->total == 0;
			if (lim == 0 && !first) {
				ctx->more = 1;
				continue;
			}
			int rc = kaas_log_read_below(log, p->offset, lim, end, &p->slice);
			if (rc == 0 && p->slice.len > 0 && (first || p->slice.len <= lim)) {
				p->has_slice = 1;
				p->len = p->slice.len;
				/* The consumer's next fetch will read on from here. */
				if (b->cfg.fetch_readahead_bytes)
					kaas_log_slice_readahead(&p->slice,
								 b->cfg.fetch_readahead_bytes);
			} else if (rc == 0) {
				/* nothing, or a first batch larger than the bound */
				kaas_log_slice_release(&p->slice);
				if (p->slice.len == 0 && p->slice.next_offset > p->offset)
					rc = gap_batch(p);
			}
			if (rc == -ERANGE) {
				p->err = KAAS_KERR_OFFSET_OUT_OF_RANGE;
				ctx->errors++;
			} else if (rc < 0) {
				kaas_error("fetch %s/%d at %lld: %s", tp->name, p->index,
					   (long long)p->offset, kaas_strerror(rc));
				p->err = KAAS_KERR_KAFKA_STORAGE_ERROR;
				ctx->errors++;
			} else {
				ctx->total += p->len;
				/* Without a slice, next_offset says how far the log
				 * holds nothing: past a cleaned range's end (issue 21)
				 * there is nothing more to send now. */
				if ((p->has_slice ? p->slice.next_offset
						  : (p->slice.next_offset > p->offset ? p->slice.next_offset
										: p->offset)) < end)
					ctx->more = 1;
				if (p->has_slice && ctx->isolation == 1) {
					int n = kaas_log_aborted_txns(log, p->offset,
								      p->slice.next_offset,
								      &p->aborted);
					p->naborted = n > 0 ? n : 0;
					if (n < 0) {
						p->err = KAAS_KERR_KAFKA_STORAGE_ERROR;
						ctx->errors++;
					}
				}
			}
		}
		kaas_topic_put(tp);
	}
	/* Small responses are copied (here, on the work queue); large ones
	 * keep their slices and go to the socket by sendfile. */
	size_t zmin = b->cfg.zero_copy_min_bytes;
	if (zmin && ctx->total >= zmin)
		return;
	for (int32_t i = 0; i < ctx->nt; i++)
		for (int32_t j = 0; j < ctx->topics[i].n; j++) {
			struct fp *p = &ctx->topics[i].parts[j];
			if (!p->has_slice)
				continue;
			p->data = malloc(p->len);
			ssize_t n = p->data ? kaas_log_slice_pread(&p->slice, p->data, p->len, 0)
					    : -ENOMEM;
			kaas_log_slice_release(&p->slice);
			p->has_slice = 0;
			if (n < 0) {
				kaas_error("fetch %.*s/%d: reading %zu bytes: %s",
					   ctx->topics[i].name.len, (const char *)ctx->topics[i].name.p,
					   p->index, p->len, strerror((int)-n));
				free(p->data);
				p->data = NULL;
				ctx->total -= p->len;
				p->len = 0;
				p->err = KAAS_KERR_KAFKA_STORAGE_ERROR;
				ctx->errors++;
			}
		}
}

/* Has any partition of the request moved past what the last round saw? */
static int moved(struct fetch_ctx *ctx)
{
	for (int32_t i = 0; i < ctx->nt; i++)
		for (int32_t j = 0; j < ctx->topics[i].n; j++) {
			struct fp *p = &ctx->topics[i].parts[j];
			if (!p->token || kaas_hw_token_hw(p->token) > p->hw)
				return 1;
		}
	return 0;
}

/* One partition of the answer (the request is arg): copied records, or a
 * slice of the segment sent by sendfile right after its length. */
static void write_part(struct kaas_kw *w, struct kaas_kslice topic, const void *part, void *arg)
{
	struct kaas_req *req = arg;
	const struct fp *p = part;
	int16_t v = req->hdr.api_version;
	kaas_req_metric_part(req, 0, topic.p, topic.len, p->err, p->len,
			     p->len && !p->gap ? (uint64_t)(p->slice.next_offset - p->slice.first_offset)
					       : 0);
	kaas_kw_i32(w, p->index);
	kaas_kw_i16(w, p->err);
	kaas_kw_i64(w, p->hw);
	if (v >= 4)
		kaas_kw_i64(w, p->lso); /* last stable offset (-1 with an error) */
	if (v >= 5)
		kaas_kw_i64(w, p->log_start);
	if (v >= 4) {
		/* The aborted transactions among the records (read_committed). */
		kaas_kw_array(w, req->hdr.flex, p->naborted);
		for (int i = 0; i < p->naborted; i++) {
			kaas_kw_i64(w, p->aborted[i].producer_id);
			kaas_kw_i64(w, p->aborted[i].first_offset);
			kaas_kw_tags(w, req->hdr.flex);
		}
	}
	if (v >= 11)
		kaas_kw_i32(w, -1); /* preferred read replica */
	if (!p->has_slice) {
		kaas_kw_bytes(w, req->hdr.flex, p->data, (int32_t)p->len);
		return;
	}
	if (req->hdr.flex)
		kaas_kw_uvarint(w, (uint32_t)p->len + 1);
	else
		kaas_kw_i32(w, (int32_t)p->len);
	if (req->zc) { /* the slice goes before the partition's tagged fields */
		req->zc[req->nzc].at = w->len;
		req->zc[req->nzc].slice = (struct kaas_log_slice *)&p->slice;
		req->nzc++;
		req->zc_bytes += p->len;
	}
}

/* Does an incremental answer carry p (KIP-227: anything the client has
 * not been told)? */
static int changed(const struct fp *p)
{
	return p->err || p->len || p->hw != p->prev_hw || p->lso != p->prev_lso ||
	       p->log_start != p->prev_log_start;
}

/* The session remembers what this answer says (a full fetch's new session
 * is made here, as in Kafka, once its partitions' state is known).
 * Returns the session id the answer carries (0: none). */
static int32_t session_answer(struct fetch_ctx *ctx)
{
	struct kaas_fetch_sessions *c = ctx->req->broker->fetch_sessions;
	struct kaas_fetch_session *s = NULL;
	if (ctx->session == FS_FULL) {
		int32_t np = 0;
		for (int32_t i = 0; i < ctx->nt; i++)
			np += ctx->topics[i].n;
		s = kaas_fetch_session_create(c, np, kaas_now_ms());
	} else if (ctx->session == FS_INCREMENTAL) {
		/* Gone meanwhile (evicted): the client learns at its next fetch. */
		s = kaas_fetch_session_get(c, ctx->session_id);
	}
	if (!s)
		return ctx->session == FS_INCREMENTAL ? ctx->session_id : 0;
	for (int32_t i = 0; i < ctx->nt; i++)
		for (int32_t j = 0; j < ctx->topics[i].n; j++) {
			const struct fp *p = &ctx->topics[i].parts[j];
			const struct kaas_kslice *t = &ctx->topics[i].name;
			struct kaas_fs_part *q =
				ctx->session == FS_FULL
					? kaas_fetch_session_upsert(s, t->p, t->len, p->index,
								    p->offset, p->max_bytes)
					: kaas_fetch_session_find(s, t->p, t->len, p->index);
			if (!q && ctx->session == FS_FULL) { /* out of memory: no session */
				kaas_fetch_session_remove(c, s->id);
				return 0;
			}
			if (!q)
				continue;
			if (ctx->session == FS_INCREMENTAL && p->len) {
				/* Records went out: it moves to the end of the
				 * session, so the partitions after it come first
				 * next time (KIP-227; max_bytes cannot starve them). */
				int64_t off = q->offset;
				int32_t mb = q->max_bytes;
				kaas_fetch_session_forget(s, t->p, t->len, p->index);
				q = kaas_fetch_session_upsert(s, t->p, t->len, p->index, off, mb);
				if (!q) { /* out of memory: the session is no longer sound */
					kaas_fetch_session_remove(c, s->id);
					return ctx->session_id;
				}
			}
			q->hw = p->hw;
			q->lso = p->lso;
			q->log_start = p->log_start;
		}
	if (kaas_fetch_session_compact(s) < 0) {
		kaas_fetch_session_remove(c, s->id);
		return ctx->session == FS_INCREMENTAL ? ctx->session_id : 0;
	}
	return s->id;
}

/* The topics an incremental answer carries: each topic's changed
 * partitions moved to the front of its array (their order kept), topics
 * with none left out.  NULL when out of memory. */
static struct ft *incremental_topics(struct fetch_ctx *ctx, int32_t *nout)
{
	struct ft *out = calloc((size_t)ctx->nt + 1, sizeof(*out));
	*nout = 0;
	if (!out)
		return NULL;
	for (int32_t i = 0; i < ctx->nt; i++) {
		struct ft *t = &ctx->topics[i];
		int32_t k = 0;
		for (int32_t j = 0; j < t->n; j++)
			if (changed(&t->parts[j])) {
				struct fp tmp = t->parts[k];
				t->parts[k++] = t->parts[j];
				t->parts[j] = tmp;
			}
		if (k)
			out[(*nout)++] = (struct ft){ .name = t->name, .n = k, .parts = t->parts };
	}
	return out;
}

/* The size of an answer of these partitions, near enough (its records and
 * their headers): what consumer_byte_rate records. */
static double answer_size(const struct ft *topics, int32_t nt)
{
	double n = 32;
	for (int32_t i = 0; i < nt; i++) {
		n += 8 + (double)(topics[i].name.len > 0 ? topics[i].name.len : 0);
		for (int32_t j = 0; j < topics[i].n; j++)
			n += 48 + (double)topics[i].parts[j].len;
	}
	return n;
}

/* consumer_byte_rate, as Kafka: an answer that takes the rate over the
 * quota is not sent; the fetch is answered with no partitions and the
 * throttle time, its size is taken back out of the rate, and no session
 * is made or moved (the connection is muted: kafka/throttle.h).  1 when
 * so answered. */
static int throttled(struct fetch_ctx *ctx, const struct ft *topics, int32_t nt)
{
	struct kaas_req *req = ctx->req;
	KAAS_REQ_IO(req);
	if (ctx->session_err || w->err || v < 1)
		return 0;
	double size = answer_size(topics, nt);
	int32_t throttle = kaas_req_throttle(req, KAAS_QK_CONSUMER_BYTE_RATE, size);
	if (throttle <= 0)
		return 0;
	kaas_req_unrecord(req, KAAS_QK_CONSUMER_BYTE_RATE, size);
	kaas_kw_i32(w, throttle);
	if (v >= 7) {
		kaas_kw_i16(w, 0);
		kaas_kw_i32(w, ctx->session == FS_INCREMENTAL ? ctx->session_id : 0);
	}
	kaas_kw_array(w, f, 0);
	kaas_kw_tags(w, f);
	return 1;
}

static void respond(struct fetch_ctx *ctx)
{
	struct kaas_req *req = ctx->req;
	KAAS_REQ_IO(req);
	struct ft *topics = ctx->topics, *filtered = NULL;
	int32_t nt = ctx->nt;
	int32_t session_id = 0;
	if (ctx->session_err) {
		nt = 0; /* a session error answers no partitions */
	} else if (ctx->session == FS_INCREMENTAL) {
		topics = filtered = incremental_topics(ctx, &nt);
		if (!filtered)
			w->err = -ENOMEM; /* the server drops the connection */
	}
	if (throttled(ctx, topics, nt)) {
		free(filtered);
		kaas_req_finish(req, KAAS_REQ_RESPOND);
		return;
	}
	if (!ctx->session_err && ctx->session != FS_NONE && !w->err)
		session_id = session_answer(ctx);
	int nslices = 0;
	for (int32_t i = 0; i < ctx->nt; i++)
		for (int32_t j = 0; j < ctx->topics[i].n; j++)
			nslices += ctx->topics[i].parts[j].has_slice;
	if (nslices)
		req->zc = calloc((size_t)nslices, sizeof(*req->zc));
	if (v >= 1)
		kaas_kw_i32(w, 0); /* throttle: none (else throttled() answered) */
	if (v >= 7) {
		kaas_kw_i16(w, ctx->session_err);
		kaas_kw_i32(w, session_id);
	}
	kaas_wire_write_topics(w, f, &fetch_shape, topics, nt, write_part, req);
	free(filtered); /* its partitions are ctx's: the slices stay put */
	kaas_kw_tags(w, f);
	if (nslices && !req->zc)
		w->err = -ENOMEM; /* the server drops the connection */
	/* The slices stay referenced until the request is freed (after the
	 * send); copied data is no longer needed. */
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void start_round(struct fetch_ctx *ctx);

/* Some log's high watermark moved: read again only if one of ours did. */
static void on_wake(struct kaas_fetch_waiter *wt)
{
	struct fetch_ctx *ctx = (struct fetch_ctx *)((char *)wt - offsetof(struct fetch_ctx, waiter));
	struct kaas_broker *b = ctx->req->broker;
	if (!b->draining && !moved(ctx)) {
		kaas_broker_park(b, &ctx->waiter);
		return;
	}
	ctx->parked = 0;
	start_round(ctx);
}

static void on_timeout(uv_timer_t *t)
{
	struct fetch_ctx *ctx = t->data;
	if (!ctx->parked)
		return;
	kaas_broker_unpark(&ctx->waiter);
	ctx->parked = 0;
	start_round(ctx);
}

static void round_done(void *arg, int status)
{
	struct fetch_ctx *ctx = arg;
	struct kaas_broker *b = ctx->req->broker;
	ctx->in_pool = 0;
	uint64_t now = kaas_now_ms();
	if (status < 0 || ctx->errors || ctx->total >= (size_t)ctx->min_bytes || ctx->more ||
	    now >= ctx->deadline || b->draining) {
		respond(ctx);
		return;
	}
	/* Not enough yet: park until data arrives or the deadline, unless data
	 * already arrived while this round was reading. */
	if (ctx->woken || moved(ctx)) {
		ctx->woken = 0;
		start_round(ctx);
		return;
	}
	if (!ctx->timer_live) {
		uv_timer_init(b->loop, &ctx->timer);
		ctx->timer.data = ctx;
		ctx->timer_live = 1;
	}
	ctx->parked = 1;
	kaas_broker_park(b, &ctx->waiter);
	uv_timer_start(&ctx->timer, on_timeout, ctx->deadline - now, 0);
}

static void start_round(struct fetch_ctx *ctx)
{
	struct kaas_req *req = ctx->req;
	if (ctx->in_pool) {
		ctx->woken = 1;
		return;
	}
	if (ctx->timer_live)
		uv_timer_stop(&ctx->timer);
	ctx->in_pool = 1;
	if (kaas_pool_queue(req->broker, round_work, round_done, ctx) < 0) {
		ctx->in_pool = 0;
		respond(ctx);
	}
}

/* A forgotten partition of an incremental fetch (names in the frame). */
struct forgot {
	struct kaas_kslice topic;
	int32_t index;
};

/* ctx's topics become the session's partitions (copies, the names in
 * ctx->names): the session may change or go while the fetch waits.
 * 0 or -ENOMEM (ctx unchanged). */
static int topics_from_session(struct fetch_ctx *ctx, const struct kaas_fetch_session *s)
{
	/* A topic per run of partitions of one name, as they were added. */
	int32_t nt = 0;
	size_t nbytes = 0;
	for (int32_t j = 0; j < s->n; j++) {
		const struct kaas_fs_part *q = &s->parts[j], *pq = j ? q - 1 : NULL;
		if (!pq || pq->tlen != q->tlen || memcmp(pq->topic, q->topic, (size_t)q->tlen)) {
			nt++;
			nbytes += (size_t)q->tlen;
		}
	}
	struct ft *topics = calloc((size_t)nt + 1, sizeof(*topics));
	char *names = malloc(nbytes + 1);
	int32_t i = -1;
	size_t at = 0;
	for (int32_t j = 0; topics && names && j < s->n; j++) {
		const struct kaas_fs_part *q = &s->parts[j], *pq = j ? q - 1 : NULL;
		if (!pq || pq->tlen != q->tlen || memcmp(pq->topic, q->topic, (size_t)q->tlen)) {
			int32_t run = 1;
			while (j + run < s->n && q[run].tlen == q->tlen &&
			       memcmp(q[run].topic, q->topic, (size_t)q->tlen) == 0)
				run++;
			struct ft *t = &topics[++i];
			memcpy(names + at, q->topic, (size_t)q->tlen);
			t->name = (struct kaas_kslice){ (const uint8_t *)names + at, q->tlen };
			at += (size_t)q->tlen;
			if (!(t->parts = calloc((size_t)run + 1, sizeof(*t->parts))))
				break;
		}
		struct fp *p = &topics[i].parts[topics[i].n++];
		p->index = q->index;
		p->offset = q->offset;
		p->max_bytes = q->max_bytes;
		p->hw = p->log_start = p->lso = -1;
		p->prev_hw = q->hw;
		p->prev_lso = q->lso;
		p->prev_log_start = q->log_start;
	}
	if (!topics || !names || (s->n && !topics[i].parts)) {
		kaas_wire_topics_free(topics, nt, &fetch_shape);
		free(names);
		return -ENOMEM;
	}
	assert(i + 1 == nt && at == nbytes);
	kaas_wire_topics_free(ctx->topics, ctx->nt, &fetch_shape);
	ctx->topics = topics;
	ctx->nt = nt;
	ctx->names = names;
	return 0;
}

/* KIP-227 for a Fetch v7+ with session id and epoch: what the answer
 * does (ctx->session), or the error it answers at once
 * (ctx->session_err).  0, or -ENOMEM. */
static int session_begin(struct fetch_ctx *ctx, int32_t id, int32_t epoch,
			 const struct forgot *forgot, size_t nforgot)
{
	struct kaas_broker *b = ctx->req->broker;
	if (!b->fetch_sessions && b->cfg.fetch_session_slots > 0)
		b->fetch_sessions =
			kaas_fetch_sessions_new(b->cfg.fetch_session_slots, KAAS_FETCH_SESSION_EVICT_MS);
	struct kaas_fetch_sessions *c = b->fetch_sessions; /* NULL: no sessions */
	if (epoch == KAAS_FETCH_INITIAL_EPOCH || epoch == KAAS_FETCH_FINAL_EPOCH) {
		/* A full fetch closes the session it names; epoch 0 asks for a
		 * new one, -1 for none. */
		if (id != 0)
			kaas_fetch_session_remove(c, id);
		ctx->session = epoch == KAAS_FETCH_INITIAL_EPOCH ? FS_FULL : FS_NONE;
		return 0;
	}
	struct kaas_fetch_session *s = kaas_fetch_session_get(c, id);
	if (!s) {
		ctx->session_err = KAAS_KERR_FETCH_SESSION_ID_NOT_FOUND;
		return 0;
	}
	if (s->epoch != epoch) {
		ctx->session_err = KAAS_KERR_INVALID_FETCH_SESSION_EPOCH;
		return 0;
	}
	/* The request's partitions are added or have moved; then the
	 * forgotten ones go. */
	for (int32_t i = 0; i < ctx->nt; i++) {
		struct ft *t = &ctx->topics[i];
		for (int32_t j = 0; j < t->n; j++)
			if (!kaas_fetch_session_upsert(s, t->name.p, t->name.len, t->parts[j].index,
						       t->parts[j].offset, t->parts[j].max_bytes))
				goto nomem;
	}
	for (size_t k = 0; k < nforgot; k++)
		kaas_fetch_session_forget(s, forgot[k].topic.p, forgot[k].topic.len,
					  forgot[k].index);
	if (kaas_fetch_session_compact(s) < 0)
		goto nomem;
	if (s->n == 0) {
		/* Nothing left: the session ends; the request is answered
		 * without one (as Kafka does). */
		kaas_fetch_session_remove(c, id);
		ctx->session = FS_NONE;
		return 0;
	}
	if (topics_from_session(ctx, s) < 0)
		goto nomem;
	s->epoch = kaas_fetch_next_epoch(s->epoch);
	kaas_fetch_session_touch(c, s, kaas_now_ms());
	ctx->session = FS_INCREMENTAL;
	ctx->session_id = id;
	return 0;
nomem:
	kaas_fetch_session_remove(c, id); /* its state is no longer what the client thinks */
	return -ENOMEM;
}

void kaas_api_fetch(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct fetch_ctx *ctx = kaas_req_ctx_new(req, sizeof(*ctx), ctx_free);
	if (!ctx)
		return;
	ctx->req = req;
	ctx->waiter.wake = on_wake;
	(void)kaas_kr_i32(r); /* replica_id */
	ctx->max_wait = kaas_kr_i32(r);
	ctx->min_bytes = kaas_kr_i32(r);
	ctx->max_bytes = v >= 3 ? kaas_kr_i32(r) : INT32_MAX;
	/* Under a consumer_byte_rate, one response never holds more than the
	 * quota's window less a sample (Kafka's getMaxValueInQuotaWindow): a
	 * response that could never fit would be throttled for ever. */
	double qmax = kaas_req_quota_window_max(req, KAAS_QK_CONSUMER_BYTE_RATE);
	if (qmax > 0 && (ctx->max_bytes <= 0 || (double)ctx->max_bytes > qmax))
		ctx->max_bytes = qmax < 1 ? 1 : (int32_t)qmax;
	if (v >= 4)
		ctx->isolation = kaas_kr_i8(r); /* 1: read_committed, below the LSO */
	int32_t session_id = 0, session_epoch = KAAS_FETCH_FINAL_EPOCH;
	if (v >= 7) {
		session_id = kaas_kr_i32(r);
		session_epoch = kaas_kr_i32(r);
	}
	void *arr;
	int32_t nt = kaas_wire_read_topics(r, v, f, &fetch_shape, &arr);
	ctx->topics = arr;
	ctx->nt = arr ? nt : 0;
	struct forgot *forgot = NULL; /* forgotten_topics_data */
	size_t nforgot = 0, forgot_cap = 0;
	if (v >= 7) {
		int32_t nf = kaas_kr_array(r, f, 6);
		for (int32_t i = 0; i < nf && kaas_kr_ok(r); i++) {
			struct kaas_kslice name = kaas_kr_str(r, f);
			int32_t np = kaas_kr_array(r, f, 4);
			for (int32_t j = 0; j < np && kaas_kr_ok(r); j++) {
				int32_t index = kaas_kr_i32(r);
				struct forgot *g = kaas_grow(forgot, &forgot_cap, nforgot,
							     sizeof(*forgot), 16);
				if (!g) {
					kaas_kr_fail(r);
					break;
				}
				forgot = g;
				forgot[nforgot++] = (struct forgot){ name, index };
			}
			kaas_kr_tags(r, f);
		}
	}
	if (v >= 11)
		(void)kaas_kr_str(r, f); /* rack id */
	kaas_kr_tags(r, f); /* cluster_id (v12+) and replica_state: not used */
	int ok = kaas_kr_ok(r) && nt >= 0;
	if (ok && kaas_wire_topics_refused(req, ctx->topics, ctx->nt, &fetch_shape)) {
		free(forgot);
		respond(ctx); /* the pre-0.11 message formats: at once */
		return;
	}
	if (ok && v >= 7)
		ok = session_begin(ctx, session_id, session_epoch, forgot, nforgot) == 0;
	free(forgot);
	if (!ok) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (ctx->session_err) {
		respond(ctx);
		return;
	}
	if (ctx->max_wait < 0)
		ctx->max_wait = 0;
	if (ctx->max_wait > 300000)
		ctx->max_wait = 300000;
	if (ctx->min_bytes < 0)
		ctx->min_bytes = 0;
	ctx->deadline = req->start_ms + (uint64_t)ctx->max_wait;
	start_round(ctx);
}
