/*
 * conn.c — connections: accept, read, cut frames, answer in order.
 *
 * One libuv loop thread owns every connection.  Frames are
 * [int32 size][size bytes]; a size below the smallest header or above
 * max_request_bytes closes that connection only (so does a request its
 * handler finishes KAAS_REQ_CLOSE).  Requests are queued per connection in
 * arrival order and answered in that order whatever order they finish in;
 * reading pauses while too many requests or response bytes are queued.
 *
 * On an SSL listener the same happens on the decrypted stream: ciphertext
 * read from the socket goes into the connection's TLS session (tls.h),
 * plaintext comes out into the read buffer, and every response is
 * encrypted into one buffer of records that is then written.  Until the
 * handshake is done nothing is decrypted and no read buffer is allocated
 * (the ciphertext lands in the server's one shared buffer).
 */
#include "server/internal.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/sasl.h"
#include "util/logger.h"
#include "util/grow.h"

#define READ_CHUNK (64u * 1024)
/* A frame of at least this size whose head has arrived is read straight
 * into the buffer it is dispatched in (c->big), on a plaintext connection:
 * through the read buffer it cost a copy of every byte on the loop thread,
 * and the read buffer grew to the frame's size and shrank back each time
 * (fresh pages, a fault per 4 KiB). */
#define BIG_FRAME (256u * 1024)
#define MAX_QUEUED_REQS 512
#define MAX_QUEUED_WRITE (64u << 20)

const char *kaas_conn_peer(const struct kaas_conn *c)
{
	return c ? c->peer : "";
}

const struct kaas_conn_security *kaas_conn_security(const struct kaas_conn *c)
{
	return c ? &c->sec : NULL;
}

struct kaas_conn_security *kaas_conn_security_rw(struct kaas_conn *c)
{
	return c ? &c->sec : NULL;
}

int kaas_conn_raw_next(struct kaas_conn *c)
{
	/* Loop-owned: no frame is cut while a SASL step runs (c->sasl_req),
	 * so this is the state the last step left, and nothing is locked. */
	assert(!c->sasl_req);
	return c->sasl_raw;
}

/* ------------------------------------------------------ connections */

void kaas_conn_unref(struct kaas_conn *c)
{
	if (--c->refs > 0)
		return;
	c->prev->next = c->next;
	c->next->prev = c->prev;
	c->s->nconns--;
	kaas_limits_release(c);
	kaas_tls_conn_free(c->tls);
	kaas_sasl_free(c->sec.sasl);
	free(c->rbuf);
	free(c->big);
	free(c);
}

void kaas_conn_on_closed(uv_handle_t *h)
{
	kaas_conn_unref(h->data);
}

void kaas_conn_req_free(struct kaas_req *req)
{
	if (req->ctx_free)
		req->ctx_free(req->ctx);
	kaas_kw_free(&req->w);
	free(req->zc);
	free(req->frame);
	struct kaas_conn *c = req->conn;
	if (req->throttle_ms) /* its answer is out (or there is none): KIP-219 */
		kaas_conn_mute(c, req->throttle_ms);
	assert(c->s->inflight > 0);
	c->s->inflight--;
	free(req);
	kaas_conn_unref(c);
}

void kaas_conn_close(struct kaas_conn *c, const char *why)
{
	if (c->closing)
		return;
	/* Rate-limited: a peer decides how often this happens. */
	if (why && kaas_ratelog_ok(&c->s->rl_close, "connection close warnings"))
		kaas_warn("closing connection %s: %s", c->peer, why);
	c->closing = 1;
	/* Requests already finished but unsent are dropped; the others are
	 * freed when their handler finishes them. */
	struct kaas_req **pp = &c->head;
	while (*pp) {
		struct kaas_req *r = *pp;
		if (r->done) {
			*pp = r->next;
			c->queued--;
			kaas_conn_req_free(r);
		} else {
			pp = &r->next;
		}
	}
	c->tail = NULL;
	for (struct kaas_req *r = c->head; r; r = r->next)
		c->tail = r;
	kaas_conn_mute_cancel(c);
	if (c->zc_busy) {
		/* A work-queue thread is writing to the socket: close after it. */
		kaas_conn_read_stop(c);
		c->close_deferred = 1;
		return;
	}
	uv_close((uv_handle_t *)&c->tcp, kaas_conn_on_closed);
}

