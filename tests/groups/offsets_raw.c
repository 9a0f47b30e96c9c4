/*
 * offsets_raw.c — standalone OffsetCommit v7 / OffsetFetch v5 (generation
 * -1, no member: the group must be empty) against a running kaasd, printing
 * what the broker answered.
 *
 *   offsets_raw HOST:PORT commit GROUP TOPIC PARTITION OFFSET   prints ERROR
 *   offsets_raw HOST:PORT fetch GROUP TOPIC PARTITION           prints OFFSET ERROR
 * Exit 0 when an answer came (whatever its error), 1 otherwise.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kafka/codec.h"
#include "tests/support/tcp.h"

static int recv_n(int fd, uint8_t *p, size_t n)
{
	while (n) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, 15000) <= 0)
			return -1;
		ssize_t r = recv(fd, p, n, 0);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Send w (size patched) and read the response body into *body. */
static int xfer(int fd, struct kaas_kw *w, uint8_t **body, size_t *len)
{
	kaas_kw_put_i32_at(w, 0, (int32_t)(w->len - 4));
	if (send(fd, w->buf, w->len, MSG_NOSIGNAL) != (ssize_t)w->len)
		return -1;
	uint8_t h[8];
	if (recv_n(fd, h, 8) < 0)
		return -1;
	uint32_t size = ((uint32_t)h[0] << 24) | ((uint32_t)h[1] << 16) | ((uint32_t)h[2] << 8) | h[3];
	if (size < 4 || size > (1u << 24))
		return -1;
	*len = size - 4;
	*body = malloc(*len + 1);
	return *body && recv_n(fd, *body, *len) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: offsets_raw HOST:PORT commit|fetch GROUP TOPIC PARTITION [OFFSET]\n");
		return 2;
	}
	int commit = strcmp(argv[2], "commit") == 0;
	if (commit && argc < 7)
		return 2;
	int fd = kaas_test_connect(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "cannot connect to %s\n", argv[1]);
		return 1;
	}
	struct kaas_kw w;
	kaas_kw_init(&w);
	kaas_kw_i32(&w, 0);
	kaas_kw_i16(&w, commit ? 8 : 9);
	kaas_kw_i16(&w, commit ? 7 : 5);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, "offsets_raw");
	kaas_kw_str(&w, 0, argv[3]);
	if (commit) {
		kaas_kw_i32(&w, -1);      /* generation */
		kaas_kw_str(&w, 0, "");   /* member */
		kaas_kw_str(&w, 0, NULL); /* instance */
	}
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, argv[4]);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, atoi(argv[5]));
	if (commit) {
		kaas_kw_i64(&w, strtoll(argv[6], NULL, 10));
		kaas_kw_i32(&w, -1);
		kaas_kw_str(&w, 0, "raw");
	}
	uint8_t *b = NULL;
	size_t len = 0;
	int rc = xfer(fd, &w, &b, &len);
	kaas_kw_free(&w);
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "no answer\n");
		free(b);
		return 1;
	}
	struct kaas_kr r;
	kaas_kr_init(&r, b, len);
	(void)kaas_kr_i32(&r); /* throttle */
	(void)kaas_kr_i32(&r);
	(void)kaas_kr_str(&r, 0);
	(void)kaas_kr_i32(&r);
	(void)kaas_kr_i32(&r);
	if (commit) {
		int16_t err = kaas_kr_i16(&r);
		printf("%d\n", err);
	} else {
		int64_t off = kaas_kr_i64(&r);
		(void)kaas_kr_i32(&r);
		(void)kaas_kr_nstr(&r, 0);
		int16_t perr = kaas_kr_i16(&r);
		int16_t err = kaas_kr_i16(&r);
		printf("%lld %d\n", (long long)off, perr ? perr : err);
	}
	free(b);
	return kaas_kr_ok(&r) ? 0 : 1;
}
