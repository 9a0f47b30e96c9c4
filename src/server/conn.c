/*
 * conn.c — connections: accept, read, cut frames, answer in order.
 *
 * One libuv loop thread owns every connection.  Frames are
 * [int32 size][size bytes]; a size below the smallest header or above
 * max_request_bytes closes that connection only (so does a request its
 * handler finishes KAAS_REQ_CLOSE).  Requests are queued per connection in
 * arrival order and answered in that order whatever order they finish in;
 * reading pauses while too many requests or response bytes are queued.
 */
#include "server/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/logger.h"

#define READ_CHUNK (64u * 1024)
#define MAX_QUEUED_REQS 512
#define MAX_QUEUED_WRITE (64u << 20)

const char *kaas_conn_peer(const struct kaas_conn *c)
{
	return c ? c->peer : "";
}

/* ------------------------------------------------------ connections */

void kaas_conn_unref(struct kaas_conn *c)
{
	if (--c->refs > 0)
		return;
	c->prev->next = c->next;
	c->next->prev = c->prev;
	c->s->nconns--;
	free(c->rbuf);
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
	assert(c->s->inflight > 0);
	c->s->inflight--;
	free(req);
	kaas_conn_unref(c);
}

void kaas_conn_close(struct kaas_conn *c, const char *why)
{
	if (c->closing)
		return;
	if (why)
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
	if (c->zc_busy) {
		/* A work-queue thread is writing to the socket: close after it. */
		kaas_conn_read_stop(c);
		c->close_deferred = 1;
		return;
	}
	uv_close((uv_handle_t *)&c->tcp, kaas_conn_on_closed);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct kaas_conn *c = h->data;
	if (c->rcap - c->rlen < READ_CHUNK) {
		size_t cap = c->rcap ? c->rcap : READ_CHUNK * 2;
		while (cap - c->rlen < READ_CHUNK)
			cap *= 2;
		uint8_t *n = realloc(c->rbuf, cap);
		if (!n) {
			buf->base = NULL;
			buf->len = 0;
			return;
		}
		c->rbuf = n;
		c->rcap = cap;
	}
	buf->base = (char *)c->rbuf + c->rlen;
	buf->len = c->rcap - c->rlen;
}

static void conn_maybe_resume(struct kaas_conn *c);
static void conn_read_start(struct kaas_conn *c);

struct write_ctx {
	uv_write_t w;
	struct kaas_req *req;
	uint8_t hdr[9];
};

static void on_written(uv_write_t *w, int status)
{
	struct write_ctx *wc = (struct write_ctx *)w;
	struct kaas_req *req = wc->req;
	struct kaas_conn *c = req->conn;
	if (status < 0 && !c->closing)
		kaas_conn_close(c, uv_strerror(status));
	c->refs++; /* keep c while the request goes */
	c->writes--;
	kaas_conn_req_free(req);
	free(wc);
	/* A zero-copy send may be waiting for the queue to drain; reading may
	 * have stopped on a full write queue. */
	if (!c->closing && c->writes == 0 && c->head && c->head->done && c->head->zc)
		kaas_conn_flush(c);
	conn_maybe_resume(c);
	kaas_conn_unref(c);
}

/* Send every finished request at the head of the queue, in order. */
void kaas_conn_flush(struct kaas_conn *c)
{
	while (!c->closing && !c->zc_busy && c->head && c->head->done) {
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
		struct write_ctx *wc = malloc(sizeof(*wc));
		if (!wc) {
			kaas_conn_req_free(req);
			kaas_conn_close(c, "out of memory");
			return;
		}
		wc->req = req;
		size_t hl = req->hdr.resp_tags ? 9 : 8;
		uint32_t size = (uint32_t)(hl - 4 + req->w.len);
		uint32_t corr = (uint32_t)req->hdr.correlation_id;
		for (int i = 0; i < 4; i++) {
			wc->hdr[i] = (uint8_t)(size >> (24 - 8 * i));
			wc->hdr[4 + i] = (uint8_t)(corr >> (24 - 8 * i));
		}
		wc->hdr[8] = 0; /* empty tag section */
		uv_buf_t bufs[2] = { uv_buf_init((char *)wc->hdr, (unsigned)hl),
				     uv_buf_init((char *)req->w.buf, (unsigned)req->w.len) };
		int rc = uv_write(&wc->w, (uv_stream_t *)&c->tcp, bufs, req->w.len ? 2 : 1,
				  on_written);
		if (rc == 0)
			c->writes++;
		if (rc < 0) {
			free(wc);
			kaas_conn_req_free(req);
			kaas_conn_close(c, uv_strerror(rc));
			return;
		}
	}
	conn_maybe_resume(c);
}

void kaas_req_finish(struct kaas_req *req, int status)
{
	req->done = 1;
	req->status = status;
	kaas_server_metrics_request(req, status);
	struct kaas_conn *c = req->conn;
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

static void conn_maybe_resume(struct kaas_conn *c)
{
	if (c->closing || c->reading || c->s->b->draining)
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

/* Cut complete frames off the read buffer and dispatch them, while reading
 * is on (a paused connection keeps its buffered frames for later). */
static void conn_frames(struct kaas_conn *c)
{
	struct kaas_server *sv = c->s;
	struct kaas_broker *b = sv->b;
	size_t pos = 0;
	c->in_frames = 1;
	while (!c->closing && c->reading && c->rlen - pos >= 4) {
		const uint8_t *p = c->rbuf + pos;
		int32_t size = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
					 ((uint32_t)p[2] << 8) | p[3]);
		if (size < 10 || (size_t)size > b->cfg.max_request_bytes) {
			char why[96];
			snprintf(why, sizeof(why), "frame size %d outside [10, %zu]", size,
				 b->cfg.max_request_bytes);
			kaas_conn_close(c, why);
			c->in_frames = 0;
			return;
		}
		if (c->rlen - pos - 4 < (size_t)size)
			break;
		struct kaas_req *req = calloc(1, sizeof(*req));
		uint8_t *frame = req ? malloc((size_t)size) : NULL;
		if (!frame) {
			free(req);
			kaas_conn_close(c, "out of memory");
			c->in_frames = 0;
			return;
		}
		memcpy(frame, p + 4, (size_t)size);
		pos += 4 + (size_t)size;
		req->frame = frame;
		req->frame_len = (size_t)size;
		req->conn = c;
		req->broker = b;
		req->start_ms = kaas_now_ms();
		kaas_kr_init(&req->r, frame, (size_t)size);
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
		if (c->queued >= MAX_QUEUED_REQS ||
		    uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) >= MAX_QUEUED_WRITE) {
			kaas_conn_read_stop(c);
			break;
		}
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

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct kaas_conn *c = s->data;
	if (nread < 0) {
		kaas_conn_close(c, nread == UV_EOF ? NULL : uv_strerror((int)nread));
		return;
	}
	if (nread == 0)
		return;
	if (buf->base == NULL) {
		kaas_conn_close(c, "out of memory");
		return;
	}
	c->rlen += (size_t)nread;
	conn_frames(c);
}

void kaas_conn_accept(uv_stream_t *listener, int status)
{
	struct kaas_server *s = listener->data;
	if (status < 0 || s->b->draining)
		return;
	struct kaas_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->s = s;
	c->refs = 1;
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
	}
	kaas_debug("connection from %s", c->peer);
	conn_read_start(c);
}

