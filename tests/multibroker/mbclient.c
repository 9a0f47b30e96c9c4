/*
 * mbclient.c — librdkafka helper for the multi-broker tests.
 *
 *   mbclient produce [--idempotent] BOOTSTRAP TOPIC COUNT ACKFILE [PAUSE_US]
 *       produce "1".."COUNT" to partition 0 (acks=all, one request in
 *       flight, retried across leader changes; --idempotent: the
 *       idempotent producer, five requests in flight), one every PAUSE_US
 *       (default 1000); each acknowledgement appends "SEQ OFFSET MS BROKER" to
 *       ACKFILE (MS: wall clock, to line up with the test's kill time;
 *       BROKER: the id of the broker that acknowledged it).
 *       SIGTERM stops producing; what is queued is still delivered.
 *       Exit 0 when every produced message was acknowledged.
 *   mbclient consume BOOTSTRAP GROUP TOPIC OUTFILE
 *       a member of consumer group GROUP subscribed to TOPIC (one
 *       partition, 0) that consumes exactly once: a batch of messages is
 *       appended to OUTFILE ("OFFSET VALUE" lines) only after its offset
 *       commit succeeded; a commit that failed is resolved by reading the
 *       committed offset back (from whichever broker coordinates the group
 *       by then): applied, the batch is written; not applied, the batch is
 *       dropped and consumed again from the committed offset.  Exit 1 at
 *       once if the stream jumps (a gap, or offsets going back past what
 *       was written: committed offsets lost).  SIGTERM: exit 0 after the
 *       current batch.
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
	/* MBCLIENT_DEBUG=CONTEXTS: librdkafka's debug log on stderr. */
	const char *dbg = getenv("MBCLIENT_DEBUG");
	if (dbg && *dbg)
		rd_kafka_conf_set(c, "debug", dbg, err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(type, c, err, sizeof(err));
	if (!rk)
		fprintf(stderr, "mbclient: %s\n", err);
	return rk;
}

static int produce(const char *bootstrap, const char *topic, long count, const char *file,
		   long pause_us, int idempotent)
{
	ackf = fopen(file, "a");
	if (!ackf) {
		perror(file);
		return 2;
	}
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "acks", "all", err, sizeof(err));
	rd_kafka_conf_set(c, "max.in.flight.requests.per.connection", idempotent ? "5" : "1", err,
			  sizeof(err));
	if (idempotent)
		rd_kafka_conf_set(c, "enable.idempotence", "true", err, sizeof(err));
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

/* ------------------------------------------------------------ consume */

#define BATCH_MAX 200

static struct {
	FILE *out;
	const char *topic;
	long long next;           /* offset after the last line written */
	int npend;
	long long pend_off[BATCH_MAX];
	char *pend_val[BATCH_MAX];
	int assigned;
	int broken;               /* the stream jumped: exit 1 */
} cs;

static void drop_pending(void)
{
	for (int i = 0; i < cs.npend; i++)
		free(cs.pend_val[i]);
	cs.npend = 0;
}

/* The group's committed offset of partition 0: 0 and *off (-1 when none),
 * or -1 when no coordinator answered within 30 s. */
static int read_committed(rd_kafka_t *rk, long long *off)
{
	for (int i = 0; i < 30; i++) {
		rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
		rd_kafka_topic_partition_list_add(l, cs.topic, 0);
		rd_kafka_resp_err_t e = rd_kafka_committed(rk, l, 1000);
		if (!e)
			e = l->elems[0].err;
		*off = l->elems[0].offset < 0 ? -1 : l->elems[0].offset;
		rd_kafka_topic_partition_list_destroy(l);
		if (!e)
			return 0;
		fprintf(stderr, "mbclient: reading the committed offset: %s\n", rd_kafka_err2str(e));
		sleep(1);
	}
	return -1;
}

/* Rebalance: nothing uncommitted survives a revoke; an assignment must
 * start exactly where the written output ends (the committed offset). */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	(void)opaque;
	drop_pending();
	if (err != RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		cs.assigned = 0;
		rd_kafka_assign(rk, NULL);
		return;
	}
	long long c = -1;
	if (read_committed(rk, &c) < 0) {
		fprintf(stderr, "mbclient: no committed offset readable after an assignment\n");
		cs.broken = 1;
	} else if (c != (cs.next == 0 ? -1 : cs.next) && !(c == 0 && cs.next == 0)) {
		fprintf(stderr, "mbclient: assigned at committed offset %lld, but %lld were consumed and committed\n",
			c, cs.next);
		cs.broken = 1;
	}
	for (int i = 0; i < parts->cnt; i++)
		parts->elems[i].offset = cs.next;
	cs.assigned = 1;
	rd_kafka_assign(rk, parts);
}

