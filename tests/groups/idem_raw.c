/*
 * idem_raw.c — the idempotent producer's rules against a running kaasd, by
 * hand-built requests (InitProducerId, Produce v3 with producer ids and
 * sequences), so the exact error of each case is checked.
 *
 *   idem_raw HOST:PORT pid          print one fresh producer id
 *   idem_raw HOST:PORT seq TOPIC    run the sequence cases on TOPIC/0
 *   idem_raw HOST:PORT pre TOPIC    a fresh producer writes seq 0..2 to
 *                                   TOPIC/0; prints "PID OFFSET"
 *   idem_raw HOST:PORT post TOPIC PID OFFSET
 *                                   (after a broker restart) the retry of
 *                                   seq 0..2 answers OFFSET; seq 3 follows
 *   idem_raw HOST:PORT eio-pre TOPIC
 *                                   (the broker's volume fails the fsync of
 *                                   TOPIC/0's second idempotent batch) seq 0
 *                                   is written; seq 1 is answered
 *                                   REQUEST_TIMED_OUT (possibly persisted);
 *                                   seq 2, to the failed log, is answered
 *                                   KAFKA_STORAGE_ERROR before any sequence
 *                                   check; prints "PID OFFSET-OF-SEQ-0"
 *   idem_raw HOST:PORT eio-post TOPIC PID OFFSET
 *                                   (once the log is re-opened, in the same
 *                                   process or after a restart) the retry of
 *                                   seq 1 is answered OFFSET+1 (the recovered
 *                                   copy) and seq 2 lands at OFFSET+2
 * Exit 0 when every answer is the expected one, 1 otherwise.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/kwire.h"

static int64_t init_pid(int fd)
{
	struct kaas_kw w;
	kwire_begin(&w, 22, 1, 1, "idem_raw");
	kaas_kw_str(&w, 0, NULL);
	kaas_kw_i32(&w, 60000);
	struct kaas_kr r;
	uint8_t *b = kwire_call(fd, &w, &r, 15000);
	if (!b)
		return -1;
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	int64_t pid = kaas_kr_i64(&r);
	int16_t epoch = kaas_kr_i16(&r);
	free(b);
	return kaas_kr_ok(&r) && err == 0 && epoch == 0 ? pid : -1;
}

/* A Produce request of one batch of n records, in w. */
static void produce_req(struct kaas_kw *w, const char *topic, int64_t pid, int16_t epoch,
			int32_t seq, int n)
{
	struct kaas_kw recs;
	kaas_kw_init(&recs);
	for (int i = 0; i < n; i++) {
		char v[32];
		int vl = snprintf(v, sizeof(v), "s%d", seq + i);
		kwire_record(&recs, 0, i, v, vl);
	}
	int64_t now = (int64_t)time(NULL) * 1000;
	struct kwire_batch h = { .last_offset_delta = n - 1, .first_ts = now, .max_ts = now,
				 .producer_id = pid, .producer_epoch = epoch,
				 .base_sequence = seq, .count = n };
	kwire_produce_begin(w, 1, "idem_raw", topic);
	kwire_batch(w, &h, recs.buf, recs.len);
	kaas_kw_free(&recs);
}

/* The error of a Produce answer read from fd, *off its base offset. */
static int produce_answer(int fd, int64_t *off)
{
	struct kaas_kr r;
	uint8_t *body = kwire_answer(fd, &r, 15000);
	int16_t err = 0;
	int rc = body ? kwire_produce_answer(&r, &err, off) : -1;
	free(body);
	return rc < 0 ? -1000 : err;
}

/* Produce one batch of n records; returns the error, *off the base offset. */
static int produce(int fd, const char *topic, int64_t pid, int16_t epoch, int32_t seq, int n,
		   int64_t *off)
{
	struct kaas_kw w;
	produce_req(&w, topic, pid, epoch, seq, n);
	struct kaas_kr r;
	uint8_t *body = kwire_call(fd, &w, &r, 15000);
	int16_t err = 0;
	int rc = body ? kwire_produce_answer(&r, &err, off) : -1;
	free(body);
	return rc < 0 ? -1000 : err;
}

static int failures;

