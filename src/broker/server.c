/*
 * server.c — the network loop: accept, frame, dispatch, answer in order.
 *
 * One libuv loop thread owns every connection.  Frames are
 * [int32 size][size bytes]; a size below the smallest header or above
 * max_request_bytes, a header that does not parse, an unknown API key or an
 * unsupported version (except ApiVersions, which answers
 * UNSUPPORTED_VERSION as KIP-511 asks) close that connection only.
 * Handlers that may block on the volume run on libuv's work queue; Produce
 * and Fetch run on the loop and are completed later through the async
 * handle (fsync completions from the log's sync thread, data arrivals).
 */
#include "broker/broker.h"
#include "broker/agent.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/groups.h"
#include "broker/idempotence.h"
#include "util/logger.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/status.h"

#define READ_CHUNK (64u * 1024)
#define MAX_QUEUED_REQS 512
#define MAX_QUEUED_WRITE (64u << 20)

struct kaas_conn {
	uv_tcp_t tcp;
	struct kaas_broker *b;
	struct kaas_conn *prev, *next; /* all connections */
	uint8_t *rbuf;
	size_t rlen, rcap;
	struct kaas_req *head, *tail;
	size_t queued;
	int closing;
	int reading;
	int in_frames;            /* conn_frames is on the stack */
	int writes;               /* uv_write requests not yet completed */
	int zc_busy;              /* a zero-copy send owns the socket */
	int close_deferred;       /* closed while zc_busy: uv_close after it */
	int refs;                 /* 1 for the handle + 1 per request not yet freed */
	char peer[64];
};

static struct kaas_conn conns = { .prev = &conns, .next = &conns };

const char *kaas_conn_peer(const struct kaas_conn *c)
{
	return c ? c->peer : "";
}

uint64_t kaas_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------ connections */

static void conn_unref(struct kaas_conn *c)
{
	if (--c->refs > 0)
		return;
	c->prev->next = c->next;
	c->next->prev = c->prev;
	c->b->nconns--;
	free(c->rbuf);
	free(c);
}

static void on_conn_closed(uv_handle_t *h)
{
	conn_unref(h->data);
}

static void req_free(struct kaas_req *req)
{
	if (req->ctx_free)
		req->ctx_free(req->ctx);
	kaas_kw_free(&req->w);
	free(req->zc);
	free(req->frame);
	struct kaas_conn *c = req->conn;
	struct kaas_broker *b = req->broker;
	b->inflight--;
	free(req);
	conn_unref(c);
}

static void conn_read_stop(struct kaas_conn *c);

static void conn_close(struct kaas_conn *c, const char *why)
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
			req_free(r);
		} else {
			pp = &r->next;
		}
	}
	c->tail = NULL;
	for (struct kaas_req *r = c->head; r; r = r->next)
		c->tail = r;
	if (c->zc_busy) {
		/* A work-queue thread is writing to the socket: close after it. */
		conn_read_stop(c);
		c->close_deferred = 1;
		return;
	}
	uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
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
static void conn_flush(struct kaas_conn *c);

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
		conn_close(c, uv_strerror(status));
	c->refs++; /* keep c while the request goes */
	c->writes--;
	req_free(req);
	free(wc);
	/* A zero-copy send may be waiting for the queue to drain; reading may
	 * have stopped on a full write queue. */
	if (!c->closing && c->writes == 0 && c->head && c->head->done && c->head->zc)
		conn_flush(c);
	conn_maybe_resume(c);
	conn_unref(c);
}


/* ------------------------------------------------------ zero-copy send */

#define ZC_STALL_MS 30000

/* Wait until the socket takes more: 0, or -ETIMEDOUT after ZC_STALL_MS of
 * no progress (a peer that stopped reading), or -errno. */
static int zc_wait_writable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	for (;;) {
		int n = poll(&pf, 1, ZC_STALL_MS);
		if (n > 0)
			return (pf.revents & (POLLERR | POLLHUP | POLLNVAL)) ? -EPIPE : 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int zc_send_bytes(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = zc_wait_writable(fd);
			if (rc < 0)
				return rc;
			continue;
		}
		return w < 0 ? -errno : -EPIPE;
	}
	return 0;
}

