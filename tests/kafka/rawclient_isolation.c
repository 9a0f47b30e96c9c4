/* rawclient_isolation.c — the `isolation` mode of rawclient (issue 19):
 * while one "slow" writer loads partition 0 of SLOW_TOPIC, measure the
 * produce latency (acks=-1) of the partitions 0..NFAST-1 of FAST_TOPIC.
 *
 *   rawclient HOST:PORT isolation SLOW_TOPIC FAST_TOPIC NFAST SECONDS BURST_MIB
 *
 * The slow writer, on its own connection, repeats until the measurement
 * ends: BURST_MIB requests of ~1 MiB each, pipelined (they fill the
 * partition's pending bytes: back-pressure), then an idempotent batch and
 * its retry pipelined right behind it (the retry is a duplicate of a batch
 * not yet durable), then reads every answer.  The measuring client sends
 * one small batch at a time, round robin over the fast partitions, and
 * prints "fast: n=<count> p50=<ms> p99=<ms> max=<ms>" and the slow
 * writer's "slow: rounds=<count>"; exit 0, or 1 when an answer failed. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/kafka/rawclient.h"

#define SLOW_PID 424242
#define BIG_PAYLOAD (1000 * 1000)

struct slow_arg {
	const char *hostport;
	const char *topic;
	int burst;
	atomic_int stop;
	int rounds;
	int failed;
};

/* A Produce v3 acks=-1 request for topic/partition of one batch. */
static int send_batch(int fd, const char *topic, int32_t part, int32_t corr,
		      const struct kwire_batch *h, const void *payload, size_t len)
{
	struct kaas_kw w;
	kwire_produce_begin(&w, corr, "rawclient", topic);
	kaas_kw_put_i32_at(&w, w.len - 4, part); /* the partition index, last field */
	kwire_batch(&w, h, payload, len);
	return kwire_send(fd, &w);
}

/* Read one Produce answer: its error code, or -1000 (none, or not `corr`). */
static int read_answer(int fd, int32_t corr, int timeout_ms)
{
	int32_t c = 0;
	size_t blen = 0;
	uint8_t *body = kwire_recv(fd, &c, &blen, timeout_ms);
	if (!body)
		return -1000;
	struct kaas_kr r;
	kaas_kr_init(&r, body, blen);
	int16_t err = 0;
	int ok = kwire_produce_answer(&r, &err, NULL) == 0 && c == corr;
	free(body);
	return ok ? err : -1000;
}

static void *slow_main(void *p)
{
	struct slow_arg *a = p;
	int fd = kwire_connect(a->hostport, 5000);
	if (fd < 0) {
		a->failed = 1;
		return NULL;
	}
	struct kaas_kw big;
	kaas_kw_init(&big);
	char *val = malloc(BIG_PAYLOAD);
	if (!val) {
		a->failed = 1;
		close(fd);
		return NULL;
	}
	memset(val, 'x', BIG_PAYLOAD);
	kwire_record(&big, 0, 0, val, BIG_PAYLOAD);
	free(val);
	struct kaas_kw small;
	kaas_kw_init(&small);
	kwire_record(&small, 0, 0, "slow", 4);
	int32_t corr = 1;
	int32_t seq = 0;
	while (!atomic_load(&a->stop) && !a->failed) {
		int64_t now = (int64_t)time(NULL) * 1000;
		struct kwire_batch hb = { .first_ts = now, .max_ts = now, .producer_id = -1,
					  .producer_epoch = -1, .base_sequence = -1, .count = 1 };
		struct kwire_batch hi = { .first_ts = now, .max_ts = now, .producer_id = SLOW_PID,
					  .producer_epoch = 0, .base_sequence = seq, .count = 1 };
		int32_t first = corr;
		for (int i = 0; i < a->burst; i++)
			if (send_batch(fd, a->topic, 0, corr++, &hb, big.buf, big.len) < 0)
				a->failed = 1;
		/* The batch, and its retry right behind it. */
		for (int i = 0; i < 2; i++)
			if (send_batch(fd, a->topic, 0, corr++, &hi, small.buf, small.len) < 0)
				a->failed = 1;
		for (int32_t c = first; c < corr && !a->failed; c++) {
			int e = read_answer(fd, c, 120000);
			if (e != 0) {
				fprintf(stderr, "slow writer: answer %d: error %d\n", c, e);
				a->failed = 1;
			}
		}
		seq++;
		a->rounds++;
	}
	kaas_kw_free(&big);
	kaas_kw_free(&small);
	close(fd);
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int raw_isolation(const char *hostport, int fd, const char *slow_topic, const char *fast_topic,
		  int nfast, int seconds, int burst)
{
	struct slow_arg sa = { .hostport = hostport, .topic = slow_topic, .burst = burst };
	pthread_t th;
	if (pthread_create(&th, NULL, slow_main, &sa) != 0)
		return raw_fail("cannot start the slow writer");
	usleep(300 * 1000); /* let the slow writer's first burst arrive */
	size_t cap = 1 << 16, n = 0;
	uint64_t *lat = malloc(cap * sizeof(*lat));
	struct kaas_kw rec;
	kaas_kw_init(&rec);
	kwire_record(&rec, 0, 0, "fast", 4);
	int failed = !lat;
	uint64_t end = raw_now_ms() + (uint64_t)seconds * 1000;
	for (int32_t corr = 1; !failed && raw_now_ms() < end && n < cap; corr++) {
		int64_t now = (int64_t)time(NULL) * 1000;
		struct kwire_batch h = { .first_ts = now, .max_ts = now, .producer_id = -1,
					 .producer_epoch = -1, .base_sequence = -1, .count = 1 };
		uint64_t t0 = raw_now_ms();
		if (send_batch(fd, fast_topic, corr % nfast, corr, &h, rec.buf, rec.len) < 0) {
			failed = 1;
			break;
		}
		int e = read_answer(fd, corr, 60000);
		if (e != 0) {
			fprintf(stderr, "fast: answer %d: error %d\n", corr, e);
			failed = 1;
			break;
		}
		lat[n++] = raw_now_ms() - t0;
	}
	atomic_store(&sa.stop, 1);
	pthread_join(th, NULL);
	kaas_kw_free(&rec);
	if (!failed && n > 0) {
		qsort(lat, n, sizeof(*lat), cmp_u64);
		printf("fast: n=%zu p50=%llu p99=%llu max=%llu\n", n,
		       (unsigned long long)lat[n / 2], (unsigned long long)lat[(n * 99) / 100],
		       (unsigned long long)lat[n - 1]);
	}
	printf("slow: rounds=%d%s\n", sa.rounds, sa.failed ? " (failed)" : "");
	free(lat);
	if (sa.failed)
		return raw_fail("the slow writer failed");
	return failed || n == 0 ? raw_fail("fast produce failed") : 0;
}