/* At least READ_CHUNK bytes free at the end of the read buffer: 0 or
 * -ENOMEM. */
static int rbuf_reserve(struct kaas_conn *c)
{
	uint8_t *n = kaas_reserve(c->rbuf, &c->rcap, c->rlen + READ_CHUNK, READ_CHUNK * 2, SIZE_MAX);
	if (!n)
		return -ENOMEM;
	c->rbuf = n;
	return 0;
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct kaas_conn *c = h->data;
	if (c->tls) {
		/* Ciphertext: decrypted into rbuf by on_read before the next read. */
		buf->base = (char *)c->s->tls_inbuf;
		buf->len = READ_CHUNK;
		return;
	}
	if (c->big) { /* the rest of a large frame, and nothing past it */
		assert(c->big_have < c->big_len);
		buf->base = (char *)c->big + c->big_have;
		buf->len = c->big_len - c->big_have;
		return;
	}
	if (rbuf_reserve(c) < 0) {
		buf->base = NULL;
		buf->len = 0;
		return;
	}
	buf->base = (char *)c->rbuf + c->rlen;
	buf->len = c->rcap - c->rlen;
}

static void conn_maybe_resume(struct kaas_conn *c);
static void conn_read_start(struct kaas_conn *c);

struct write_ctx {
	uv_write_t w;
	struct kaas_conn *c;
	struct kaas_req *req;     /* freed when written; NULL: raw bytes */
	uint8_t *cipher;          /* TLS: the records written (owned) */
	uint8_t hdr[9];
};

static void on_written(uv_write_t *w, int status)
{
	struct write_ctx *wc = (struct write_ctx *)w;
	struct kaas_conn *c = wc->c;
	if (status < 0 && !c->closing)
		kaas_conn_close(c, uv_strerror(status));
	c->refs++; /* keep c while the request goes */
	c->writes--;
	c->last_active_ms = kaas_now_ms();
	if (wc->req)
		kaas_conn_req_free(wc->req);
	else
		kaas_conn_unref(c); /* the raw write's reference */
	free(wc->cipher);
	free(wc);
	if (c->close_after && c->writes == 0 && !c->closing)
		kaas_conn_close(c, NULL); /* the answer that ends it is out */
	/* A zero-copy send may be waiting for the queue to drain; reading may
	 * have stopped on a full write queue. */
	if (!c->closing && c->writes == 0 && c->head && c->head->done && c->head->zc)
		kaas_conn_flush(c);
	conn_maybe_resume(c);
	kaas_conn_unref(c);
}

/* Queue one write of wc's buffers (encrypted first on a TLS connection). */
static int conn_write(struct kaas_conn *c, struct write_ctx *wc, const uv_buf_t *bufs, unsigned n)
{
	uv_buf_t out[2];
	if (c->tls) {
		size_t len = 0;
		int rc = kaas_tls_seal(c->tls, bufs, n, &wc->cipher, &len);
		if (rc < 0)
			return rc;
		out[0] = uv_buf_init((char *)wc->cipher, (unsigned)len);
		bufs = out;
		n = 1;
	}
	int rc = uv_write(&wc->w, (uv_stream_t *)&c->tcp, bufs, n, on_written);
	if (rc < 0) {
		free(wc->cipher);
		wc->cipher = NULL;
		return rc;
	}
	c->writes++;
	if (!wc->req)
		c->refs++;
	return 0;
}

int kaas_conn_send(struct kaas_conn *c, struct kaas_req *req, const uv_buf_t *bufs, unsigned n)
{
	struct write_ctx *wc = calloc(1, sizeof(*wc));
	if (!wc)
		return -ENOMEM;
	wc->c = c;
	wc->req = req;
	int rc = conn_write(c, wc, bufs, n);
	if (rc < 0)
		free(wc);
	return rc;
}

