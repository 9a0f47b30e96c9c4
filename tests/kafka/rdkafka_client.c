/*
 * rdkafka_client.c — librdkafka against a running kaasd ($KAAS_BROKER):
 * acks 0/1/-1 produce and read back, MESSAGE_TOO_LARGE, and the admin API
 * (CreateTopics, CreatePartitions, DeleteTopics).  Driven by
 * rdkafka_client.sh, which starts the broker.
 *
 *   rdkafka_client [acks|large|admin]   the tests (all without argument)
 *   rdkafka_client bench N SIZE         produce N x SIZE bytes (acks=all) and
 *                                       consume them back; prints msgs/s,
 *                                       MB/s and p50/p99 produce latency
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

static const char *broker;
static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			failures++;                                           \
		}                                                             \
	} while (0)

struct dr_state {
	int ok, failed;
	rd_kafka_resp_err_t last_err;
	int64_t max_offset;
};

static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct dr_state *s = rd_kafka_opaque(rk);
	if (m->err) {
		s->failed++;
		s->last_err = m->err;
	} else {
		s->ok++;
		if (m->offset > s->max_offset)
			s->max_offset = m->offset;
	}
}

static rd_kafka_t *make_producer(const char *acks, const char *maxbytes, struct dr_state *s)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof(err));
	rd_kafka_conf_set(c, "acks", acks, err, sizeof(err));
	rd_kafka_conf_set(c, "linger.ms", "5", err, sizeof(err));
	rd_kafka_conf_set(c, "message.timeout.ms", "20000", err, sizeof(err));
	if (maxbytes)
		rd_kafka_conf_set(c, "message.max.bytes", maxbytes, err, sizeof(err));
	rd_kafka_conf_set_dr_msg_cb(c, on_dr);
	rd_kafka_conf_set_opaque(c, s);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "rd_kafka_new: %s\n", err);
		exit(1);
	}
	return rk;
}

/* Count the messages of topic/0 with a legacy simple consumer. */
static int count_messages(const char *topic, int expect)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
	rd_kafka_consume_start(t, 0, RD_KAFKA_OFFSET_BEGINNING);
	int n = 0, idle = 0;
	while (n < expect && idle < 50) {
		rd_kafka_message_t *m = rd_kafka_consume(t, 0, 200);
		if (!m) {
			idle++;
			continue;
		}
		if (!m->err) {
			char want[32];
			snprintf(want, sizeof(want), "m%d", n);
			CHECK(m->len == strlen(want) && memcmp(m->payload, want, m->len) == 0,
			      "%s: message %d is '%.*s'", topic, n, (int)m->len, (char *)m->payload);
			CHECK(m->offset == n, "%s: message %d at offset %lld", topic, n,
			      (long long)m->offset);
			n++;
			idle = 0;
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_consume_stop(t, 0);
	rd_kafka_topic_destroy(t);
	rd_kafka_destroy(rk);
	return n;
}

static void test_acks(const char *acks)
{
	struct dr_state s = { 0, 0, 0, -1 };
	rd_kafka_t *rk = make_producer(acks, NULL, &s);
	char topic[32];
	snprintf(topic, sizeof(topic), "acks%s", acks);
	const int N = 2000;
	for (int i = 0; i < N; i++) {
		char v[32];
		int len = snprintf(v, sizeof(v), "m%d", i);
		rd_kafka_resp_err_t e;
		while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
					      RD_KAFKA_V_VALUE(v, (size_t)len),
					      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
					      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 10);
		CHECK(e == 0, "producev: %s", rd_kafka_err2str(e));
	}
	rd_kafka_flush(rk, 30000);
	CHECK(s.ok == N && s.failed == 0, "acks=%s: %d delivered, %d failed (%s)", acks, s.ok,
	      s.failed, rd_kafka_err2str(s.last_err));
	if (strcmp(acks, "0") != 0)
		CHECK(s.max_offset == N - 1, "acks=%s: last offset %lld", acks,
		      (long long)s.max_offset);
	rd_kafka_destroy(rk);
	int n = count_messages(topic, N);
	CHECK(n == N, "acks=%s: read back %d of %d", acks, n, N);
	printf("acks=%s: %d produced and read back\n", acks, n);
}

static void test_too_large(void)
{
	struct dr_state s = { 0, 0, 0, -1 };
	rd_kafka_t *rk = make_producer("all", "20000000", &s);
	size_t big = 3u << 20;
	char *v = malloc(big);
	for (size_t i = 0; i < big; i++)
		v[i] = (char)('a' + (i * 7919) % 26); /* poorly compressible */
	rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("large"),
						  RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_VALUE(v, big),
						  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
						  RD_KAFKA_V_END);
	CHECK(e == 0, "producev large: %s", rd_kafka_err2str(e));
	rd_kafka_flush(rk, 30000);
	CHECK(s.failed == 1 && s.last_err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE,
	      "3 MiB message: %d ok, %d failed with %s", s.ok, s.failed,
	      rd_kafka_err2str(s.last_err));
	printf("3 MiB message: %s\n", rd_kafka_err2str(s.last_err));
	free(v);
	rd_kafka_destroy(rk);
}