/* Commit the pending batch; write it once the commit is known applied. */
static void flush_pending(rd_kafka_t *rk)
{
	if (!cs.npend || !cs.assigned)
		return;
	long long to = cs.next + cs.npend;
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, cs.topic, 0)->offset = to;
	rd_kafka_resp_err_t e = rd_kafka_commit(rk, l, 0);
	if (!e)
		e = l->elems[0].err;
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		long long c = -1;
		fprintf(stderr, "mbclient: commit of %lld failed: %s\n", to, rd_kafka_err2str(e));
		if (read_committed(rk, &c) < 0)
			return; /* retried at the next flush */
		if (c != to) {
			if (c != (cs.next == 0 ? -1 : cs.next)) {
				fprintf(stderr, "mbclient: committed offset %lld, expected %lld or %lld\n",
					c, cs.next, to);
				cs.broken = 1;
			}
			return; /* not applied: committed again at the next flush */
		}
	}
	for (int i = 0; i < cs.npend; i++)
		fprintf(cs.out, "%lld %s\n", cs.pend_off[i], cs.pend_val[i]);
	fflush(cs.out);
	cs.next = to;
	drop_pending();
}

static int consume(const char *bootstrap, const char *group, const char *topic, const char *file)
{
	cs.out = fopen(file, "a");
	if (!cs.out) {
		perror(file);
		return 2;
	}
	cs.topic = topic;
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "group.id", group, err, sizeof(err));
	rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof(err));
	rd_kafka_conf_set(c, "auto.offset.reset", "earliest", err, sizeof(err));
	rd_kafka_conf_set(c, "session.timeout.ms", "6000", err, sizeof(err));
	rd_kafka_conf_set(c, "heartbeat.interval.ms", "500", err, sizeof(err));
	rd_kafka_conf_set(c, "fetch.wait.max.ms", "100", err, sizeof(err));
	rd_kafka_conf_set_rebalance_cb(c, on_rebalance);
	rd_kafka_t *rk = client(RD_KAFKA_CONSUMER, bootstrap, c);
	if (!rk)
		return 2;
	rd_kafka_poll_set_consumer(rk);
	rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t e = rd_kafka_subscribe(rk, sub);
	rd_kafka_topic_partition_list_destroy(sub);
	if (e) {
		fprintf(stderr, "mbclient: subscribe: %s\n", rd_kafka_err2str(e));
		return 2;
	}
	while (!stop && !cs.broken) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
		if (!m) {
			flush_pending(rk);
			continue;
		}
		if (m->err) {
			if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
				fprintf(stderr, "mbclient: consume: %s\n", rd_kafka_message_errstr(m));
		} else if (m->partition == 0) {
			long long want = cs.next + cs.npend;
			if (m->offset != want) {
				fprintf(stderr, "mbclient: got offset %lld, expected %lld\n",
					(long long)m->offset, want);
				cs.broken = 1;
			} else {
				cs.pend_off[cs.npend] = m->offset;
				cs.pend_val[cs.npend] = strndup(m->payload ? (const char *)m->payload : "",
								 m->len);
				cs.npend++;
			}
		}
		rd_kafka_message_destroy(m);
		if (cs.npend == BATCH_MAX)
			flush_pending(rk);
	}
	if (!cs.broken)
		flush_pending(rk);
	drop_pending();
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	fclose(cs.out);
	fprintf(stderr, "mbclient: consumed and committed %lld message(s)%s\n", cs.next,
		cs.broken ? "; the stream broke" : "");
	return cs.broken ? 1 : 0;
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
	if (argc >= 3 && strcmp(argv[1], "produce") == 0) {
		int idem = strcmp(argv[2], "--idempotent") == 0;
		char **a = argv + idem;
		int n = argc - idem;
		if (n >= 6)
			return produce(a[2], a[3], atol(a[4]), a[5], n > 6 ? atol(a[6]) : 1000, idem);
	}
	if (argc == 6 && strcmp(argv[1], "consume") == 0)
		return consume(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 5 && strcmp(argv[1], "create") == 0)
		return admin(argv[2], argv[3], 1, atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "delete") == 0)
		return admin(argv[2], argv[3], 0, 0);
	fprintf(stderr, "usage: mbclient produce [--idempotent] BOOTSTRAP TOPIC COUNT ACKFILE [PAUSE_US]\n"
			"       mbclient consume BOOTSTRAP GROUP TOPIC OUTFILE\n"
			"       mbclient create BOOTSTRAP TOPIC NPART\n"
			"       mbclient delete BOOTSTRAP TOPIC\n");
	return 2;
}