static int zc_send_slice(int fd, struct kaas_log_slice *s)
{
	size_t off = 0;
	while (off < s->len) {
		ssize_t w = kaas_log_slice_sendfile(s, fd, off, s->len - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w == -EAGAIN) {
			int rc = zc_wait_writable(fd);
			if (rc < 0)
				return rc;
			continue;
		}
		return w < 0 ? (int)w : -EIO; /* 0: the segment ended early */
	}
	return 0;
}

/* Work queue: the whole response — header, body bytes and the segment
 * slices between them — written to the socket in order.  The loop writes
 * nothing on this connection meanwhile (zc_busy). */
static void zc_work(uv_work_t *w)
{
	struct kaas_req *req = w->data;
	int fd = req->zc_fd;
	uint8_t hdr[9];
	size_t hl = req->hdr.resp_tags ? 9 : 8;
	uint32_t size = (uint32_t)(hl - 4 + req->w.len + req->zc_bytes);
	uint32_t corr = (uint32_t)req->hdr.correlation_id;
	for (int i = 0; i < 4; i++) {
		hdr[i] = (uint8_t)(size >> (24 - 8 * i));
		hdr[4 + i] = (uint8_t)(corr >> (24 - 8 * i));
	}
	hdr[8] = 0;
	int rc = zc_send_bytes(fd, hdr, hl);
	size_t at = 0;
	for (int i = 0; rc == 0 && i < req->nzc; i++) {
		rc = zc_send_bytes(fd, req->w.buf + at, req->zc[i].at - at);
		if (rc == 0)
			rc = zc_send_slice(fd, req->zc[i].slice);
		at = req->zc[i].at;
	}
	if (rc == 0)
		rc = zc_send_bytes(fd, req->w.buf + at, req->w.len - at);
	req->zc_result = rc;
}

static void zc_done(uv_work_t *w, int status)
{
	struct kaas_req *req = w->data;
	struct kaas_conn *c = req->conn;
	struct kaas_broker *b = req->broker;
	b->pool_jobs--;
	c->zc_busy = 0;
	c->refs++; /* keep c while the request goes */
	int rc = status < 0 ? status : req->zc_result;
	req_free(req);
	if (c->close_deferred) {
		c->close_deferred = 0;
		uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
	} else if (rc < 0) {
		char why[96];
		snprintf(why, sizeof(why), "sending a fetch response: %s", kaas_strerror(rc));
		conn_close(c, why);
	} else {
		conn_flush(c);
	}
	conn_unref(c);
}

static void zc_start(struct kaas_conn *c, struct kaas_req *req)
{
	uv_os_fd_t fd;
	int rc = uv_fileno((uv_handle_t *)&c->tcp, &fd);
	if (rc == 0) {
		kaas_debug("connection %s: fetch response with %zu record bytes by sendfile",
			   c->peer, req->zc_bytes);
		req->zc_fd = fd;
		req->work.data = req;
		c->zc_busy = 1;
		req->broker->pool_jobs++;
		rc = uv_queue_work(req->broker->loop, &req->work, zc_work, zc_done);
		if (rc < 0) {
			c->zc_busy = 0;
			req->broker->pool_jobs--;
		}
	}
	if (rc < 0) {
		req_free(req);
		conn_close(c, "cannot start a zero-copy send");
	}
}

/* Send every finished request at the head of the queue, in order. */
static void conn_flush(struct kaas_conn *c)
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
			zc_start(c, req);
			return;
		}
		c->head = req->next;
		if (!c->head)
			c->tail = NULL;
		c->queued--;
		if (req->status == KAAS_REQ_CLOSE) {
			req_free(req);
			conn_close(c, "malformed request");
			return;
		}
		if (req->status == KAAS_REQ_NO_RESPONSE) {
			req_free(req);
			continue;
		}
		if (req->w.err) {
			req_free(req);
			conn_close(c, "out of memory building a response");
			return;
		}
		struct write_ctx *wc = malloc(sizeof(*wc));
		if (!wc) {
			req_free(req);
			conn_close(c, "out of memory");
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
			req_free(req);
			conn_close(c, uv_strerror(rc));
			return;
		}
	}
	conn_maybe_resume(c);
}