static void expect(const char *what, int got, int want)
{
	if (got != want) {
		fprintf(stderr, "FAIL: %s: error %d, expected %d\n", what, got, want);
		failures++;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: idem_raw HOST:PORT pid | seq TOPIC\n");
		return 2;
	}
	int fd = kwire_connect(argv[1], 5000);
	if (fd < 0) {
		fprintf(stderr, "cannot connect to %s\n", argv[1]);
		return 1;
	}
	if (strcmp(argv[2], "post") == 0 && argc == 6) {
		int64_t pid = strtoll(argv[4], NULL, 10), want = strtoll(argv[5], NULL, 10), o = -1;
		expect("retry after restart", produce(fd, argv[3], pid, 0, 0, 3, &o), 0);
		if (o != want) {
			fprintf(stderr, "FAIL: retry after restart at %" PRId64 ", original %" PRId64 "\n",
				o, want);
			failures++;
		}
		expect("seq 3 after restart", produce(fd, argv[3], pid, 0, 3, 1, &o), 0);
		expect("gap after restart", produce(fd, argv[3], pid, 0, 9, 1, &o), 19);
		return failures ? 1 : 0;
	}
	if (strcmp(argv[2], "eio-post") == 0 && argc == 6) {
		int64_t pid = strtoll(argv[4], NULL, 10), o0 = strtoll(argv[5], NULL, 10), o = -1;
		int err = 56;
		/* KAFKA_STORAGE_ERROR until housekeeping re-opens the log. */
		for (int i = 0; i < 150 && (err == 56 || err == 7); i++) {
			err = produce(fd, argv[3], pid, 0, 1, 1, &o);
			if (err == 56 || err == 7)
				usleep(200 * 1000);
		}
		expect("retry of seq 1 after the re-open", err, 0);
		if (err == 0 && o != o0 + 1) {
			fprintf(stderr, "FAIL: retry of seq 1 at offset %" PRId64 ", the recovered "
				"copy is at %" PRId64 "\n", o, o0 + 1);
			failures++;
		}
		expect("seq 2 after the re-open", produce(fd, argv[3], pid, 0, 2, 1, &o), 0);
		if (o != o0 + 2) {
			fprintf(stderr, "FAIL: seq 2 at offset %" PRId64 ", expected %" PRId64 "\n", o,
				o0 + 2);
			failures++;
		}
		return failures ? 1 : 0;
	}
	int64_t pid = init_pid(fd);
	if (pid < 0) {
		fprintf(stderr, "FAIL: InitProducerId\n");
		return 1;
	}
	if (strcmp(argv[2], "pid") == 0) {
		printf("%" PRId64 "\n", pid);
		return 0;
	}
	if (strcmp(argv[2], "pre") == 0 && argc == 4) {
		int64_t o = -1;
		expect("first batch", produce(fd, argv[3], pid, 0, 0, 3, &o), 0);
		printf("%" PRId64 " %" PRId64 "\n", pid, o);
		return failures ? 1 : 0;
	}
	if (strcmp(argv[2], "eio-pre") == 0 && argc == 4) {
		int64_t o0 = -1, o = -1;
		expect("seq 0", produce(fd, argv[3], pid, 0, 0, 1, &o0), 0);
		expect("seq 1, its fsync failing", produce(fd, argv[3], pid, 0, 1, 1, &o), 7);
		expect("seq 2 to the failed log", produce(fd, argv[3], pid, 0, 2, 1, &o), 56);
		printf("%" PRId64 " %" PRId64 "\n", pid, o0);
		return failures ? 1 : 0;
	}
	if (strcmp(argv[2], "pipe") == 0 && argc == 5) {
		/* N requests of one 200 KiB record each, pipelined on one
		 * connection (not idempotent), then their N answers: exit 1
		 * when one does not come within 30 s. */
		int n = atoi(argv[4]);
		static char big[200 << 10];
		memset(big, 'x', sizeof big);
		for (int i = 0; i < n; i++) {
			struct kaas_kw recs, w;
			kaas_kw_init(&recs);
			kwire_record(&recs, 0, 0, big, (int32_t)sizeof big);
			int64_t now = (int64_t)time(NULL) * 1000;
			struct kwire_batch h = { .last_offset_delta = 0, .first_ts = now, .max_ts = now,
						 .producer_id = -1, .producer_epoch = -1,
						 .base_sequence = -1, .count = 1 };
			kwire_produce_begin(&w, i, "idem_raw", argv[3]);
			kwire_batch(&w, &h, recs.buf, recs.len);
			kaas_kw_free(&recs);
			if (kwire_send(fd, &w) < 0)
				return 1;
		}
		int counts[128] = { 0 };
		for (int i = 0; i < n; i++) {
			struct kaas_kr r;
			uint8_t *body = kwire_answer(fd, &r, 30000);
			int16_t err = 0;
			if (!body || kwire_produce_answer(&r, &err, NULL) < 0) {
				fprintf(stderr, "FAIL: no answer to request %d of %d within 30 s\n", i, n);
				return 1;
			}
			free(body);
			counts[err & 127]++;
		}
		for (int e = 0; e < 128; e++)
			if (counts[e])
				printf("error %d: %d\n", e, counts[e]);
		return 0;
	}
	if (strcmp(argv[2], "eio-dup") == 0 && argc == 4) {
		/* seq 1's write is slow and its fsync fails: its retry, sent on
		 * a second connection while the original is in flight (as a
		 * client does after a request timeout), must be answered as
		 * the original is: REQUEST_TIMED_OUT (possibly persisted), not
		 * KAFKA_STORAGE_ERROR or NOT_LEADER (not persisted: librdkafka
		 * may then renumber, and the recovered copy is duplicated). */
		int64_t o0 = -1, o = -1, od = -1;
		expect("seq 0", produce(fd, argv[3], pid, 0, 0, 1, &o0), 0);
		int fd2 = kwire_connect(argv[1], 5000);
		if (fd2 < 0)
			return 1;
		struct kaas_kw w;
		produce_req(&w, argv[3], pid, 0, 1, 1);
		if (kwire_send(fd, &w) < 0)
			return 1;
		usleep(500 * 1000); /* the original's write is delayed 2 s */
		produce_req(&w, argv[3], pid, 0, 1, 1);
		if (kwire_send(fd2, &w) < 0)
			return 1;
		expect("seq 1, its fsync failing", produce_answer(fd, &o), 7);
		expect("retry of seq 1 while it was in flight", produce_answer(fd2, &od), 7);
		printf("%" PRId64 " %" PRId64 "\n", pid, o0);
		return failures ? 1 : 0;
	}
	if (strcmp(argv[2], "seq") != 0 || argc < 4)
		return 2;
	const char *t = argv[3];
	int64_t o1 = -1, o = -1;
	expect("first batch seq 0..2", produce(fd, t, pid, 0, 0, 3, &o1), 0);
	expect("retry of seq 0..2", produce(fd, t, pid, 0, 0, 3, &o), 0);
	if (o != o1) {
		fprintf(stderr, "FAIL: retry answered offset %" PRId64 ", original %" PRId64 "\n", o, o1);
		failures++;
	}
	expect("gap: seq 5", produce(fd, t, pid, 0, 5, 1, &o), 19);
	expect("next: seq 3", produce(fd, t, pid, 0, 3, 1, &o), 0);
	if (o != o1 + 3) {
		fprintf(stderr, "FAIL: seq 3 at offset %" PRId64 ", expected %" PRId64 "\n", o, o1 + 3);
		failures++;
	}
	expect("overlap: seq 1..2 (not a batch)", produce(fd, t, pid, 0, 1, 2, &o), 46);
	expect("overlap past the end: seq 2..4", produce(fd, t, pid, 0, 2, 3, &o), 45);
	expect("new epoch at seq 2", produce(fd, t, pid, 1, 2, 1, &o), 19);
	expect("new epoch at seq 0", produce(fd, t, pid, 1, 0, 1, &o), 0);
	expect("old epoch", produce(fd, t, pid, 0, 4, 1, &o), 47);
	expect("unknown producer at seq 7", produce(fd, t, pid + (1ll << 60), 0, 7, 1, &o), 59);
	expect("unknown producer at seq 0", produce(fd, t, pid + (1ll << 60), 0, 0, 1, &o), 0);
	close(fd);
	if (failures)
		return 1;
	printf("sequence rules: ok\n");
	return 0;
}
