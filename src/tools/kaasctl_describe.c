/* kaasctl_describe.c — a group's state and members, which live only in its
 * coordinator's memory: one DescribeGroups v0 request to the coordinator's
 * advertised address, bounded by a timeout (kaasctl groups). */
#include "tools/kaasctl_describe.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "kafka/codec.h"
#include "kafka/protocol.h"

/* A TCP connection to host:port whose connect, sends and receives each give
 * up after timeout_ms.  The fd, or -errno. */
static int dial(const char *host, int port, int timeout_ms)
{
	char service[16];
	snprintf(service, sizeof service, "%d", port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
	if (getaddrinfo(host, service, &hints, &ai) != 0)
		return -EHOSTUNREACH;
	int rc = -ECONNREFUSED;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect too */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			rc = fd;
			break;
		}
		rc = -errno;
		close(fd);
	}
	freeaddrinfo(ai);
	return rc;
}

/* Move exactly n bytes over fd in direction `out`: 0 or -errno. */
static int move_all(int fd, void *p, size_t n, int out)
{
	unsigned char *b = p;
	while (n) {
		ssize_t k = out ? send(fd, b, n, MSG_NOSIGNAL) : recv(fd, b, n, 0);
		if (k == 0)
			return -ECONNRESET;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Send the request, read the response frame: 0 and *buf (malloc'd), or -errno. */
static int round_trip(int fd, const char *group, uint8_t **buf, size_t *len)
{
	struct kaas_kw w;
	kaas_kw_init(&w);
	kaas_kw_i32(&w, 0); /* frame size, set below */
	kaas_kw_i16(&w, KAAS_API_DESCRIBE_GROUPS);
	kaas_kw_i16(&w, 0);
	kaas_kw_i32(&w, 1); /* correlation id */
	kaas_kw_str(&w, 0, "kaasctl");
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, group);
	int rc = w.err;
	if (rc == 0) {
		kaas_kw_put_i32_at(&w, 0, (int32_t)(w.len - 4));
		rc = move_all(fd, w.buf, w.len, 1);
	}
	kaas_kw_free(&w);
	unsigned char size[4];
	if (rc == 0)
		rc = move_all(fd, size, 4, 0);
	if (rc < 0)
		return rc;
	*len = ((size_t)size[0] << 24) | ((size_t)size[1] << 16) | ((size_t)size[2] << 8) | size[3];
	if (*len < 4 || *len > (64u << 20))
		return -EBADMSG;
	*buf = malloc(*len);
	if (!*buf)
		return -ENOMEM;
	rc = move_all(fd, *buf, *len, 0);
	if (rc < 0) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

static void add_slice(cJSON *o, const char *key, struct kaas_kslice s)
{
	char *e = kctl_escape(s.p, s.len > 0 ? (size_t)s.len : 0);
	if (e)
		cJSON_AddStringToObject(o, key, e);
	free(e);
}

/* The DescribeGroups v0 answer for one group into o. */
static int parse(const uint8_t *buf, size_t len, cJSON *o)
{
	struct kaas_kr r;
	kaas_kr_init(&r, buf, len);
	(void)kaas_kr_i32(&r); /* correlation id */
	if (kaas_kr_array(&r, 0, 2) != 1)
		return -EBADMSG;
	int16_t err = kaas_kr_i16(&r);
	(void)kaas_kr_str(&r, 0); /* group id */
	struct kaas_kslice state = kaas_kr_str(&r, 0);
	struct kaas_kslice ptype = kaas_kr_str(&r, 0);
	struct kaas_kslice proto = kaas_kr_str(&r, 0);
	int32_t n = kaas_kr_array(&r, 0, 14);
	if (!kaas_kr_ok(&r))
		return -EBADMSG;
	if (err)
		return -(1000 + err); /* a Kafka error code, reported as such */
	add_slice(o, "state", state);
	add_slice(o, "protocol_type", ptype);
	add_slice(o, "protocol", proto);
	cJSON *ms = cJSON_AddArrayToObject(o, "members");
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddItemToArray(ms, m);
		add_slice(m, "member_id", kaas_kr_str(&r, 0));
		add_slice(m, "client_id", kaas_kr_str(&r, 0));
		add_slice(m, "client_host", kaas_kr_str(&r, 0));
		(void)kaas_kr_nbytes(&r, 0); /* metadata */
		(void)kaas_kr_nbytes(&r, 0); /* assignment */
	}
	return kaas_kr_ok(&r) ? 0 : -EBADMSG;
}

int kctl_describe_group(const char *host, int port, const char *group, int timeout_ms,
			cJSON *o, char *why, size_t whysz)
{
	int fd = dial(host, port, timeout_ms);
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = fd < 0 ? fd : round_trip(fd, group, &buf, &len);
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		rc = parse(buf, len, o);
	free(buf);
	if (rc <= -1000)
		snprintf(why, whysz, "%s:%d answered Kafka error %d", host, port, -rc - 1000);
	else if (rc < 0)
		snprintf(why, whysz, "%s:%d: %s", host, port, strerror(-rc));
	return rc;
}