void kaas_req_finish(struct kaas_req *req, int status)
{
	req->done = 1;
	req->status = status;
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
		req_free(req);
		return;
	}
	conn_flush(c);
}

/* ------------------------------------------------------------ dispatch */

struct api_entry {
	int16_t key;
	kaas_loop_handler loop;
	kaas_pool_handler pool;
};

static const struct api_entry handlers[] = {
	{ KAAS_API_PRODUCE, kaas_api_produce, NULL },
	{ KAAS_API_FETCH, kaas_api_fetch, NULL },
	{ KAAS_API_LIST_OFFSETS, NULL, kaas_api_list_offsets },
	{ KAAS_API_METADATA, NULL, kaas_api_metadata },
	{ KAAS_API_OFFSET_COMMIT, kaas_api_offset_commit, NULL },
	{ KAAS_API_OFFSET_FETCH, kaas_api_offset_fetch, NULL },
	{ KAAS_API_FIND_COORDINATOR, NULL, kaas_api_find_coordinator },
	{ KAAS_API_JOIN_GROUP, kaas_api_join_group, NULL },
	{ KAAS_API_HEARTBEAT, kaas_api_heartbeat, NULL },
	{ KAAS_API_LEAVE_GROUP, kaas_api_leave_group, NULL },
	{ KAAS_API_SYNC_GROUP, kaas_api_sync_group, NULL },
	{ KAAS_API_DESCRIBE_GROUPS, kaas_api_describe_groups, NULL },
	{ KAAS_API_LIST_GROUPS, kaas_api_list_groups, NULL },
	{ KAAS_API_INIT_PRODUCER_ID, NULL, kaas_api_init_producer_id },
	{ KAAS_API_API_VERSIONS, NULL, kaas_api_versions },
	{ KAAS_API_CREATE_TOPICS, NULL, kaas_api_create_topics },
	{ KAAS_API_DELETE_TOPICS, NULL, kaas_api_delete_topics },
	{ KAAS_API_DESCRIBE_CONFIGS, NULL, kaas_api_describe_configs },
	{ KAAS_API_CREATE_PARTITIONS, NULL, kaas_api_create_partitions },
	{ -1, NULL, NULL },
};

static const struct api_entry *find_handler(int16_t key)
{
	for (const struct api_entry *e = handlers; e->key >= 0; e++)
		if (e->key == key)
			return e;
	return NULL;
}

static void pool_work(uv_work_t *w)
{
	struct kaas_req *req = w->data;
	const struct api_entry *e = find_handler(req->hdr.api_key);
	req->status = e->pool(req);
}

static void pool_done(uv_work_t *w, int status)
{
	struct kaas_req *req = w->data;
	req->broker->pool_jobs--;
	kaas_req_finish(req, status < 0 ? KAAS_REQ_CLOSE : req->status);
}

