/*
 * kafka_bench.c — librdkafka load against a running broker, behind
 * scripts/bench.  Each mode prints one JSON object on stdout (progress and
 * errors on stderr).
 *
 *   kaas-kafka-bench produce BROKER TOPIC SIZE PRODUCERS SECONDS MAXMSGS
 *       PRODUCERS threads, each its own client and connection, send SIZE-byte
 *       messages to TOPIC partition 0 with acks=-1 for SECONDS (or until
 *       MAXMSGS in all), then flush.  Reports msgs/s, MB/s (payload) and the
 *       per-message delivery latency (send call to delivery report)
 *       p50/p99/p99.9 in milliseconds.
 *   kaas-kafka-bench consume BROKER TOPIC MSGS
 *       read TOPIC partition 0 from the beginning until MSGS messages have
 *       arrived: msgs/s and MB/s of payload, timed from the first message
 *       (startup_s: connecting and the first fetch).
 *   kaas-kafka-bench e2e BROKER TOPIC SIZE RATE SECONDS
 *       one producer at a fixed RATE msgs/s (acks=-1) with its send time in
 *       the payload, one consumer reading the same partition: end-to-end
 *       latency p50/p99/p99.9 in milliseconds, computed by the consumer.
 *   kaas-kafka-bench delete BROKER TOPIC
 *       delete TOPIC through the admin API (frees the volume between runs).
 *
 * Client settings: KAAS_BENCH_KAFKA_CONF="key=value,key=value" adds
 * librdkafka settings to every client (e.g. security.protocol=ssl,
 * ssl.ca.location=ca.pem for an SSL listener).
 *
 * Exit status 0; 1 when messages failed or went missing (the JSON is still
 * printed, with the counts); 2 for bad arguments.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "bench/latency.h"

static const char *broker, *topic;

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	nanosleep(&ts, NULL);
}

static void set(rd_kafka_conf_t *c, const char *k, const char *v)
{
	char err[512];
	if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "kaas-kafka-bench: %s=%s: %s\n", k, v, err);
		exit(2);
	}
}

static rd_kafka_t *client(rd_kafka_type_t type, rd_kafka_conf_t *c)
{
	char err[512];
	set(c, "bootstrap.servers", broker);
	const char *extra = getenv("KAAS_BENCH_KAFKA_CONF");
	char *list = extra ? strdup(extra) : NULL, *save = NULL;
	for (char *kv = list ? strtok_r(list, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			fprintf(stderr, "kaas-kafka-bench: KAAS_BENCH_KAFKA_CONF: '%s' is not key=value\n", kv);
			exit(2);
		}
		*eq = '\0';
		set(c, kv, eq + 1);
	}
	free(list);
	rd_kafka_t *rk = rd_kafka_new(type, c, err, sizeof err);
	if (!rk) {
		fprintf(stderr, "kaas-kafka-bench: rd_kafka_new: %s\n", err);
		exit(1);
	}
	return rk;
}

/* ------------------------------------------------------------- produce */

struct producer {
	pthread_t th;
	rd_kafka_t *rk;
	int size;
	uint64_t sent, delivered, failed;
	uint64_t last_dr_ns;
	rd_kafka_resp_err_t last_err;
	struct bench_lat lat;
};

static pthread_barrier_t start_line;
static uint64_t start_ns, max_msgs;
static _Atomic uint64_t stop_ns;
static uint64_t total_sent; /* guarded by sent_lock */
static pthread_mutex_t sent_lock = PTHREAD_MUTEX_INITIALIZER;

/* The send time travels in the message's opaque pointer. */
static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)opaque;
	struct producer *p = rd_kafka_opaque(rk);
	uint64_t t = bench_now_ns();
	if (m->err) {
		p->failed++;
		p->last_err = m->err;
		return;
	}
	p->delivered++;
	p->last_dr_ns = t;
	uint64_t t0 = (uint64_t)(uintptr_t)m->_private;
	if (t0)
		bench_lat_add(&p->lat, (double)(t - t0) / 1e3);
}

static rd_kafka_t *make_producer(void *opaque, const char *linger)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	set(c, "acks", "all");
	set(c, "linger.ms", linger);
	set(c, "batch.num.messages", "10000");
	set(c, "batch.size", "1000000");
	set(c, "queue.buffering.max.messages", "100000");
	set(c, "queue.buffering.max.kbytes", "32768");
	set(c, "message.timeout.ms", "60000");
	set(c, "compression.type", "none");
	rd_kafka_conf_set_dr_msg_cb(c, on_dr);
	rd_kafka_conf_set_opaque(c, opaque);
	return client(RD_KAFKA_PRODUCER, c);
}