/* Send every finished request at the head of the queue, in order. */
void kaas_conn_flush(struct kaas_conn *c)
{
	while (!c->closing && !c->close_after && !c->zc_busy && !c->auth_delay && c->head &&
	       c->head->done) {
		struct kaas_req *req = c->head;
		if (req->zc && req->status == KAAS_REQ_RESPOND && !req->w.err) {
			if (c->writes > 0)
				return; /* after the queued writes (on_written) */
			c->head = req->next;
			if (!c->head)
				c->tail = NULL;
			c->queued--;
			kaas_zc_start(c, req);
			return;
		}
		c->head = req->next;
		if (!c->head)
			c->tail = NULL;
		c->queued--;
		if (req->status == KAAS_REQ_CLOSE) {
			kaas_conn_req_free(req);
			kaas_conn_close(c, "malformed request");
			return;
		}
		if (req->status == KAAS_REQ_NO_RESPONSE) {
			kaas_conn_req_free(req);
			continue;
		}
		if (req->w.err) {
			kaas_conn_req_free(req);
			kaas_conn_close(c, "out of memory building a response");
			return;
		}
		struct write_ctx *wc = calloc(1, sizeof(*wc));
		if (!wc) {
			kaas_conn_req_free(req);
			kaas_conn_close(c, "out of memory");
			return;
		}
		wc->c = c;
		wc->req = req;
		size_t hl = req->raw ? 4 : req->hdr.resp_tags ? 9 : 8;
		uint32_t size = (uint32_t)(hl - 4 + req->w.len);
		uint32_t corr = (uint32_t)req->hdr.correlation_id;
		for (int i = 0; i < 4; i++) {
			wc->hdr[i] = (uint8_t)(size >> (24 - 8 * i));
			wc->hdr[4 + i] = (uint8_t)(corr >> (24 - 8 * i));
		}
		wc->hdr[8] = 0; /* empty tag section */
		uv_buf_t bufs[2] = { uv_buf_init((char *)wc->hdr, (unsigned)hl),
				     uv_buf_init((char *)req->w.buf, (unsigned)req->w.len) };
		int last = req->status == KAAS_REQ_RESPOND_CLOSE;
		int rc = conn_write(c, wc, bufs, req->w.len ? 2 : 1);
		if (rc < 0) {
			free(wc);
			kaas_conn_req_free(req);
			kaas_conn_close(c, uv_strerror(rc));
			return;
		}
		if (last) {
			/* Nothing more is read or answered; on_written closes. */
			c->close_after = 1;
			kaas_conn_read_stop(c);
			return;
		}
	}
	conn_maybe_resume(c);
}

/* connection.failed.authentication.delay.ms: the answer to a failed
 * authentication (and the close after it) is held that long, on a timer of
 * the loop (no pool thread waits). */
struct auth_delay {
	uv_timer_t t;
	struct kaas_conn *c;
};

static void auth_delay_closed(uv_handle_t *h)
{
	free(h->data);
}

static void on_auth_delay(uv_timer_t *t)
{
	struct auth_delay *d = t->data;
	struct kaas_conn *c = d->c;
	assert(c->auth_delay);
	c->auth_delay = 0;
	uv_close((uv_handle_t *)&d->t, auth_delay_closed);
	if (!c->closing)
		kaas_conn_flush(c);
	kaas_conn_unref(c);
}

static void auth_delay_start(struct kaas_conn *c, uint32_t ms)
{
	struct auth_delay *d = calloc(1, sizeof(*d));
	if (!d)
		return; /* answered at once */
	uv_timer_init(c->s->loop, &d->t);
	d->t.data = d;
	d->c = c;
	c->refs++;
	c->auth_delay = 1;
	kaas_server_conn_count(c->s, KAAS_CONN_AUTH_DELAYED);
	uv_timer_start(&d->t, on_auth_delay, ms, 0);
}

/* A SASL request of c has finished: what its exchange awaits next is read
 * now, once, on the loop (the worker is done with the state), and a
 * failure's answer is held. */
static void sasl_step_done(struct kaas_conn *c)
{
	c->sasl_req = NULL;
	unsigned f = kaas_sasl_settled(c->sec.sasl);
	c->sasl_raw = c->sasl_v0 && (f & KAAS_SASL_WANTS_TOKEN);
	uint32_t delay = c->s->b->cfg.sec.failed_auth_delay_ms;
	if ((f & KAAS_SASL_FAILED) && delay && !c->closing && !c->auth_delay)
		auth_delay_start(c, delay);
}

