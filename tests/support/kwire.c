/* kwire.c — connecting, request framing, response frames and the Produce
 * request of the raw Kafka test clients (contracts in kwire.h). */
#include "tests/support/kwire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/crc32c.h"

#define KWIRE_MAX_FRAME (64u << 20)

int kwire_connect(const char *hostport, int timeout_ms)
{
	char host[64];
	const char *colon = strrchr(hostport, ':');
	if (!colon || (size_t)(colon - hostport) >= sizeof(host))
		return -1;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		goto fail;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (errno != EINPROGRESS)
			goto fail;
		struct pollfd pf = { fd, POLLOUT, 0 };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (poll(&pf, 1, timeout_ms) <= 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr != 0)
			goto fail;
	}
	if (fcntl(fd, F_SETFL, flags) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

void kwire_begin(struct kaas_kw *w, int16_t key, int16_t version, int32_t corr,
		 const char *client)
{
	kaas_kw_init(w);
	kaas_kw_i32(w, 0); /* size, patched by kwire_finish */
	kaas_kw_i16(w, key);
	kaas_kw_i16(w, version);
	kaas_kw_i32(w, corr);
	kaas_kw_str(w, 0, client);
}

void kwire_finish(struct kaas_kw *w)
{
	kaas_kw_put_i32_at(w, 0, (int32_t)(w->len - 4));
}

int kwire_send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t s = send(fd, c, n, MSG_NOSIGNAL);
		if (s <= 0)
			return -1;
		c += s;
		n -= (size_t)s;
	}
	return 0;
}

int kwire_send(int fd, struct kaas_kw *w)
{
	kwire_finish(w);
	int rc = w->err ? -1 : kwire_send_all(fd, w->buf, w->len);
	kaas_kw_free(w);
	return rc;
}

int kwire_recv_all(int fd, void *p, size_t n, int timeout_ms)
{
	char *c = p;
	while (n) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int pr = poll(&pf, 1, timeout_ms);
		if (pr == 0)
			return -2;
		if (pr < 0)
			return -1;
		ssize_t r = recv(fd, c, n, 0);
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int kwire_readable(int fd, int timeout_ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	return poll(&pf, 1, timeout_ms) > 0;
}

uint8_t *kwire_recv(int fd, int32_t *corr, size_t *len, int timeout_ms)
{
	uint8_t h[8];
	if (kwire_recv_all(fd, h, sizeof(h), timeout_ms) < 0)
		return NULL;
	struct kaas_kr r;
	kaas_kr_init(&r, h, sizeof(h));
	uint32_t size = kaas_kr_u32(&r);
	int32_t c = kaas_kr_i32(&r);
	if (size < 4 || size > KWIRE_MAX_FRAME)
		return NULL;
	*len = size - 4;
	uint8_t *b = malloc(*len + 1);
	if (!b || kwire_recv_all(fd, b, *len, timeout_ms) < 0) {
		free(b);
		return NULL;
	}
	if (corr)
		*corr = c;
	return b;
}

uint8_t *kwire_answer(int fd, struct kaas_kr *r, int timeout_ms)
{
	size_t len = 0;
	uint8_t *b = kwire_recv(fd, NULL, &len, timeout_ms);
	if (b)
		kaas_kr_init(r, b, len);
	return b;
}

uint8_t *kwire_call(int fd, struct kaas_kw *w, struct kaas_kr *r, int timeout_ms)
{
	if (kwire_send(fd, w) < 0)
		return NULL;
	return kwire_answer(fd, r, timeout_ms);
}

void kwire_record(struct kaas_kw *recs, int64_t ts_delta, int32_t offset_delta,
		  const void *value, int32_t len)
{
	struct kaas_kw rec;
	kaas_kw_init(&rec);
	kaas_kw_i8(&rec, 0);      /* attributes */
	kaas_kw_varlong(&rec, ts_delta);
	kaas_kw_varint(&rec, offset_delta);
	kaas_kw_varint(&rec, -1); /* null key */
	kaas_kw_varint(&rec, len);
	kaas_kw_raw(&rec, value, (size_t)len);
	kaas_kw_varint(&rec, 0);  /* headers */
	kaas_kw_varint(recs, (int32_t)rec.len);
	kaas_kw_raw(recs, rec.buf, rec.len);
	kaas_kw_free(&rec);
}

void kwire_batch(struct kaas_kw *w, const struct kwire_batch *h, const void *payload, size_t len)
{
	struct kaas_kw b;
	kaas_kw_init(&b);
	kaas_kw_i64(&b, 0);  /* base offset */
	kaas_kw_i32(&b, 0);  /* length, patched */
	kaas_kw_i32(&b, -1); /* partition leader epoch */
	kaas_kw_i8(&b, 2);   /* magic */
	kaas_kw_i32(&b, 0);  /* crc, patched */
	kaas_kw_i16(&b, h->attributes);
	kaas_kw_i32(&b, h->last_offset_delta);
	kaas_kw_i64(&b, h->first_ts);
	kaas_kw_i64(&b, h->max_ts);
	kaas_kw_i64(&b, h->producer_id);
	kaas_kw_i16(&b, h->producer_epoch);
	kaas_kw_i32(&b, h->base_sequence);
	kaas_kw_i32(&b, h->count);
	kaas_kw_raw(&b, payload, len);
	if (b.err == 0) {
		/* The length counts from the leader epoch on; the CRC covers what
		 * follows the CRC field (offset 21). */
		kaas_kw_put_i32_at(&b, 8, (int32_t)(b.len - 12));
		uint32_t crc = kaas_crc32c(0, b.buf + 21, b.len - 21) ^ h->crc_flip;
		kaas_kw_put_i32_at(&b, 17, (int32_t)crc);
	}
	kaas_kw_bytes(w, 0, b.buf, (int32_t)b.len);
	kaas_kw_free(&b);
}

void kwire_produce_begin(struct kaas_kw *w, int32_t corr, const char *client, const char *topic)
{
	kwire_begin(w, 0, 3, corr, client);
	kaas_kw_str(w, 0, NULL); /* transactional id */
	kaas_kw_i16(w, -1);      /* acks */
	kaas_kw_i32(w, 10000);   /* timeout ms */
	kaas_kw_i32(w, 1);       /* topics */
	kaas_kw_str(w, 0, topic);
	kaas_kw_i32(w, 1);       /* partitions */
	kaas_kw_i32(w, 0);       /* partition index */
}

int kwire_produce_answer(struct kaas_kr *r, int16_t *err, int64_t *base_offset)
{
	(void)kaas_kr_i32(r); /* topics: 1 */
	(void)kaas_kr_str(r, 0);
	(void)kaas_kr_i32(r); /* partitions: 1 */
	(void)kaas_kr_i32(r); /* partition index */
	int16_t e = kaas_kr_i16(r);
	int64_t off = kaas_kr_i64(r);
	if (!kaas_kr_ok(r))
		return -1;
	if (err)
		*err = e;
	if (base_offset)
		*base_offset = off;
	return 0;
}