static rd_kafka_resp_err_t send_one(rd_kafka_t *rk, const void *v, size_t len, uint64_t stamp)
{
	rd_kafka_resp_err_t e;
	while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
				      RD_KAFKA_V_VALUE((void *)v, len),
				      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				      RD_KAFKA_V_OPAQUE((void *)(uintptr_t)stamp),
				      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		rd_kafka_poll(rk, 1);
	return e;
}

/* Reserve up to `want` messages of the shared budget; how many were granted. */
static uint64_t take_budget(uint64_t want)
{
	pthread_mutex_lock(&sent_lock);
	uint64_t left = total_sent < max_msgs ? max_msgs - total_sent : 0;
	uint64_t got = want < left ? want : left;
	total_sent += got;
	pthread_mutex_unlock(&sent_lock);
	return got;
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	char *payload = malloc((size_t)p->size);
	for (int i = 0; i < p->size; i++)
		payload[i] = (char)('a' + (i * 31 + i / 7) % 26);
	/* Warm up: metadata, the connection and the topic exist before timing. */
	send_one(p->rk, payload, (size_t)p->size, 0);
	rd_kafka_flush(p->rk, 30000);
	p->delivered = 0;
	pthread_barrier_wait(&start_line);
	for (;;) {
		uint64_t grant = take_budget(256);
		if (grant == 0 || bench_now_ns() >= atomic_load(&stop_ns))
			break;
		for (uint64_t i = 0; i < grant; i++) {
			rd_kafka_resp_err_t e = send_one(p->rk, payload, (size_t)p->size, bench_now_ns());
			if (e) {
				p->failed++;
				p->last_err = e;
			} else {
				p->sent++;
			}
			rd_kafka_poll(p->rk, 0);
		}
	}
	rd_kafka_flush(p->rk, 120000);
	free(payload);
	return NULL;
}

static int run_produce(int size, int nprod, double secs, uint64_t maxmsgs)
{
	struct producer *ps = calloc((size_t)nprod, sizeof *ps);
	pthread_barrier_init(&start_line, NULL, (unsigned)nprod + 1);
	max_msgs = maxmsgs;
	atomic_store(&stop_ns, UINT64_MAX);
	for (int i = 0; i < nprod; i++) {
		ps[i].size = size;
		ps[i].rk = make_producer(&ps[i], "5");
		pthread_create(&ps[i].th, NULL, producer_main, &ps[i]);
	}
	pthread_barrier_wait(&start_line);
	start_ns = bench_now_ns();
	atomic_store(&stop_ns, start_ns + (uint64_t)(secs * 1e9));
	struct bench_lat all = { 0 };
	uint64_t sent = 0, delivered = 0, failed = 0, end = start_ns;
	rd_kafka_resp_err_t last_err = 0;
	for (int i = 0; i < nprod; i++) {
		pthread_join(ps[i].th, NULL);
		sent += ps[i].sent;
		delivered += ps[i].delivered;
		failed += ps[i].failed;
		if (ps[i].failed)
			last_err = ps[i].last_err;
		if (ps[i].last_dr_ns > end)
			end = ps[i].last_dr_ns;
		for (size_t j = 0; j < ps[i].lat.n; j++)
			bench_lat_add(&all, ps[i].lat.v[j]);
		free(ps[i].lat.v);
		rd_kafka_destroy(ps[i].rk);
	}
	bench_lat_sort(&all);
	double dt = (double)(end - start_ns) / 1e9;
	printf("{\"size\":%d,\"producers\":%d,\"msgs\":%" PRIu64 ",\"failed\":%" PRIu64
	       ",\"seconds\":%.3f,\"msgs_per_s\":%.0f,\"MBps\":%.2f,\"p50_ms\":%.3f,"
	       "\"p99_ms\":%.3f,\"p999_ms\":%.3f}\n",
	       size, nprod, delivered, failed, dt, dt > 0 ? (double)delivered / dt : 0.0,
	       dt > 0 ? (double)delivered * size / dt / 1e6 : 0.0, bench_lat_ms(&all, 0.5),
	       bench_lat_ms(&all, 0.99), bench_lat_ms(&all, 0.999));
	if (failed)
		fprintf(stderr, "kaas-kafka-bench: %" PRIu64 " messages failed (last: %s)\n", failed,
			rd_kafka_err2str(last_err));
	free(all.v);
	free(ps);
	pthread_barrier_destroy(&start_line);
	return failed || delivered != sent ? 1 : 0;
}

/* ------------------------------------------------------------- consume */