void kaas_req_finish(struct kaas_req *req, int status)
{
	req->done = 1;
	req->status = status;
	kaas_server_metrics_request(req, status);
	struct kaas_conn *c = req->conn;
	if (c->sasl_req == req)
		sasl_step_done(c);
	if (kaas_logger_enabled(KAAS_LOGGER_DEBUG))
		kaas_debug("api %d v%d corr %d from %s finished (%d) in %llu ms", req->hdr.api_key,
			   req->hdr.api_version, req->hdr.correlation_id, c->peer, status,
			   (unsigned long long)(kaas_now_ms() - req->start_ms));
	if (c->closing) {
		/* Its connection is gone: unlink and free. */
		struct kaas_req **pp = &c->head;
		while (*pp && *pp != req)
			pp = &(*pp)->next;
		if (*pp) {
			*pp = req->next;
			c->queued--;
		}
		kaas_conn_req_free(req);
		return;
	}
	kaas_conn_flush(c);
}

static void conn_frames(struct kaas_conn *c);

/* The largest frame c may send now: sasl.server.max.receive.size on a SASL
 * listener until the connection has authenticated (CVE-2022-34917: a
 * stranger's frame is not buffered whole), else max_request_bytes.  No
 * SASL step is on the pool when frames are cut, so `authenticated` is
 * settled. */
static size_t frame_max(const struct kaas_conn *c)
{
	const struct kaas_config *cfg = &c->s->b->cfg;
	if (c->sec.sasl && !__atomic_load_n(&c->sec.authenticated, __ATOMIC_ACQUIRE) &&
	    cfg->sec.sasl_max_receive < cfg->max_request_bytes)
		return cfg->sec.sasl_max_receive;
	return cfg->max_request_bytes;
}

static void conn_maybe_resume(struct kaas_conn *c)
{
	/* (Nothing more is read while a failed authentication's answer is
	 * held: a frame behind it would close the connection at once and
	 * tell the client what the delay is to hide.) */
	if (c->closing || c->close_after || c->reading || c->sasl_req || c->auth_delay ||
	    c->mute || c->s->b->draining)
		return;
	if (c->queued < MAX_QUEUED_REQS / 2 &&
	    uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) < MAX_QUEUED_WRITE / 2) {
		conn_read_start(c);
		/* Frames that arrived before the pause are already buffered. */
		if (!c->in_frames)
			conn_frames(c);
	}
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void conn_read_start(struct kaas_conn *c)
{
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
		c->reading = 1;
}

void kaas_conn_read_stop(struct kaas_conn *c)
{
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
	}
}

/* Dispatch one whole frame (owned by the request from here on): false when
 * the connection must stop taking frames (closed, or its queue is full and
 * reading was paused). */
static bool conn_dispatch_frame(struct kaas_conn *c, uint8_t *frame, size_t size)
{
	struct kaas_server *sv = c->s;
	struct kaas_broker *b = sv->b;
	struct kaas_req *req = calloc(1, sizeof(*req));
	if (!req) {
		free(frame);
		kaas_conn_close(c, "out of memory");
		return false;
	}
	req->frame = frame;
	req->frame_len = size;
	req->conn = c;
	req->broker = b;
	req->start_ms = kaas_now_ms();
	kaas_kr_init(&req->r, frame, size);
	kaas_kw_init(&req->w);
	c->refs++;
	sv->inflight++;
	if (c->tail)
		c->tail->next = req;
	else
		c->head = req;
	c->tail = req;
	c->queued++;
	kaas_server_dispatch(c, req);
	if (c->closing)
		return false;
	if (c->sasl_req) {
		/* Its exchange's state is the worker's until it finishes:
		 * nothing more is read (kaas_req_finish resumes). */
		kaas_conn_read_stop(c);
		return false;
	}
	if (c->queued >= MAX_QUEUED_REQS ||
	    uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) >= MAX_QUEUED_WRITE) {
		kaas_conn_read_stop(c);
		return false;
	}
	return true;
}

