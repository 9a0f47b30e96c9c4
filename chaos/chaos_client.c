/*
 * chaos_client.c — the librdkafka clients of a chaos run (scripts/chaos).
 *
 *   chaos_client create BOOTSTRAP TOPIC NPART
 *       CreateTopics (replication 1); exit 0 on success or when it exists.
 *   chaos_client produce BOOTSTRAP TOPIC NPART TAG ACKFILE [PAUSE_US]
 *       An idempotent producer (enable.idempotence=true, acks=-1) writing
 *       "TAG.GEN-SEQ" (SEQ = 1, 2, ...) to partition SEQ % NPART, one every
 *       PAUSE_US (default 2000), until SIGTERM; then flushes (60 s).  Every
 *       acknowledgement appends "PARTITION OFFSET VALUE" to ACKFILE.  GEN
 *       starts at 0 and grows when librdkafka raises a fatal idempotence
 *       error (the producer is then rebuilt: a new producer, new values).
 *       Prints "produced N acked A failed F" on stderr at the end.  Exit 0.
 *   chaos_client consume BOOTSTRAP TOPIC NPART OUTFILE [TIMEOUT_S]
 *       Reads every partition from the beginning to its end (partition EOF),
 *       writing "PARTITION OFFSET VALUE" lines.  Exit 0 when every partition
 *       reached its end within TIMEOUT_S (default 120), 1 otherwise.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

static volatile sig_atomic_t stop;
static FILE *ackf;
static long acked, failed;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	(void)opaque;
	if (m->err) {
		failed++;
		return;
	}
	acked++;
	fprintf(ackf, "%d %lld %.*s\n", (int)m->partition, (long long)m->offset, (int)m->len,
		(const char *)m->payload);
	fflush(ackf);
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	if (level <= 4)
		fprintf(stderr, "chaos_client: %s: %s\n", fac, buf);
}

static rd_kafka_conf_t *base_conf(const char *bootstrap)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
	rd_kafka_conf_set(c, "topic.metadata.refresh.interval.ms", "1000", err, sizeof(err));
	rd_kafka_conf_set(c, "reconnect.backoff.max.ms", "200", err, sizeof(err));
	rd_kafka_conf_set_log_cb(c, on_log);
	return c;
}

static rd_kafka_t *new_producer(const char *bootstrap)
{
	char err[512];
	rd_kafka_conf_t *c = base_conf(bootstrap);
	const char *kv[][2] = { { "enable.idempotence", "true" },
				{ "acks", "-1" },
				{ "linger.ms", "5" },
				{ "retry.backoff.ms", "50" },
				{ "message.timeout.ms", "120000" } };
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (rd_kafka_conf_set(c, kv[i][0], kv[i][1], err, sizeof(err)) != RD_KAFKA_CONF_OK) {
			fprintf(stderr, "chaos_client: %s\n", err);
			rd_kafka_conf_destroy(c);
			return NULL;
		}
	rd_kafka_conf_set_dr_msg_cb(c, on_dr);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk)
		fprintf(stderr, "chaos_client: %s\n", err);
	return rk;
}

static int produce(const char *bootstrap, const char *topic, int npart, const char *tag,
		   const char *file, long pause_us)
{
	ackf = fopen(file, "a");
	if (!ackf) {
		perror(file);
		return 2;
	}
	long produced = 0;
	for (int gen = 0; !stop; gen++) {
		rd_kafka_t *rk = new_producer(bootstrap);
		if (!rk)
			return 2;
		int fatal = 0;
		for (long seq = 1; !stop && !fatal; seq++) {
			char v[64];
			int len = snprintf(v, sizeof(v), "%s.%d-%ld", tag, gen, seq);
			rd_kafka_resp_err_t e;
			while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
						      RD_KAFKA_V_PARTITION((int32_t)(seq % npart)),
						      RD_KAFKA_V_VALUE(v, (size_t)len),
						      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
						      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL &&
			       !stop)
				rd_kafka_poll(rk, 10);
			if (e == RD_KAFKA_RESP_ERR__FATAL) {
				fatal = 1;
				break;
			}
			if (e) {
				if (stop)
					break;
				fprintf(stderr, "chaos_client: producev: %s\n", rd_kafka_err2str(e));
				break;
			}
			produced++;
			rd_kafka_poll(rk, 0);
			char es[256];
			if (rd_kafka_fatal_error(rk, es, sizeof(es))) {
				fprintf(stderr, "chaos_client: fatal: %s (new producer)\n", es);
				fatal = 1;
			}
			if (pause_us)
				usleep((useconds_t)pause_us);
		}
		rd_kafka_flush(rk, 60000);
		rd_kafka_destroy(rk);
		if (!fatal)
			break;
	}
	fclose(ackf);
	fprintf(stderr, "chaos_client: produced %ld acked %ld failed %ld\n", produced, acked, failed);
	return 0;
}

static int create(const char *bootstrap, const char *topic, int npart)
{
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, base_conf(bootstrap), err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_client: %s\n", err);
		return 2;
	}
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
	rd_kafka_AdminOptions_set_request_timeout(o, 20000, err, sizeof(err));
	rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, npart, 1, err, sizeof(err));
	rd_kafka_CreateTopics(rk, &nt, 1, o, q);
	rd_kafka_NewTopic_destroy(nt);
	int rc = 1;
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
	if (!ev) {
		fprintf(stderr, "chaos_client: no CreateTopics result\n");
	} else if (rd_kafka_event_error(ev)) {
		fprintf(stderr, "chaos_client: %s\n", rd_kafka_event_error_string(ev));
	} else {
		size_t n = 0;
		const rd_kafka_topic_result_t **res =
			rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
		rc = 0;
		for (size_t i = 0; i < n; i++) {
			rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
			if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
				fprintf(stderr, "chaos_client: %s: %s\n", rd_kafka_topic_result_name(res[i]),
					rd_kafka_topic_result_error_string(res[i]));
				rc = 1;
			}
		}
	}
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_AdminOptions_destroy(o);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

static long long mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec;
}

static int consume(const char *bootstrap, const char *topic, int npart, const char *file,
		   int timeout_s)
{
	FILE *out = fopen(file, "w");
	if (!out) {
		perror(file);
		return 2;
	}
	char err[512];
	rd_kafka_conf_t *c = base_conf(bootstrap);
	rd_kafka_conf_set(c, "enable.partition.eof", "true", err, sizeof(err));
	rd_kafka_conf_set(c, "group.id", "chaos-checker", err, sizeof(err));
	rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof(err));
	rd_kafka_conf_set(c, "auto.offset.reset", "earliest", err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_client: %s\n", err);
		return 2;
	}
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(npart);
	for (int p = 0; p < npart; p++)
		rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
	rd_kafka_assign(rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	char *eof = calloc((size_t)npart, 1);
	int left = npart;
	long long end = mono_s() + timeout_s;
	while (left > 0 && mono_s() < end) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 500);
		if (!m)
			continue;
		if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (m->partition >= 0 && m->partition < npart && !eof[m->partition]) {
				eof[m->partition] = 1;
				left--;
			}
		} else if (m->err) {
			fprintf(stderr, "chaos_client: consume: %s\n", rd_kafka_message_errstr(m));
		} else {
			fprintf(out, "%d %lld %.*s\n", (int)m->partition, (long long)m->offset,
				(int)m->len, (const char *)m->payload);
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	fclose(out);
	free(eof);
	if (left)
		fprintf(stderr, "chaos_client: %d partition(s) did not reach their end in %d s\n", left,
			timeout_s);
	return left ? 1 : 0;
}

int main(int argc, char **argv)
{
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (argc == 5 && !strcmp(argv[1], "create") && atoi(argv[4]) > 0)
		return create(argv[2], argv[3], atoi(argv[4]));
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "produce") && atoi(argv[4]) > 0)
		return produce(argv[2], argv[3], atoi(argv[4]), argv[5], argv[6],
			       argc == 8 ? atol(argv[7]) : 2000);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "consume") && atoi(argv[4]) > 0)
		return consume(argv[2], argv[3], atoi(argv[4]), argv[5], argc == 7 ? atoi(argv[6]) : 120);
	fprintf(stderr, "usage: chaos_client create BOOTSTRAP TOPIC NPART\n"
			"       chaos_client produce BOOTSTRAP TOPIC NPART TAG ACKFILE [PAUSE_US]\n"
			"       chaos_client consume BOOTSTRAP TOPIC NPART OUTFILE [TIMEOUT_S]\n");
	return 2;
}