static rd_kafka_t *make_consumer(const char *wait_ms)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	/* KAAS_BENCH_FETCH_BYTES: the per-partition fetch size (default 8 MiB). */
	const char *fb = getenv("KAAS_BENCH_FETCH_BYTES");
	set(c, "fetch.message.max.bytes", fb && *fb ? fb : "8388608");
	set(c, "fetch.max.bytes", "52428800");
	set(c, "receive.message.max.bytes", "60000000");
	set(c, "queued.max.messages.kbytes", "262144");
	set(c, "fetch.wait.max.ms", wait_ms);
	set(c, "fetch.error.backoff.ms", "10");
	set(c, "enable.partition.eof", "false");
	const char *dbg = getenv("KAAS_BENCH_DEBUG"); /* librdkafka debug contexts */
	if (dbg && *dbg)
		set(c, "debug", dbg);
	return client(RD_KAFKA_CONSUMER, c);
}

struct consume_state {
	uint64_t got, bytes;
};

static void on_consumed(rd_kafka_message_t *m, void *opaque)
{
	struct consume_state *cs = opaque;
	if (!m->err) {
		cs->got++;
		cs->bytes += m->len;
	}
}

static int run_consume(uint64_t want)
{
	rd_kafka_t *rk = make_consumer("100");
	rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
	/* Timed from the first message (connection and metadata excluded). */
	struct consume_state cs = { 0, 0 };
	uint64_t last = bench_now_ns(), t0 = last, first = 0, next_report = t0 + 2000000000u;
	rd_kafka_consume_start(t, 0, RD_KAFKA_OFFSET_BEGINNING);
	while (cs.got < want && bench_now_ns() - last < 20000000000u) { /* 20 s without data: stop */
		/* Waits for the first message only, then takes what is queued. */
		int n = rd_kafka_consume_callback(t, 0, 100, on_consumed, &cs);
		if (n > 0 && cs.got > 0) {
			last = bench_now_ns();
			if (!first)
				first = last;
		}
		if (last > next_report) {
			fprintf(stderr, "  .. consumed %" PRIu64 " of %" PRIu64 " messages\n", cs.got, want);
			next_report = last + 2000000000u;
		}
	}
	uint64_t got = cs.got, bytes = cs.bytes;
	double dt = first ? (double)(last - first) / 1e9 : 0.0;
	double startup = first ? (double)(first - t0) / 1e9 : 0.0;
	rd_kafka_consume_stop(t, 0);
	rd_kafka_topic_destroy(t);
	rd_kafka_destroy(rk);
	printf("{\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.3f,\"startup_s\":%.3f,"
	       "\"msgs_per_s\":%.0f,\"MBps\":%.2f}\n",
	       got, bytes, dt, startup, dt > 0 ? (double)got / dt : 0.0,
	       dt > 0 ? (double)bytes / dt / 1e6 : 0.0);
	if (got < want)
		fprintf(stderr, "kaas-kafka-bench: read %" PRIu64 " of %" PRIu64 " messages\n", got,
			want);
	return got < want ? 1 : 0;
}

/* ----------------------------------------------------------------- e2e */

struct e2e_consumer {
	pthread_t th;
	uint64_t want, got;
	_Atomic int stop;
	struct bench_lat lat;
};

