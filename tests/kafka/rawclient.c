/*
 * rawclient.c — speaks the Kafka protocol by hand to a running kaasd, to
 * send what no real client sends: random bytes, truncated frames,
 * negative and huge sizes, unknown API keys, corrupt record batches; and to
 * time a Fetch long poll and check pipelined answers come back in order.
 *
 *   rawclient HOST:PORT MODE     MODE: garbage truncated negative huge
 *                                unknown-api corrupt-crc corrupt-payload
 *                                good-batch longpoll out-of-range pipeline
 *   rawclient HOST:PORT fetch-answer TOPIC OFFSET MAXWAIT
 *                                one Fetch of TOPIC/0: prints "sent" once
 *                                it is out, then "error E high_watermark H
 *                                after MS ms"
 *   rawclient HOST:PORT fetch-bounds TOPIC NPART
 *                                read TOPIC to the end with Fetch requests
 *                                of several max_bytes/partition_max_bytes
 *                                pairs, checking each answer's bounds
 *   rawclient HOST:PORT txn-lso TOPIC
 *                                an open transaction holds the LSO
 *                                (rawclient_txn.c)
 *   rawclient HOST:PORT isolation SLOW_TOPIC FAST_TOPIC NFAST SECONDS BURST_MIB
 *                                produce latency of other partitions while
 *                                one is loaded (rawclient_isolation.c)
 *   rawclient HOST:PORT time-offsets TOPIC CODEC [append]
 *                                ListOffsets by timestamp inside a batch
 *                                (see rawclient_time_offsets.c);
 *                                time-offsets-check: the same queries,
 *                                without producing
 * Exit 0 when the broker behaved as it must, 1 otherwise (with a message).
 *
 * This file: main, the connection-level modes (bad frames, produce of one
 * batch, long poll, pipelining) and the helpers all modes share (see
 * rawclient.h); fetch-bounds is in rawclient_fetch_bounds.c, time-offsets
 * in rawclient_time_offsets.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/kafka/rawclient.h"

int raw_fail(const char *msg)
{
	fprintf(stderr, "FAIL: %s\n", msg);
	return 1;
}

/* Does the broker close the connection within timeout? 1 yes, 0 no. */
static int closed_by_peer(int fd, int timeout_ms)
{
	char buf[4096];
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, timeout_ms) <= 0)
			return 0;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			return 1;
	}
}

/* Start a request in w (initialised here): size field and header v1. */
void raw_header(struct kaas_kw *w, int16_t key, int16_t ver, int32_t corr)
{
	kwire_begin(w, key, ver, corr, "rawclient");
}

/* Produce v3 acks=-1 to topic/0 of the batch (h, payload): the partition
 * error, or -1000 when no well-formed answer with this correlation id came. */
int raw_produce_batch(int fd, const char *topic, int32_t corr, const struct kwire_batch *h,
		      const void *payload, size_t len)
{
	struct kaas_kw w;
	kwire_produce_begin(&w, corr, "rawclient", topic);
	kwire_batch(&w, h, payload, len);
	if (kwire_send(fd, &w) < 0)
		return -1000;
	int32_t c = 0;
	size_t blen = 0;
	uint8_t *body = kwire_recv(fd, &c, &blen, 10000);
	if (!body)
		return -1000;
	struct kaas_kr r;
	kaas_kr_init(&r, body, blen);
	int16_t err = 0;
	int ok = kwire_produce_answer(&r, &err, NULL) == 0 && c == corr;
	free(body);
	return ok ? err : -1000;
}

/* Produce one record "value" to topic/0; corrupt: 1 bad CRC, 2 gzip codec
 * with a payload that is not gzip (CRC right).  The partition error. */
static int produce(int fd, const char *topic, int corrupt)
{
	struct kaas_kw rec;
	kaas_kw_init(&rec);
	kwire_record(&rec, 0, 0, "value", 5);
	int64_t now = (int64_t)time(NULL) * 1000;
	struct kwire_batch h = { .attributes = corrupt == 2 ? 1 : 0, .first_ts = now, .max_ts = now,
				 .producer_id = -1, .producer_epoch = -1, .base_sequence = -1,
				 .count = 1, .crc_flip = corrupt == 1 ? 0x5a5a : 0 };
	int e = corrupt == 2 ? raw_produce_batch(fd, topic, 7, &h, "definitely not gzip data", 24)
			     : raw_produce_batch(fd, topic, 7, &h, rec.buf, rec.len);
	kaas_kw_free(&rec);
	return e;
}

int raw_send_metadata(int fd, int32_t corr, const char *topic)
{
	struct kaas_kw w;
	raw_header(&w, 3, 1, corr);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	int rc = kwire_send(fd, &w);
	return rc;
}