/* ---------------------------------------------------------------- admin */

static rd_kafka_event_t *wait_event(rd_kafka_queue_t *q)
{
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 20000);
	if (!ev) {
		fprintf(stderr, "FAIL: admin request timed out\n");
		exit(1);
	}
	return ev;
}

static rd_kafka_resp_err_t create_topic(rd_kafka_t *rk, rd_kafka_queue_t *q, const char *name,
					int np)
{
	char err[512];
	rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(name, np, 1, err, sizeof(err));
	rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
	rd_kafka_event_t *ev = wait_event(q);
	const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
	size_t n;
	const rd_kafka_topic_result_t **tr = rd_kafka_CreateTopics_result_topics(res, &n);
	rd_kafka_resp_err_t e = rd_kafka_event_error(ev);
	if (!e && n == 1)
		e = rd_kafka_topic_result_error(tr[0]);
	rd_kafka_event_destroy(ev);
	rd_kafka_NewTopic_destroy(nt);
	return e;
}

static rd_kafka_resp_err_t delete_topic(rd_kafka_t *rk, rd_kafka_queue_t *q, const char *name)
{
	rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(name);
	rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
	rd_kafka_event_t *ev = wait_event(q);
	size_t n;
	const rd_kafka_topic_result_t **tr =
		rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
	rd_kafka_resp_err_t e = rd_kafka_event_error(ev);
	if (!e && n == 1)
		e = rd_kafka_topic_result_error(tr[0]);
	rd_kafka_event_destroy(ev);
	rd_kafka_DeleteTopic_destroy(dt);
	return e;
}

static rd_kafka_resp_err_t grow_topic(rd_kafka_t *rk, rd_kafka_queue_t *q, const char *name,
				      int total)
{
	char err[512];
	rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new(name, (size_t)total, err,
								  sizeof(err));
	rd_kafka_CreatePartitions(rk, &np, 1, NULL, q);
	rd_kafka_event_t *ev = wait_event(q);
	size_t n;
	const rd_kafka_topic_result_t **tr = rd_kafka_CreatePartitions_result_topics(
		rd_kafka_event_CreatePartitions_result(ev), &n);
	rd_kafka_resp_err_t e = rd_kafka_event_error(ev);
	if (!e && n == 1)
		e = rd_kafka_topic_result_error(tr[0]);
	rd_kafka_event_destroy(ev);
	rd_kafka_NewPartitions_destroy(np);
	return e;
}

/* Partitions of a topic per a fresh metadata request (-1: absent). */
static int partitions_of(rd_kafka_t *rk, const char *name)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_topic_t *t = rd_kafka_topic_new(rk, name, NULL);
	int np = -1;
	if (rd_kafka_metadata(rk, 0, t, &md, 10000) == 0) {
		if (md->topic_cnt == 1 && md->topics[0].err == 0)
			np = md->topics[0].partition_cnt;
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(t);
	return np;
}

static void test_admin(void)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof(err));
	/* Metadata requests must not auto-create what we just deleted. */
	rd_kafka_conf_set(c, "allow.auto.create.topics", "false", err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_resp_err_t e;

	e = create_topic(rk, q, "admin1", 3);
	CHECK(e == 0, "CreateTopics admin1: %s", rd_kafka_err2str(e));
	e = create_topic(rk, q, "admin1", 3);
	CHECK(e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS, "CreateTopics again: %s",
	      rd_kafka_err2str(e));
	e = create_topic(rk, q, "bad/name", 1);
	CHECK(e == RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION, "CreateTopics bad/name: %s",
	      rd_kafka_err2str(e));
	e = create_topic(rk, q, "..", 1);
	CHECK(e == RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION, "CreateTopics '..': %s",
	      rd_kafka_err2str(e));
	CHECK(partitions_of(rk, "admin1") == 3, "admin1 has %d partitions",
	      partitions_of(rk, "admin1"));
	e = grow_topic(rk, q, "admin1", 5);
	CHECK(e == 0, "CreatePartitions to 5: %s", rd_kafka_err2str(e));
	CHECK(partitions_of(rk, "admin1") == 5, "admin1 has %d partitions after growing",
	      partitions_of(rk, "admin1"));
	e = grow_topic(rk, q, "admin1", 2);
	CHECK(e == RD_KAFKA_RESP_ERR_INVALID_PARTITIONS, "CreatePartitions to 2: %s",
	      rd_kafka_err2str(e));
	e = delete_topic(rk, q, "admin1");
	CHECK(e == 0, "DeleteTopics: %s", rd_kafka_err2str(e));
	CHECK(partitions_of(rk, "admin1") == -1, "admin1 still listed after delete");
	e = delete_topic(rk, q, "admin1");
	CHECK(e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "DeleteTopics again: %s",
	      rd_kafka_err2str(e));
	/* A new incarnation under the same name starts empty. */
	e = create_topic(rk, q, "admin1", 1);
	CHECK(e == 0, "re-create admin1: %s", rd_kafka_err2str(e));
	CHECK(partitions_of(rk, "admin1") == 1, "re-created admin1 has %d partitions",
	      partitions_of(rk, "admin1"));
	printf("admin: create, grow, delete, re-create done\n");
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
}

