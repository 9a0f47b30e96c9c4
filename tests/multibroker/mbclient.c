/*
 * mbclient.c — librdkafka helper for the multi-broker tests.
 *
 *   mbclient produce BOOTSTRAP TOPIC COUNT ACKFILE [PAUSE_US]
 *       produce "1".."COUNT" to partition 0 (acks=all, one request in
 *       flight, retried across leader changes), one every PAUSE_US
 *       (default 1000); each acknowledgement appends "SEQ OFFSET MS BROKER" to
 *       ACKFILE (MS: wall clock, to line up with the test's kill time;
 *       BROKER: the id of the broker that acknowledged it).
 *       SIGTERM stops producing; what is queued is still delivered.
 *       Exit 0 when every produced message was acknowledged.
 *   mbclient create BOOTSTRAP TOPIC NPART
 *   mbclient delete BOOTSTRAP TOPIC
 *       CreateTopics / DeleteTopics; exit 0 on success.
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

static long long wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	(void)opaque;
	long seq = (long)(intptr_t)m->_private;
	if (m->err) {
		failed++;
		fprintf(stderr, "mbclient: message %ld failed: %s\n", seq, rd_kafka_err2str(m->err));
		return;
	}
	acked++;
	fprintf(ackf, "%ld %lld %lld %d\n", seq, (long long)m->offset, wall_ms(),
		(int)rd_kafka_message_broker_id(m));
	fflush(ackf);
}

static rd_kafka_t *client(rd_kafka_type_t type, const char *bootstrap, rd_kafka_conf_t *c)
{
	char err[512];
	if (!c)
		c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
	rd_kafka_conf_set(c, "topic.metadata.refresh.interval.ms", "1000", err, sizeof(err));
	rd_kafka_conf_set(c, "reconnect.backoff.max.ms", "200", err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(type, c, err, sizeof(err));
	if (!rk)
		fprintf(stderr, "mbclient: %s\n", err);
	return rk;
}

static int produce(const char *bootstrap, const char *topic, long count, const char *file,
		   long pause_us)
{
	ackf = fopen(file, "a");
	if (!ackf) {
		perror(file);
		return 2;
	}
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "acks", "all", err, sizeof(err));
	rd_kafka_conf_set(c, "max.in.flight.requests.per.connection", "1", err, sizeof(err));
	rd_kafka_conf_set(c, "linger.ms", "2", err, sizeof(err));
	rd_kafka_conf_set(c, "retry.backoff.ms", "20", err, sizeof(err));
	rd_kafka_conf_set(c, "message.timeout.ms", "60000", err, sizeof(err));
	rd_kafka_conf_set_dr_msg_cb(c, on_dr);
	rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, bootstrap, c);
	if (!rk)
		return 2;
	long sent = 0;
	for (long i = 1; i <= count && !stop; i++) {
		char v[32];
		int len = snprintf(v, sizeof(v), "%ld", i);
		rd_kafka_resp_err_t e;
		while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
					      RD_KAFKA_V_VALUE(v, (size_t)len),
					      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
					      RD_KAFKA_V_OPAQUE((void *)(intptr_t)i),
					      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 10);
		if (e) {
			fprintf(stderr, "mbclient: producev: %s\n", rd_kafka_err2str(e));
			break;
		}
		sent++;
		rd_kafka_poll(rk, 0);
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	rd_kafka_flush(rk, 90000);
	rd_kafka_destroy(rk);
	fclose(ackf);
	fprintf(stderr, "mbclient: %ld sent, %ld acknowledged, %ld failed\n", sent, acked, failed);
	return acked == sent ? 0 : 1;
}

static int admin(const char *bootstrap, const char *topic, int create, int npart)
{
	rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, bootstrap, NULL);
	if (!rk)
		return 2;
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	char err[512];
	rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
	rd_kafka_AdminOptions_set_request_timeout(o, 20000, err, sizeof(err));
	if (create) {
		rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, npart, 1, err, sizeof(err));
		rd_kafka_CreateTopics(rk, &nt, 1, o, q);
		rd_kafka_NewTopic_destroy(nt);
	} else {
		rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
		rd_kafka_DeleteTopics(rk, &dt, 1, o, q);
		rd_kafka_DeleteTopic_destroy(dt);
	}
	int rc = 1;
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
	if (!ev) {
		fprintf(stderr, "mbclient: no admin result\n");
	} else if (rd_kafka_event_error(ev)) {
		fprintf(stderr, "mbclient: %s\n", rd_kafka_event_error_string(ev));
	} else {
		const rd_kafka_topic_result_t **res;
		size_t n = 0;
		if (create)
			res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
		else
			res = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
		rc = 0;
		for (size_t i = 0; i < n; i++)
			if (rd_kafka_topic_result_error(res[i])) {
				fprintf(stderr, "mbclient: %s: %s\n", rd_kafka_topic_result_name(res[i]),
					rd_kafka_topic_result_error_string(res[i]));
				rc = 1;
			}
	}
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_AdminOptions_destroy(o);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

int main(int argc, char **argv)
{
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (argc >= 6 && strcmp(argv[1], "produce") == 0)
		return produce(argv[2], argv[3], atol(argv[4]), argv[5],
			       argc > 6 ? atol(argv[6]) : 1000);
	if (argc == 5 && strcmp(argv[1], "create") == 0)
		return admin(argv[2], argv[3], 1, atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "delete") == 0)
		return admin(argv[2], argv[3], 0, 0);
	fprintf(stderr, "usage: mbclient produce BOOTSTRAP TOPIC COUNT ACKFILE [PAUSE_US]\n"
			"       mbclient create BOOTSTRAP TOPIC NPART\n"
			"       mbclient delete BOOTSTRAP TOPIC\n");
	return 2;
}