static void dispatch(struct kaas_conn *c, struct kaas_req *req)
{
	int rc = kaas_req_header_parse(&req->r, &req->hdr);
	if (rc < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	const struct api_entry *e = find_handler(req->hdr.api_key);
	if (!e) {
		kaas_warn("connection %s: unknown API key %d", c->peer, req->hdr.api_key);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (!kaas_api_supported(req->hdr.api_key, req->hdr.api_version) &&
	    req->hdr.api_key != KAAS_API_API_VERSIONS) {
		kaas_warn("connection %s: unsupported version %d of API %d", c->peer,
			  req->hdr.api_version, req->hdr.api_key);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (e->loop) {
		e->loop(req);
		return;
	}
	req->work.data = req;
	req->broker->pool_jobs++;
	rc = uv_queue_work(req->broker->loop, &req->work, pool_work, pool_done);
	if (rc < 0) {
		req->broker->pool_jobs--;
		kaas_req_finish(req, KAAS_REQ_CLOSE);
	}
}

static void conn_frames(struct kaas_conn *c);

static void conn_maybe_resume(struct kaas_conn *c)
{
	if (c->closing || c->reading || c->b->draining)
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

static void conn_read_stop(struct kaas_conn *c)
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
	struct kaas_broker *b = c->b;
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
			conn_close(c, why);
			c->in_frames = 0;
			return;
		}
		if (c->rlen - pos - 4 < (size_t)size)
			break;
		struct kaas_req *req = calloc(1, sizeof(*req));
		uint8_t *frame = req ? malloc((size_t)size) : NULL;
		if (!frame) {
			free(req);
			conn_close(c, "out of memory");
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
		b->inflight++;
		if (c->tail)
			c->tail->next = req;
		else
			c->head = req;
		c->tail = req;
		c->queued++;
		dispatch(c, req);
		if (c->queued >= MAX_QUEUED_REQS ||
		    uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) >= MAX_QUEUED_WRITE) {
			conn_read_stop(c);
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
		conn_close(c, nread == UV_EOF ? NULL : uv_strerror((int)nread));
		return;
	}
	if (nread == 0)
		return;
	if (buf->base == NULL) {
		conn_close(c, "out of memory");
		return;
	}
	c->rlen += (size_t)nread;
	conn_frames(c);
}

static void on_connection(uv_stream_t *server, int status)
{
	struct kaas_broker *b = server->data;
	if (status < 0 || b->draining)
		return;
	struct kaas_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->b = b;
	c->refs = 1;
	uv_tcp_init(b->loop, &c->tcp);
	c->tcp.data = c;
	c->next = &conns;
	c->prev = conns.prev;
	conns.prev->next = c;
	conns.prev = c;
	b->nconns++;
	if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
		conn_close(c, "accept failed");
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

/* ------------------------------------------------ cross-thread wake-ups */

void kaas_broker_complete(struct kaas_broker *b, struct kaas_completion *c)
{
	c->next = NULL;
	pthread_mutex_lock(&b->cq_mu);
	if (b->cq_tail)
		b->cq_tail->next = c;
	else
		b->cq_head = c;
	b->cq_tail = c;
	pthread_mutex_unlock(&b->cq_mu);
	uv_async_send(&b->async);
}

void kaas_broker_park(struct kaas_broker *b, struct kaas_fetch_waiter *w)
{
	w->next = &b->waiters;
	w->prev = b->waiters.prev;
	b->waiters.prev->next = w;
	b->waiters.prev = w;
}

void kaas_broker_unpark(struct kaas_fetch_waiter *w)
{
	if (!w->next)
		return;
	w->prev->next = w->next;
	w->next->prev = w->prev;
	w->next = w->prev = NULL;
}

static void wake_all_waiters(struct kaas_broker *b)
{
	/* Move the list aside first: a woken waiter may park again. */
	struct kaas_fetch_waiter list = { .prev = &list, .next = &list };
	if (b->waiters.next == &b->waiters)
		return;
	list.next = b->waiters.next;
	list.prev = b->waiters.prev;
	list.next->prev = &list;
	list.prev->next = &list;
	b->waiters.next = b->waiters.prev = &b->waiters;
	while (list.next != &list) {
		struct kaas_fetch_waiter *w = list.next;
		kaas_broker_unpark(w);
		w->wake(w);
	}
}

static void on_async(uv_async_t *a)
{
	struct kaas_broker *b = a->data;
	pthread_mutex_lock(&b->cq_mu);
	struct kaas_completion *c = b->cq_head;
	b->cq_head = b->cq_tail = NULL;
	int arrived = b->data_arrived;
	b->data_arrived = 0;
	pthread_mutex_unlock(&b->cq_mu);
	while (c) {
		struct kaas_completion *n = c->next;
		c->fn(c);
		c = n;
	}
	if (arrived)
		wake_all_waiters(b);
}

/* kaas_log notify callback (the log's sync thread). */
static void on_data(void *arg, int64_t hw)
{
	struct kaas_broker *b = arg;
	(void)hw;
	pthread_mutex_lock(&b->cq_mu);
	b->data_arrived = 1;
	pthread_mutex_unlock(&b->cq_mu);
	uv_async_send(&b->async);
}

/* ----------------------------------------------------- housekeeping */

/* How often the controller sweeps dead writers' temps (broker/sweep.h). */
#define SWEEP_INTERVAL_MS 30000

/* Sweep dead writers' temps and private names: the controller (or a broker
 * without a cluster agent) only, every SWEEP_INTERVAL_MS. */
static void hk_sweep(struct kaas_broker *b)
{
	uint64_t now = kaas_now_ms();
	if (b->last_sweep_ms && now - b->last_sweep_ms < SWEEP_INTERVAL_MS)
		return;
	if (b->agent && kaas_agent_controller(b->agent) != b->cfg.broker_id)
		return;
	b->last_sweep_ms = now;
	b->sweeper.grace_ms = 2 * (uint64_t)b->cfg.liveness_ms;
	int rc = kaas_sweeper_pass(&b->sweeper, b->agent, b->cluster, b->data, now);
	if (rc > 0)
		kaas_info("swept %d dead writers' temp or private name(s)", rc);
	else if (rc < 0)
		kaas_warn("sweeping dead writers' temps: %s (%s); the next pass retries",
			  kaas_strerror(rc), kaas_sub_errdetail());
}

static void hk_work(uv_work_t *w)
{
	struct kaas_broker *b = w->data;
	hk_sweep(b);
	(void)kaas_topics_housekeep(b->topics);
	int n = 0;
	struct kaas_topic **v = kaas_topics_list(b->topics, &n);
	for (int i = 0; i < n; i++) {
		for (int32_t p = 0; p < v[i]->npart; p++)
			if (v[i]->parts[p].log)
				(void)kaas_log_housekeep(v[i]->parts[p].log, 0);
		kaas_topic_put(v[i]);
	}
	free(v);
}

static void hk_done(uv_work_t *w, int status)
{
	struct kaas_broker *b = w->data;
	b->housekeep_busy = 0;
	b->pool_jobs--;
	free(w);
}

static void on_housekeep(uv_timer_t *t)
{
	struct kaas_broker *b = t->data;
	if (b->housekeep_busy || b->draining)
		return;
	uv_work_t *w = malloc(sizeof(*w));
	if (!w)
		return;
	w->data = b;
	b->housekeep_busy = 1;
	b->pool_jobs++;
	if (uv_queue_work(b->loop, w, hk_work, hk_done) < 0) {
		b->housekeep_busy = 0;
		b->pool_jobs--;
		free(w);
	}
}

/* ------------------------------------------------------------ shutdown */

static void on_drain_tick(uv_timer_t *t)
{
	struct kaas_broker *b = t->data;
	wake_all_waiters(b);
	if (b->inflight || b->pool_jobs)
		return;
	kaas_info("in-flight requests finished; closing %zu connection(s)", b->nconns);
	for (struct kaas_conn *c = conns.next; c != &conns;) {
		struct kaas_conn *n = c->next;
		conn_close(c, NULL);
		c = n;
	}
	uv_close((uv_handle_t *)&b->drain_timer, NULL);
	uv_close((uv_handle_t *)&b->housekeep, NULL);
	uv_close((uv_handle_t *)&b->async, NULL);
	uv_close((uv_handle_t *)&b->sigterm, NULL);
	uv_close((uv_handle_t *)&b->sigint, NULL);
}

static void on_signal(uv_signal_t *s, int signum)
{
	struct kaas_broker *b = s->data;
	if (b->draining)
		return;
	kaas_info("signal %d: stopping (no new connections, finishing in-flight requests)",
		  signum);
	b->draining = 1;
	uv_close((uv_handle_t *)&b->server, NULL);
	for (struct kaas_conn *c = conns.next; c != &conns; c = c->next)
		conn_read_stop(c);
	uv_timer_start(&b->drain_timer, on_drain_tick, 0, 20);
}

/* Stop what kaas_broker_run started, in reverse order (each is NULL-safe). */
static void stop_services(struct kaas_broker *b)
{
	kaas_worker_stop(b->produce_worker);
	b->produce_worker = NULL;
	kaas_groups_destroy(b->groups);
	b->groups = NULL;
	kaas_idem_stop(b);
	kaas_agent_stop(b->agent);
	b->agent = NULL;
}

int kaas_broker_run(struct kaas_broker *b)
{
	b->waiters.next = b->waiters.prev = &b->waiters;
	pthread_mutex_init(&b->cq_mu, NULL);
	uv_async_init(b->loop, &b->async, on_async);
	b->async.data = b;
	int rc = kaas_agent_new(b->cluster, &b->cfg, &b->agent);
	if (rc >= 0)
		rc = kaas_topics_open_leased(b->data, b->cluster, kaas_agent_lease, b->agent,
					     on_data, b, &b->topics);
	if (rc < 0) {
		kaas_agent_stop(b->agent);
		b->agent = NULL;
		uv_close((uv_handle_t *)&b->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		return rc;
	}
	rc = kaas_groups_init(b, &b->groups);
	if (rc >= 0)
		rc = kaas_idem_start(b);
	if (rc < 0) {
		kaas_error("cannot set up the group coordinator / producer ids: %s (%s)",
			   kaas_strerror(rc), kaas_sub_errdetail());
		stop_services(b);
		uv_close((uv_handle_t *)&b->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		return rc;
	}
	rc = kaas_worker_start(&b->produce_worker);
	if (rc < 0) {
		stop_services(b);
		uv_close((uv_handle_t *)&b->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		return rc;
	}
	struct sockaddr_storage addr;
	if (strchr(b->cfg.listen_host, ':'))
		rc = uv_ip6_addr(b->cfg.listen_host, b->cfg.listen_port, (struct sockaddr_in6 *)&addr);
	else
		rc = uv_ip4_addr(b->cfg.listen_host, b->cfg.listen_port, (struct sockaddr_in *)&addr);
	uv_tcp_init(b->loop, &b->server);
	b->server.data = b;
	if (rc == 0)
		rc = uv_tcp_bind(&b->server, (struct sockaddr *)&addr, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&b->server, 511, on_connection);
	if (rc < 0) {
		kaas_error("cannot listen on %s:%d: %s", b->cfg.listen_host, b->cfg.listen_port,
			   uv_strerror(rc));
		uv_close((uv_handle_t *)&b->server, NULL);
		uv_close((uv_handle_t *)&b->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		stop_services(b);
		return rc == UV_EADDRINUSE ? -EADDRINUSE : -EINVAL;
	}
	if (b->cfg.listen_port == 0) {
		/* An ephemeral port (tests): advertise the one we got. */
		struct sockaddr_storage got;
		int gl = sizeof(got);
		if (uv_tcp_getsockname(&b->server, (struct sockaddr *)&got, &gl) == 0) {
			int port = got.ss_family == AF_INET6
					   ? ntohs(((struct sockaddr_in6 *)&got)->sin6_port)
					   : ntohs(((struct sockaddr_in *)&got)->sin_port);
			if (b->cfg.advertise_port == 0)
				b->cfg.advertise_port = port;
			b->cfg.listen_port = port;
		}
	}
	/* Join the cluster: the first rounds run here, before we serve. */
	rc = kaas_agent_start(b->agent, b->topics);
	if (rc < 0) {
		kaas_error("cannot start the cluster agent: %s", kaas_strerror(rc));
		uv_close((uv_handle_t *)&b->server, NULL);
		uv_close((uv_handle_t *)&b->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		stop_services(b);
		return rc;
	}
	uv_signal_init(b->loop, &b->sigterm);
	uv_signal_init(b->loop, &b->sigint);
	b->sigterm.data = b->sigint.data = b;
	uv_signal_start(&b->sigterm, on_signal, SIGTERM);
	uv_signal_start(&b->sigint, on_signal, SIGINT);
	uv_timer_init(b->loop, &b->housekeep);
	uv_timer_init(b->loop, &b->drain_timer);
	b->housekeep.data = b->drain_timer.data = b;
	uv_timer_start(&b->housekeep, on_housekeep, 5000, 5000);
	kaas_groups_start(b->groups);
	kaas_info("listening on %s:%d, advertising %s:%d as broker %d", b->cfg.listen_host,
		  b->cfg.listen_port, b->cfg.advertise_host, b->cfg.advertise_port,
		  b->cfg.broker_id);
	uv_run(b->loop, UV_RUN_DEFAULT);
	stop_services(b);
	return 0;
}