static void *e2e_consumer_main(void *arg)
{
	struct e2e_consumer *ec = arg;
	rd_kafka_t *rk = make_consumer("500");
	rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
	int64_t lo = 0, hi = 0;
	/* Start at the end as it is now: the warm-up message is skipped. */
	rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000);
	rd_kafka_consume_start(t, 0, hi);
	/* One message per call: a batch call would wait to fill its batch. */
	while (!ec->stop && ec->got < ec->want) {
		rd_kafka_message_t *m = rd_kafka_consume(t, 0, 100);
		if (!m)
			continue;
		uint64_t now = bench_now_ns();
		if (!m->err && m->len >= 8) {
			uint64_t t0;
			memcpy(&t0, m->payload, 8);
			if (t0 && now > t0)
				bench_lat_add(&ec->lat, (double)(now - t0) / 1e3);
			ec->got++;
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_consume_stop(t, 0);
	rd_kafka_topic_destroy(t);
	rd_kafka_destroy(rk);
	return NULL;
}

static int run_e2e(int size, double rate, double secs)
{
	struct producer p = { .size = size };
	p.rk = make_producer(&p, "1");
	char *payload = calloc(1, (size_t)size < 8 ? 8 : (size_t)size);
	/* Warm up the producer (and create the topic) before the consumer looks. */
	send_one(p.rk, payload, (size_t)size, 0);
	rd_kafka_flush(p.rk, 30000);
	uint64_t n = (uint64_t)(rate * secs);
	struct e2e_consumer ec = { .want = n };
	pthread_create(&ec.th, NULL, e2e_consumer_main, &ec);
	sleep_ns(1000000000u); /* the consumer's fetch is parked before we start */
	/* Paced in 1 ms ticks: each tick sends the messages that fell due. */
	uint64_t t0 = bench_now_ns(), i = 0;
	while (i < n) {
		uint64_t due = (uint64_t)((double)(bench_now_ns() - t0) / 1e9 * rate) + 1;
		for (; i < n && i < due; i++) {
			uint64_t stamp = bench_now_ns();
			memcpy(payload, &stamp, 8);
			send_one(p.rk, payload, (size_t)size, stamp);
		}
		rd_kafka_poll(p.rk, 0);
		sleep_ns(1000000u);
	}
	double achieved = (double)n / ((double)(bench_now_ns() - t0) / 1e9);
	rd_kafka_flush(p.rk, 60000);
	uint64_t deadline = bench_now_ns() + 30000000000u;
	while (ec.got < n && bench_now_ns() < deadline)
		sleep_ns(10000000u);
	ec.stop = 1;
	pthread_join(ec.th, NULL);
	rd_kafka_destroy(p.rk);
	bench_lat_sort(&p.lat);
	bench_lat_sort(&ec.lat);
	printf("{\"size\":%d,\"rate\":%.0f,\"achieved_rate\":%.0f,\"msgs\":%" PRIu64
	       ",\"received\":%" PRIu64 ",\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,"
	       "\"produce_p50_ms\":%.3f,\"produce_p99_ms\":%.3f}\n",
	       size, rate, achieved, n, ec.got, bench_lat_ms(&ec.lat, 0.5), bench_lat_ms(&ec.lat, 0.99),
	       bench_lat_ms(&ec.lat, 0.999), bench_lat_ms(&p.lat, 0.5), bench_lat_ms(&p.lat, 0.99));
	free(ec.lat.v);
	free(p.lat.v);
	free(payload);
	return ec.got == n && p.failed == 0 ? 0 : 1;
}

/* -------------------------------------------------------------- delete */

static int run_delete(void)
{
	rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, rd_kafka_conf_new());
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
	rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 60000);
	int rc = 1;
	if (!ev) {
		fprintf(stderr, "kaas-kafka-bench: delete %s: no answer in 60 s\n", topic);
	} else if (rd_kafka_event_error(ev)) {
		fprintf(stderr, "kaas-kafka-bench: delete %s: %s\n", topic,
			rd_kafka_event_error_string(ev));
	} else {
		const rd_kafka_DeleteTopics_result_t *res = rd_kafka_event_DeleteTopics_result(ev);
		size_t n = 0;
		const rd_kafka_topic_result_t **tr = rd_kafka_DeleteTopics_result_topics(res, &n);
		rc = 0;
		for (size_t i = 0; i < n; i++) {
			if (rd_kafka_topic_result_error(tr[i])) {
				fprintf(stderr, "kaas-kafka-bench: delete %s: %s\n", topic,
					rd_kafka_err2str(rd_kafka_topic_result_error(tr[i])));
				rc = 1;
			}
		}
	}
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_DeleteTopic_destroy(dt);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	printf("{\"deleted\":%s}\n", rc ? "false" : "true");
	return rc;
}

/* ---------------------------------------------------------------- main */

static double arg_num(const char *name, const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (!*s || *end || !(v > 0)) {
		fprintf(stderr, "kaas-kafka-bench: %s must be a positive number, not '%s'\n", name, s);
		exit(2);
	}
	return v;
}

static int usage(void)
{
	fprintf(stderr, "usage: kaas-kafka-bench produce BROKER TOPIC SIZE PRODUCERS SECONDS MAXMSGS\n"
			"       kaas-kafka-bench consume BROKER TOPIC MSGS\n"
			"       kaas-kafka-bench e2e BROKER TOPIC SIZE RATE SECONDS\n"
			"       kaas-kafka-bench delete BROKER TOPIC\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	if (strcmp(argv[1], "delete") == 0 && argc == 4) {
		broker = argv[2];
		topic = argv[3];
		return run_delete();
	}
	const char *mode = argv[1];
	broker = argv[2];
	topic = argv[3];
	if (strcmp(mode, "produce") == 0 && argc == 8)
		return run_produce((int)arg_num("SIZE", argv[4]), (int)arg_num("PRODUCERS", argv[5]),
				   arg_num("SECONDS", argv[6]), (uint64_t)arg_num("MAXMSGS", argv[7]));
	if (strcmp(mode, "consume") == 0 && argc == 5)
		return run_consume((uint64_t)arg_num("MSGS", argv[4]));
	if (strcmp(mode, "e2e") == 0 && argc == 7) {
		int size = (int)arg_num("SIZE", argv[4]);
		if (size < 8) {
			fprintf(stderr, "kaas-kafka-bench: e2e needs SIZE >= 8 (the send time)\n");
			return 2;
		}
		return run_e2e(size, arg_num("RATE", argv[5]), arg_num("SECONDS", argv[6]));
	}
	return usage();
}