/* ---------------------------------------------------------------- bench */

#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct bench_state {
	double *lat;
	int n, failed;
};

static void bench_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct bench_state *s = rd_kafka_opaque(rk);
	if (m->err) {
		s->failed++;
		return;
	}
	double t0 = *(double *)m->_private;
	s->lat[s->n++] = now_s() - t0;
	free(m->_private);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* bench N SIZE: produce N messages of SIZE bytes (acks=all) to a fresh
 * topic, then consume them; print rates and produce latency percentiles. */
static int bench(int n, int size)
{
	char err[512], topic[64];
	snprintf(topic, sizeof(topic), "bench-%d-%d-%ld", n, size, (long)time(NULL));
	struct bench_state s = { calloc((size_t)n, sizeof(double)), 0, 0 };
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof(err));
	rd_kafka_conf_set(c, "acks", "all", err, sizeof(err));
	rd_kafka_conf_set(c, "linger.ms", "2", err, sizeof(err));
	rd_kafka_conf_set(c, "batch.size", "1000000", err, sizeof(err));
	rd_kafka_conf_set(c, "queue.buffering.max.messages", "1000000", err, sizeof(err));
	rd_kafka_conf_set_dr_msg_cb(c, bench_dr);
	rd_kafka_conf_set_opaque(c, &s);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	char *payload = malloc((size_t)size);
	for (int i = 0; i < size; i++)
		payload[i] = (char)('a' + (i * 31) % 26);
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		double *stamp = malloc(sizeof(double));
		*stamp = now_s();
		while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
					 RD_KAFKA_V_VALUE(payload, (size_t)size),
					 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
					 RD_KAFKA_V_OPAQUE(stamp), RD_KAFKA_V_END) ==
		       RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 1);
		rd_kafka_poll(rk, 0);
	}
	rd_kafka_flush(rk, 120000);
	double dt = now_s() - t0;
	rd_kafka_destroy(rk);
	qsort(s.lat, (size_t)s.n, sizeof(double), cmp_d);
	double mb = (double)n * size / 1e6;
	printf("produce %d x %d B (acks=all): %.2f s, %.0f msgs/s, %.1f MB/s, p50 %.2f ms, p99 %.2f ms, %d failed\n",
	       n, size, dt, n / dt, mb / dt, s.n ? s.lat[s.n / 2] * 1e3 : -1.0,
	       s.n ? s.lat[(int)(s.n * 0.99)] * 1e3 : -1.0, s.failed);
	free(s.lat);
	free(payload);
	/* Consume it all back. */
	rd_kafka_conf_t *cc = rd_kafka_conf_new();
	rd_kafka_conf_set(cc, "bootstrap.servers", broker, err, sizeof(err));
	rd_kafka_conf_set(cc, "fetch.message.max.bytes", "4000000", err, sizeof(err));
	rd_kafka_t *ck = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err));
	rd_kafka_topic_t *t = rd_kafka_topic_new(ck, topic, NULL);
	t0 = now_s();
	rd_kafka_consume_start(t, 0, RD_KAFKA_OFFSET_BEGINNING);
	int got = 0, idle = 0;
	while (got < n && idle < 50) {
		rd_kafka_message_t *m = rd_kafka_consume(t, 0, 200);
		if (!m) {
			idle++;
			continue;
		}
		if (!m->err)
			got++;
		rd_kafka_message_destroy(m);
		idle = 0;
	}
	dt = now_s() - t0;
	rd_kafka_consume_stop(t, 0);
	rd_kafka_topic_destroy(t);
	rd_kafka_destroy(ck);
	printf("consume %d x %d B: %.2f s, %.0f msgs/s, %.1f MB/s\n", got, size, dt, got / dt,
	       (double)got * size / 1e6 / dt);
	return got == n && s.failed == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	broker = getenv("KAAS_BROKER");
	if (!broker) {
		fprintf(stderr, "set KAAS_BROKER=host:port\n");
		return 2;
	}
	const char *only = argc > 1 ? argv[1] : NULL;
	if (only && strcmp(only, "bench") == 0 && argc == 4)
		return bench(atoi(argv[2]), atoi(argv[3]));
	if (!only || strcmp(only, "acks") == 0) {
		test_acks("0");
		test_acks("1");
		test_acks("all");
	}
	if (!only || strcmp(only, "large") == 0)
		test_too_large();
	if (!only || strcmp(only, "admin") == 0)
		test_admin();
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