/* Cut complete frames off the read buffer and dispatch them, while reading
 * is on (a paused connection keeps its buffered frames for later).  The
 * head of a large frame that has not all arrived moves to its own buffer
 * (c->big), which the next reads fill (plaintext only: TLS decrypts into
 * the read buffer). */
static void conn_frames(struct kaas_conn *c)
{
	struct kaas_server *sv = c->s;
	struct kaas_broker *b = sv->b;
	size_t pos = 0;
	c->in_frames = 1;
	while (!c->closing && c->reading && !c->big && c->rlen - pos >= 4) {
		const uint8_t *p = c->rbuf + pos;
		int32_t size = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
					 ((uint32_t)p[2] << 8) | p[3]);
		size_t max = frame_max(c);
		if (size < (kaas_conn_raw_next(c) ? 0 : 10) || (size_t)size > max) {
			char why[160];
			int prelogin = max < b->cfg.max_request_bytes;
			snprintf(why, sizeof(why), "frame size %d outside [10, %zu]%s", size, max,
				 prelogin ? " before SASL authentication (sasl.server.max.receive.size)"
					  : "");
			if (prelogin && size > 0 && (size_t)size > max)
				kaas_server_conn_count(sv, KAAS_CONN_CLOSED_SASL_RECV);
			kaas_conn_close(c, why);
			c->in_frames = 0;
			return;
		}
		size_t have = c->rlen - pos - 4;
		if (have < (size_t)size && (c->tls || (size_t)size < BIG_FRAME))
			break;
		uint8_t *frame = malloc((size_t)size);
		if (!frame) {
			kaas_conn_close(c, "out of memory");
			c->in_frames = 0;
			return;
		}
		if (have < (size_t)size) {
			memcpy(frame, p + 4, have);
			pos = c->rlen;
			c->big = frame;
			c->big_len = (size_t)size;
			c->big_have = have;
			break;
		}
		memcpy(frame, p + 4, (size_t)size);
		pos += 4 + (size_t)size;
		if (!conn_dispatch_frame(c, frame, (size_t)size))
			break;
	}
	c->in_frames = 0;
	if (c->closing)
		return;
	if (pos) {
		memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
		c->rlen -= pos;
	}
	/* Give back memory after a large frame. */
	if (c->rcap > 4 * READ_CHUNK && c->rlen < READ_CHUNK) {
		uint8_t *n = realloc(c->rbuf, 2 * READ_CHUNK);
		if (n) {
			c->rbuf = n;
			c->rcap = 2 * READ_CHUNK;
		}
	}
}

/* Send what the TLS session has to say (handshake messages, alerts): 0 or
 * < 0.  `last`: the connection closes next, so write what the socket
 * takes now and do not queue (a failed handshake's alert). */
static int tls_send_output(struct kaas_conn *c, int last)
{
	uint8_t *out;
	size_t len;
	int rc = kaas_tls_take_output(c->tls, &out, &len);
	if (rc < 0 || !out)
		return rc;
	uv_buf_t b = uv_buf_init((char *)out, (unsigned)len);
	if (last) {
		(void)uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
		free(out);
		return 0;
	}
	struct write_ctx *wc = calloc(1, sizeof(*wc));
	if (!wc) {
		free(out);
		return -ENOMEM;
	}
	wc->c = c;
	wc->cipher = out;
	rc = uv_write(&wc->w, (uv_stream_t *)&c->tcp, &b, 1, on_written);
	if (rc < 0) {
		free(out);
		free(wc);
		return rc;
	}
	c->writes++;
	c->refs++;
	return 0;
}

/* Ciphertext from the socket: on with the handshake, then decrypt every
 * whole record into the read buffer (at most about what was read). */