void raw_fetch_request(struct kaas_kw *w, int32_t corr, const char *topic, int64_t offset,
		       int32_t max_wait)
{
	raw_header(w, 1, 4, corr);
	kaas_kw_i32(w, -1);
	kaas_kw_i32(w, max_wait);
	kaas_kw_i32(w, 1);       /* min bytes */
	kaas_kw_i32(w, 1 << 20); /* max bytes */
	kaas_kw_i8(w, 0);
	kaas_kw_i32(w, 1);
	kaas_kw_str(w, 0, topic);
	kaas_kw_i32(w, 1);
	kaas_kw_i32(w, 0);
	kaas_kw_i64(w, offset);
	kaas_kw_i32(w, 1 << 20);
}

uint64_t raw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Fetch v4 of topic/0 at `offset` with max_wait; returns ms taken or -1.
 * *err (may be NULL) receives the partition's error code, *hw (may be
 * NULL) its high watermark. */
static long fetch_wait_hw(int fd, const char *topic, int64_t offset, int32_t max_wait,
			  size_t *got, int *err, int64_t *hw);

static long fetch_wait(int fd, const char *topic, int64_t offset, int32_t max_wait, size_t *got,
		       int *err)
{
	return fetch_wait_hw(fd, topic, offset, max_wait, got, err, NULL);
}

