/*
 * zerocopy.c — Fetch responses whose records go from the segment files to
 * the socket by sendfile, on the work pool, without copying them through
 * the loop.  The loop writes nothing on the connection meanwhile.
 *
 * A TLS connection cannot take sendfile (the records must be encrypted):
 * there the pool reads the slices' bytes into one buffer with the rest of
 * the response, and the loop encrypts and writes it (kaas_conn_send).
 */
#include "server/internal.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/logger.h"
#include "util/status.h"

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

/* The response header (size and correlation id, and the empty tag
 * section of flexible versions): its length. */
static size_t zc_header(const struct kaas_req *req, uint8_t hdr[9])
{
	size_t hl = req->hdr.resp_tags ? 9 : 8;
	uint32_t size = (uint32_t)(hl - 4 + req->w.len + req->zc_bytes);
	uint32_t corr = (uint32_t)req->hdr.correlation_id;
	for (int i = 0; i < 4; i++) {
		hdr[i] = (uint8_t)(size >> (24 - 8 * i));
		hdr[4 + i] = (uint8_t)(corr >> (24 - 8 * i));
	}
	hdr[8] = 0;
	return hl;
}

/* Work queue: the whole response — header, body bytes and the segment
 * slices between them — written to the socket in order.  The loop writes
 * nothing on this connection meanwhile (zc_busy). */
/* One zero-copy send on the work pool. */
struct zc_send {
	struct kaas_req *req;
	int fd;                   /* the socket */
	int result;               /* 0 or -errno of the send */
};

static void zc_work(void *arg)
{
	struct zc_send *zs = arg;
	struct kaas_req *req = zs->req;
	int fd = zs->fd;
	uint8_t hdr[9];
	size_t hl = zc_header(req, hdr);
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
	zs->result = rc;
}

/* A pool job of c's is over (loop): c's socket is the loop's again, and c
 * holds one more reference (the caller drops it at the end).  Returns 1
 * when c was closed meanwhile (its handle is closed now). */
static int zc_closed(struct kaas_conn *c)
{
	assert(c->zc_busy);
	c->zc_busy = 0;
	c->refs++; /* keep c while the request goes */
	if (!c->close_deferred)
		return 0;
	c->close_deferred = 0;
	uv_close((uv_handle_t *)&c->tcp, kaas_conn_on_closed);
	return 1;
}

static void zc_done(void *arg, int status)
{
	struct zc_send *zs = arg;
	struct kaas_req *req = zs->req;
	struct kaas_conn *c = req->conn;
	int rc = status < 0 ? status : zs->result;
	free(zs);
	int closed = zc_closed(c);
	kaas_conn_req_free(req);
	if (!closed && rc < 0) {
		char why[96];
		snprintf(why, sizeof(why), "sending a fetch response: %s", kaas_strerror(rc));
		kaas_conn_close(c, why);
	} else if (!closed) {
		kaas_conn_flush(c);
	}
	kaas_conn_unref(c);
}

/* A response assembled in memory for a TLS connection. */
struct zc_copy {
	struct kaas_req *req;
	uint8_t *buf;
	size_t len;
	int result;
};

/* Work pool: header, body and the slices' bytes, in wire order. */
static void zc_copy_work(void *arg)
{
	struct zc_copy *zc = arg;
	struct kaas_req *req = zc->req;
	uint8_t hdr[9];
	size_t hl = zc_header(req, hdr);
	zc->len = hl + req->w.len + req->zc_bytes;
	uint8_t *p = zc->buf = malloc(zc->len);
	if (!p) {
		zc->result = -ENOMEM;
		return;
	}
	memcpy(p, hdr, hl);
	p += hl;
	size_t at = 0;
	for (int i = 0; i < req->nzc; i++) {
		memcpy(p, req->w.buf + at, req->zc[i].at - at);
		p += req->zc[i].at - at;
		at = req->zc[i].at;
		struct kaas_log_slice *s = req->zc[i].slice;
		for (size_t off = 0; off < s->len;) {
			ssize_t r = kaas_log_slice_pread(s, p, s->len - off, off);
			if (r <= 0) {
				zc->result = r < 0 ? (int)r : -EIO; /* 0: the segment ended early */
				return;
			}
			off += (size_t)r;
			p += r;
		}
	}
	memcpy(p, req->w.buf + at, req->w.len - at);
}

static void zc_copy_done(void *arg, int status)
{
	struct zc_copy *zc = arg;
	struct kaas_req *req = zc->req;
	struct kaas_conn *c = req->conn;
	int rc = status < 0 ? status : zc->result;
	if (zc_closed(c)) {
		kaas_conn_req_free(req);
	} else {
		uv_buf_t b = uv_buf_init((char *)zc->buf, (unsigned)zc->len);
		if (rc == 0)
			rc = kaas_conn_send(c, req, &b, 1); /* req freed when written */
		if (rc < 0) {
			char why[96];
			snprintf(why, sizeof(why), "reading a fetch response: %s", kaas_strerror(rc));
			kaas_conn_req_free(req);
			kaas_conn_close(c, why);
		} else {
			kaas_conn_flush(c);
		}
	}
	free(zc->buf);
	free(zc);
	kaas_conn_unref(c);
}

/* Run job on the pool with c's socket reserved (zc_busy): `how` says
 * which path, for the debug log.  job NULL, or a queue that fails: job
 * and req are freed and c closed. */
static void zc_queue(struct kaas_conn *c, struct kaas_req *req, void *job, kaas_pool_work_fn work,
		     kaas_pool_done_fn done, const char *how)
{
	int rc = job ? 0 : -ENOMEM;
	if (rc == 0) {
		kaas_debug("connection %s: fetch response with %zu record bytes %s", c->peer,
			   req->zc_bytes, how);
		c->zc_busy = 1;
		rc = kaas_pool_queue(req->broker, work, done, job);
		if (rc < 0) {
			c->zc_busy = 0;
			free(job);
		}
	}
	if (rc < 0) {
		kaas_conn_req_free(req);
		kaas_conn_close(c, "cannot start sending a fetch response");
	}
}

void kaas_zc_start(struct kaas_conn *c, struct kaas_req *req)
{
	if (c->tls) {
		struct zc_copy *zc = calloc(1, sizeof(*zc));
		if (zc)
			zc->req = req;
		zc_queue(c, req, zc, zc_copy_work, zc_copy_done, "read for TLS");
		return;
	}
	uv_os_fd_t fd;
	struct zc_send *zs = uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0 ? malloc(sizeof(*zs)) : NULL;
	if (zs) {
		zs->req = req;
		zs->fd = fd;
		zs->result = 0;
	}
	zc_queue(c, req, zs, zc_work, zc_done, "by sendfile");
}
