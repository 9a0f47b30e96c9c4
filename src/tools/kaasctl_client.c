/* kaasctl_client.c — the blocking one-request-at-a-time Kafka client of
 * kaasctl's broker commands (see kaasctl_client.h). */
#include "tools/kaasctl_client.h"

#include <assert.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "kafka/protocol.h"

#define MAX_FRAME (64u << 20)

int kctl_split_hostport(const char *s, char *host, size_t hostsz, int *port)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s || !colon[1])
		return -1;
	const char *h = s;
	size_t hl = (size_t)(colon - s);
	if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	char *e;
	long p = strtol(colon + 1, &e, 10);
	if (*e || p <= 0 || p > 65535 || hl == 0 || hl >= hostsz)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return 0;
}

static int dial(struct kctl_conn *c, const char *host, int port, int timeout_ms)
{
	char service[16];
	snprintf(service, sizeof service, "%d", port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
	int g = getaddrinfo(host, service, &hints, &ai);
	if (g != 0) {
		snprintf(c->why, sizeof c->why, "%s: cannot resolve: %s", c->addr, gai_strerror(g));
		return -1;
	}
	int err = ECONNREFUSED;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect too */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			c->fd = fd;
			break;
		}
		err = errno;
		close(fd);
	}
	freeaddrinfo(ai);
	if (c->fd < 0) {
		snprintf(c->why, sizeof c->why, "%s: cannot connect: %s", c->addr,
			 err == EINPROGRESS || err == EAGAIN ? "timed out" : strerror(err));
		return -1;
	}
	return 0;
}

/* Move exactly n bytes in direction `out`: 0, or -1 with c->why. */
static int move_all(struct kctl_conn *c, void *p, size_t n, int out)
{
	unsigned char *b = p;
	while (n) {
		if (c->ssl) {
			long k = kctl_tls_io(c, b, n, out);
			if (k < 0)
				return -1;
			if (k == 0) {
				snprintf(c->why, sizeof c->why, "%s: the broker closed the connection",
					 c->addr);
				return -1;
			}
			b += k;
			n -= (size_t)k;
			continue;
		}
		ssize_t k = out ? send(c->fd, b, n, MSG_NOSIGNAL) : recv(c->fd, b, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			const char *e = k == 0 ? "the broker closed the connection"
				: errno == EAGAIN || errno == EWOULDBLOCK ? "timed out"
				: strerror(errno);
			snprintf(c->why, sizeof c->why, "%s: %s", c->addr, e);
			return -1;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

void kctl_req_begin(struct kctl_conn *c, struct kaas_kw *w, int16_t api, int16_t version,
		    int flex)
{
	kaas_kw_init(w);
	kaas_kw_i32(w, 0); /* the size, set by kctl_conn_call */
	kaas_kw_i16(w, api);
	kaas_kw_i16(w, version);
	kaas_kw_i32(w, c->corr);
	kaas_kw_str(w, 0, "kaasctl"); /* the client id is never compact */
	kaas_kw_tags(w, flex);
}

int kctl_conn_call(struct kctl_conn *c, struct kaas_kw *w, int flex, uint8_t **buf,
		   struct kaas_kr *r)
{
	assert(c->fd >= 0 && w->len >= 12);
	*buf = NULL;
	int rc = -1;
	if (w->err) {
		snprintf(c->why, sizeof c->why, "out of memory building a request");
		goto out;
	}
	kaas_kw_put_i32_at(w, 0, (int32_t)(w->len - 4));
	if (move_all(c, w->buf, w->len, 1) < 0)
		goto out;
	unsigned char sz[4];
	if (move_all(c, sz, 4, 0) < 0)
		goto out;
	size_t len = ((size_t)sz[0] << 24) | ((size_t)sz[1] << 16) | ((size_t)sz[2] << 8) | sz[3];
	if (len < 4 || len > MAX_FRAME) {
		snprintf(c->why, sizeof c->why, "%s: an answer of %zu bytes", c->addr, len);
		goto out;
	}
	*buf = malloc(len);
	if (!*buf) {
		snprintf(c->why, sizeof c->why, "out of memory");
		goto out;
	}
	if (move_all(c, *buf, len, 0) < 0)
		goto out;
	kaas_kr_init(r, *buf, len);
	int32_t corr = kaas_kr_i32(r);
	kaas_kr_tags(r, flex);
	if (!kaas_kr_ok(r) || corr != c->corr) {
		snprintf(c->why, sizeof c->why, "%s: answer to request %d, expected %d", c->addr,
			 (int)corr, (int)c->corr);
		goto out;
	}
	rc = 0;
out:
	c->corr++;
	kaas_kw_free(w);
	if (rc < 0) {
		free(*buf);
		*buf = NULL;
		kctl_conn_close(c); /* the stream is out of step: nothing more on it */
	}
	return rc;
}

int kctl_conn_pick(struct kctl_conn *c, int16_t api, int16_t lo, int16_t hi)
{
	assert(api >= 0 && api < KCTL_MAX_API && lo <= hi);
	int16_t bmin = c->vmin[api], bmax = c->vmax[api];
	if (bmax < 0) {
		snprintf(c->why, sizeof c->why, "%s does not serve API %d", c->addr, api);
		return -1;
	}
	int16_t v = hi < bmax ? hi : bmax;
	if (v < lo || v < bmin) {
		snprintf(c->why, sizeof c->why,
			 "%s serves API %d in versions %d-%d, kaasctl speaks %d-%d", c->addr, api,
			 bmin, bmax, lo, hi);
		return -1;
	}
	return v;
}

/* ApiVersions v0: the broker's ranges into c. */
static int api_versions(struct kctl_conn *c)
{
	for (int i = 0; i < KCTL_MAX_API; i++)
		c->vmin[i] = c->vmax[i] = -1;
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_API_VERSIONS, 0, 0);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return -1;
	int16_t err = kaas_kr_i16(&r);
	int32_t n = kaas_kr_array(&r, 0, 6);
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		int16_t key = kaas_kr_i16(&r), lo = kaas_kr_i16(&r), hi = kaas_kr_i16(&r);
		if (key >= 0 && key < KCTL_MAX_API && lo <= hi) {
			c->vmin[key] = lo;
			c->vmax[key] = hi;
		}
	}
	int ok = kaas_kr_ok(&r);
	free(buf);
	if (!ok || err) {
		snprintf(c->why, sizeof c->why, "%s: ApiVersions answered %s", c->addr,
			 ok ? kctl_kerr_name(err) : "a malformed answer");
		return -1;
	}
	return 0;
}

int kctl_conn_open(struct kctl_conn *c, const char *host, int port,
		   const struct kctl_client_cfg *cfg)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->corr = 1;
	snprintf(c->addr, sizeof c->addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	if (dial(c, host, port, cfg->timeout_ms > 0 ? cfg->timeout_ms : 30000) < 0)
		return -1;
	if ((cfg->tls && kctl_tls_start(c, host, cfg) < 0) || api_versions(c) < 0 || (cfg->sasl && kctl_sasl_authenticate(c, cfg) < 0)) {
		kctl_conn_close(c);
		return -1;
	}
	return 0;
}

void kctl_conn_close(struct kctl_conn *c)
{
	kctl_tls_close(c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