static long fetch_wait_hw(int fd, const char *topic, int64_t offset, int32_t max_wait,
			  size_t *got, int *err, int64_t *hw)
{
	struct kaas_kw w;
	raw_fetch_request(&w, 9, topic, offset, max_wait);
	uint64_t t0 = raw_now_ms();
	int rc = kwire_send(fd, &w);
	if (rc < 0)
		return -1;
	if (hw) { /* fetch-answer: say when the request is out */
		printf("sent\n");
		fflush(stdout);
	}
	int32_t corr;
	size_t len;
	uint8_t *body = kwire_recv(fd, &corr, &len, 30000);
	if (!body)
		return -1;
	*got = len;
	if (err || hw) {
		struct kaas_kr r;
		kaas_kr_init(&r, body, len);
		(void)kaas_kr_i32(&r);   /* throttle */
		(void)kaas_kr_i32(&r);   /* topics: 1 */
		(void)kaas_kr_str(&r, 0);
		(void)kaas_kr_i32(&r);   /* partitions: 1 */
		(void)kaas_kr_i32(&r);
		int e = kaas_kr_i16(&r);
		int64_t h = kaas_kr_i64(&r);
		if (!kaas_kr_ok(&r))
			e = -1000;
		if (err)
			*err = e;
		if (hw)
			*hw = h;
	}
	free(body);
	return (long)(raw_now_ms() - t0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rawclient HOST:PORT MODE\n");
		return 2;
	}
	const char *mode = argv[2];
	int fd = kwire_connect(argv[1], 5000);
	if (fd < 0)
		return raw_fail("cannot connect");
	srand((unsigned)time(NULL));
	if (strcmp(mode, "garbage") == 0) {
		/* Random bytes with a plausible small size prefix, then more. */
		uint8_t buf[4096];
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rand();
		buf[0] = 0; buf[1] = 0; buf[2] = 0; buf[3] = 64;
		if (kwire_send_all(fd, buf, sizeof(buf)) < 0 && errno != ECONNRESET && errno != EPIPE)
			return raw_fail("send garbage");
		return closed_by_peer(fd, 5000) ? 0 : raw_fail("garbage: connection not closed");
	}
	if (strcmp(mode, "truncated") == 0) {
		/* A frame announcing 200 bytes, 30 sent, then our side shut. */
		struct kaas_kw w;
		raw_header(&w, 3, 1, 1);
		kaas_kw_put_i32_at(&w, 0, 200);
		kwire_send_all(fd, w.buf, w.len);
		shutdown(fd, SHUT_WR);
		kaas_kw_free(&w);
		return closed_by_peer(fd, 5000) ? 0 : raw_fail("truncated: connection not closed");
	}
	if (strcmp(mode, "negative") == 0 || strcmp(mode, "huge") == 0) {
		uint8_t sz[4] = { 0xff, 0xff, 0xff, 0xf0 };
		if (mode[0] == 'h')
			sz[0] = 0x7f;
		kwire_send_all(fd, sz, 4);
		return closed_by_peer(fd, 5000) ? 0 : raw_fail("bad size: connection not closed");
	}
	if (strcmp(mode, "unknown-api") == 0) {
		struct kaas_kw w;
		raw_header(&w, 999, 0, 1);
		kwire_send(fd, &w);
		return closed_by_peer(fd, 5000) ? 0 : raw_fail("unknown API: connection not closed");
	}
	if (strcmp(mode, "corrupt-crc") == 0 || strcmp(mode, "corrupt-payload") == 0 ||
	    strcmp(mode, "good-batch") == 0) {
		const char *topic = argc > 3 ? argv[3] : "raw";
		/* Make sure the topic exists (auto-create through Metadata). */
		raw_send_metadata(fd, 1, topic);
		int32_t corr;
		size_t len;
		free(kwire_recv(fd, &corr, &len, 10000));
		int want = mode[0] == 'g' ? 0 : 2;
		int e = produce(fd, topic, mode[0] == 'g' ? 0 : mode[8] == 'c' ? 1 : 2);
		if (e != want) {
			fprintf(stderr, "FAIL: %s: produce answered error %d, want %d\n", mode, e, want);
			return 1;
		}
		return 0;
	}
	if (strcmp(mode, "longpoll") == 0) {
		const char *topic = argc > 3 ? argv[3] : "raw";
		int64_t offset = argc > 4 ? atoll(argv[4]) : 0;
		size_t got = 0;
		long ms = fetch_wait(fd, topic, offset, 700, &got, NULL);
		printf("long poll at the end answered after %ld ms\n", ms);
		if (ms < 0)
			return raw_fail("longpoll: no answer");
		if (ms < 600 || ms > 5000)
			return raw_fail("longpoll: answered outside [600, 5000] ms for max_wait 700");
		return 0;
	}
	if (strcmp(mode, "fetch-answer") == 0 && argc > 5) {
		/* One Fetch of TOPIC/0 at OFFSET with max_wait MAXWAIT ms:
		 * prints its error code and high watermark. */
		size_t got = 0;
		int err = 0;
		int64_t hw = -1;
		long ms = fetch_wait_hw(fd, argv[3], atoll(argv[4]), atoi(argv[5]), &got, &err, &hw);
		if (ms < 0)
			return raw_fail("fetch-answer: no answer");
		printf("error %d high_watermark %lld after %ld ms\n", err, (long long)hw, ms);
		return 0;
	}
	if (strcmp(mode, "out-of-range") == 0) {
		/* Past the end: OFFSET_OUT_OF_RANGE (1) at once, not a long poll. */
		const char *topic = argc > 3 ? argv[3] : "raw";
		size_t got = 0;
		int err = 0;
		long ms = fetch_wait(fd, topic, 1000000, 5000, &got, &err);
		if (ms < 0 || err != 1 || ms > 2000) {
			fprintf(stderr, "FAIL: fetch past the end: error %d after %ld ms\n", err, ms);
			return 1;
		}
		return 0;
	}
	if (strcmp(mode, "pipeline") == 0) {
		/* 3000 requests in one go (past the per-connection queue limit, so
		 * reading pauses and resumes): answers must come back in order. */
		for (int32_t i = 0; i < 3000; i++)
			if (raw_send_metadata(fd, 1000 + i, "raw") < 0)
				return raw_fail("pipeline send");
		for (int32_t i = 0; i < 3000; i++) {
			int32_t corr;
			size_t len;
			uint8_t *b = kwire_recv(fd, &corr, &len, 10000);
			if (!b)
				return raw_fail("pipeline: missing answer");
			free(b);
			if (corr != 1000 + i)
				return raw_fail("pipeline: answers out of order");
		}
		return 0;
	}
	if (strcmp(mode, "fetch-bounds") == 0 && argc > 4)
		return raw_fetch_bounds(fd, argv[3], atoi(argv[4]));
	if (strncmp(mode, "time-offsets", 12) == 0 && argc > 4)
		return raw_time_offsets(fd, argv[3], atoi(argv[4]),
				    argc > 5 && strcmp(argv[5], "append") == 0,
				    strcmp(mode, "time-offsets-check") == 0);
	if (strcmp(mode, "isolation") == 0 && argc > 7)
		return raw_isolation(argv[1], fd, argv[3], argv[4], atoi(argv[5]), atoi(argv[6]),
				     atoi(argv[7]));
	if (strncmp(mode, "txn-lso", 7) == 0 && argc > 3)
		return raw_txn_lso(fd, argv[3], strcmp(mode, "txn-lso-check") == 0);
	if ((strncmp(mode, "old-offsets", 11) == 0 || strcmp(mode, "refused-old") == 0) && argc > 3)
		return raw_old_versions(fd, mode, argv[3], argc > 4 ? argv[4] : NULL);
	return raw_fail("unknown mode");
}