static void tls_input(struct kaas_conn *c, const uint8_t *p, size_t n)
{
	char why[300] = "";
	int rc = kaas_tls_feed(c->tls, p, n, why, sizeof(why));
	if (rc == 1 && !c->tls_ready) {
		c->tls_ready = 1;
		if (!kaas_conn_sasl_listener(&c->sec)) {
			/* On SASL_SSL the principal is SASL's. */
			kaas_tls_principal(c->tls, c->sec.principal, sizeof(c->sec.principal));
			c->sec.authenticated = 1;
		}
		kaas_debug("connection %s: TLS established on listener %s as %s", c->peer,
			   c->sec.listener, c->sec.principal);
	}
	while (rc == 1) {
		if (rbuf_reserve(c) < 0) {
			rc = -ENOMEM;
			snprintf(why, sizeof(why), "out of memory");
			break;
		}
		ssize_t r = kaas_tls_read(c->tls, c->rbuf + c->rlen, c->rcap - c->rlen, why,
					  sizeof(why));
		if (r > 0)
			c->rlen += (size_t)r;
		else
			rc = r == 0 ? 0 : (int)r;
	}
	if (rc < 0) {
		(void)tls_send_output(c, 1);
		kaas_conn_close(c, rc == -EPIPE ? NULL : why);
		return;
	}
	if (tls_send_output(c, 0) < 0) {
		kaas_conn_close(c, "cannot send TLS records");
		return;
	}
	if (c->tls_ready)
		conn_frames(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct kaas_conn *c = s->data;
	if (nread < 0) {
		kaas_conn_close(c, nread == UV_EOF ? NULL : uv_strerror((int)nread));
		return;
	}
	if (nread == 0)
		return;
	c->last_active_ms = kaas_now_ms();
	if (buf->base == NULL) {
		kaas_conn_close(c, "out of memory");
		return;
	}
	if (c->tls) {
		tls_input(c, (const uint8_t *)buf->base, (size_t)nread);
		return;
	}
	if (c->big) {
		assert(buf->base == (char *)c->big + c->big_have);
		c->big_have += (size_t)nread;
		assert(c->big_have <= c->big_len);
		if (c->big_have < c->big_len)
			return;
		/* Nothing is buffered behind it: the reads stopped at its end. */
		uint8_t *frame = c->big;
		c->big = NULL;
		c->in_frames = 1;
		(void)conn_dispatch_frame(c, frame, c->big_len);
		c->in_frames = 0;
		return;
	}
	c->rlen += (size_t)nread;
	conn_frames(c);
}

void kaas_conn_accept(uv_stream_t *listener, int status)
{
	struct kaas_listener *lst = listener->data;
	struct kaas_server *s = lst->s;
	if (status < 0 || s->b->draining)
		return;
	struct kaas_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->s = s;
	c->refs = 1;
	c->lst = lst;
	c->accepted_ms = c->last_active_ms = kaas_now_ms();
	c->sec.listener = lst->cfg->name;
	c->sec.protocol = lst->cfg->protocol;
	c->sec.authenticated = !lst->tls && !kaas_conn_sasl_listener(&c->sec);
	snprintf(c->sec.principal, sizeof(c->sec.principal), "%s", KAAS_PRINCIPAL_ANONYMOUS);

	uv_tcp_init(s->loop, &c->tcp);
	c->tcp.data = c;
	c->next = &s->conns;
	c->prev = s->conns.prev;
	s->conns.prev->next = c;
	s->conns.prev = c;
	s->nconns++;
	if (uv_accept(listener, (uv_stream_t *)&c->tcp) < 0) {
		kaas_conn_close(c, "accept failed");
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	struct sockaddr_storage ss;
	int len = sizeof(ss);
	strcpy(c->peer, "?");
	if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
		char ip[48] = "";
		int port = 0;
		if (ss.ss_family == AF_INET) {
			uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof(ip));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof(ip));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
		snprintf(c->peer, sizeof(c->peer), "%s:%d", ip, port);
		snprintf(c->ip, sizeof(c->ip), "%s", ip);
	}
	if (!kaas_limits_admit(c)) {
		kaas_conn_close(c, NULL);
		return;
	}
	if (kaas_conn_sasl_listener(&c->sec) && !(c->sec.sasl = kaas_sasl_new())) {
		kaas_conn_close(c, "out of memory for a SASL exchange");
		return;
	}
	if (lst->tls && kaas_tls_conn_new(s->tls, &c->tls) < 0) {
		kaas_conn_close(c, "out of memory for a TLS session");
		return;
	}
	kaas_debug("connection from %s on listener %s", c->peer, lst->cfg->name);
	conn_read_start(c);
}

