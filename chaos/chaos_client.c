/*
 * chaos_client.c — the librdkafka clients of a chaos run (scripts/chaos).
 *
 * TOPICS is "NAME:NPART[,NAME:NPART...]" (at most 8 topics).
 *
 *   chaos_client create BOOTSTRAP TOPIC NPART [KEY=VALUE...]
 *       CreateTopics (replication 1, the topic configs given); exit 0 on
 *       success, 3 when it exists (or is still being deleted: the broker's
 *       message on stderr), 1 else.
 *   chaos_client delete BOOTSTRAP TOPIC
 *       DeleteTopics; exit 0 on success or when it does not exist, 1 else.
 *   chaos_client produce BOOTSTRAP TOPICS TAG ACKFILE [PAUSE_US]
 *       An idempotent producer (enable.idempotence=true, acks=-1) writing
 *       "TAG.GEN-SEQ" (SEQ = 1, 2, ...) to topic SEQ % NTOPICS, partition
 *       (SEQ / NTOPICS) % NPART, one every PAUSE_US (default 2000), until
 *       SIGTERM; then flushes (60 s).  Every acknowledgement appends
 *       "TOPIC PARTITION OFFSET VALUE" to ACKFILE.  GEN starts at 0 and grows
 *       when librdkafka raises a fatal idempotence error (the producer is
 *       then rebuilt: a new producer, new values).  Prints "produced N acked
 *       A failed F" on stderr at the end.  Exit 0.
 *   chaos_client consume BOOTSTRAP TOPICS OUTFILE [TIMEOUT_S]
 *       Reads every partition from the beginning to its end (partition EOF),
 *       writing "TOPIC PARTITION OFFSET VALUE" lines.  Exit 0 when every
 *       partition reached its end within TIMEOUT_S (default 120), 1 otherwise.
 *       CHAOS_ISOLATION=read_committed: reads with that isolation level.
 *       CHAOS_KV=1: the key-value format of "kv" below, "TOPIC PARTITION
 *       OFFSET KEY put|del ID" (ID from the record's "id" header).
 *   chaos_client kv BOOTSTRAP TOPIC NPART NKEYS TAG PREFIX [PAUSE_US]
 *       The key-value workload (a compacted topic): an idempotent producer
 *       (acks=-1) writing, one every PAUSE_US (default 20000), to key
 *       "kNN" (NN drawn from 0..NKEYS-1, seeded by TAG) in partition
 *       NN % NPART, a record with header "id" = "TAG.GEN-SEQ" (SEQ = 1, 2,
 *       ...; GEN as in produce) and the ID as its value, or, one write in
 *       eight, a tombstone (null value).  Before each write appends "TOPIC
 *       PARTITION -1 KEY put|del ID" to PREFIX.sent (flushed: a write the
 *       broker may have is always there); each acknowledgement appends
 *       "TOPIC PARTITION OFFSET KEY put|del ID" to PREFIX.acks.  Until
 *       SIGTERM, then flushes (60 s).  Exit 0.
 *   chaos_client group BOOTSTRAP GROUP TOPICS MEMBER PREFIX [DRAIN_S]
 *       A member of consumer group GROUP (subscribe, manual commits) until
 *       SIGTERM (then it leaves the group).  Appends every record it is given
 *       to PREFIX.consumed ("TOPIC PARTITION OFFSET VALUE", written before
 *       the offset is committed), every commit the coordinator acknowledged
 *       to PREFIX.commits ("GROUP TOPIC PARTITION OFFSET SENT_US ACKED_US
 *       MEMBER", realtime microseconds) and every change of a partition's
 *       high watermark it observed to PREFIX.hwm ("MEMBER TOPIC PARTITION
 *       HWM").  Commits the consumed positions every 300 ms.  With DRAIN_S:
 *       exits (0) once every partition of TOPICS reached its end, 1 when
 *       that takes longer than DRAIN_S.
 *
 * CHAOS_RDKAFKA_DEBUG=CONTEXTS (e.g. "eos,msg") turns on librdkafka's debug
 * log for those contexts, on stderr.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#define MAX_TOPICS 8

struct topics {
	int n;
	char name[MAX_TOPICS][64];
	int npart[MAX_TOPICS];
	int total; /* partitions over all topics */
};

/* Parses "NAME:NPART[,...]" into T; returns 0, or -1 (message on stderr). */
static int parse_topics(const char *spec, struct topics *t)
{
	memset(t, 0, sizeof(*t));
	const char *s = spec;
	while (*s) {
		const char *colon = strchr(s, ':');
		if (!colon || colon == s || colon - s >= 64 || t->n == MAX_TOPICS)
			goto bad;
		char *end;
		long n = strtol(colon + 1, &end, 10);
		if (n <= 0 || n > 1000 || (*end && *end != ','))
			goto bad;
		memcpy(t->name[t->n], s, (size_t)(colon - s));
		t->npart[t->n++] = (int)n;
		t->total += (int)n;
		s = *end ? end + 1 : end;
	}
	if (t->n)
		return 0;
bad:
	fprintf(stderr, "chaos_client: bad TOPICS '%s' (NAME:NPART[,NAME:NPART...], at most %d)\n",
		spec, MAX_TOPICS);
	return -1;
}

static int topic_index(const struct topics *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->name[i], name))
			return i;
	return -1;
}

/* Index of partition P of topic I among all partitions of T. */
static int slot(const struct topics *t, int i, int p)
{
	int k = 0;
	for (int j = 0; j < i; j++)
		k += t->npart[j];
	return k + p;
}

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

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
	fprintf(ackf, "%s %d %lld %.*s\n", rd_kafka_topic_name(m->rkt), (int)m->partition, (long long)m->offset, (int)m->len,
		(const char *)m->payload);
	fflush(ackf);
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	if (level <= 4 || getenv("CHAOS_RDKAFKA_DEBUG"))
		fprintf(stderr, "chaos_client: %s: %s\n", fac, buf);
}

static rd_kafka_conf_t *base_conf(const char *bootstrap)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
	rd_kafka_conf_set(c, "topic.metadata.refresh.interval.ms", "1000", err, sizeof(err));
	rd_kafka_conf_set(c, "reconnect.backoff.max.ms", "200", err, sizeof(err));
	/* CHAOS_RDKAFKA_DEBUG=eos,msg,...: librdkafka's debug contexts, logged
	 * on stderr (to see, say, why a producer bumped its epoch). */
	const char *dbg = getenv("CHAOS_RDKAFKA_DEBUG");
	if (dbg && *dbg)
		rd_kafka_conf_set(c, "debug", dbg, err, sizeof(err));
	rd_kafka_conf_set_log_cb(c, on_log);
	return c;
}

typedef void (*dr_cb)(rd_kafka_t *, const rd_kafka_message_t *, void *);

static rd_kafka_t *new_producer(const char *bootstrap, dr_cb dr)
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
	rd_kafka_conf_set_dr_msg_cb(c, dr);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk)
		fprintf(stderr, "chaos_client: %s\n", err);
	return rk;
}

/* After one message was queued: counts it (a line every 1000), serves the
 * delivery reports, pauses pause_us; 1 when the producer hit a fatal error
 * (the caller starts a new one), else 0. */
static int after_produce(rd_kafka_t *rk, long *produced, long pause_us)
{
	if (++*produced % 1000 == 0)
		fprintf(stderr, "chaos_client: produced %ld\n", *produced);
	rd_kafka_poll(rk, 0);
	char es[256];
	int fatal = 0;
	if (rd_kafka_fatal_error(rk, es, sizeof(es))) {
		fprintf(stderr, "chaos_client: fatal: %s (new producer)\n", es);
		fatal = 1;
	}
	if (pause_us)
		usleep((useconds_t)pause_us);
	return fatal;
}

static int produce(const char *bootstrap, const struct topics *t, const char *tag,
		   const char *file, long pause_us)
{
	ackf = fopen(file, "a");
	if (!ackf) {
		perror(file);
		return 2;
	}
	long produced = 0;
	for (int gen = 0; !stop; gen++) {
		rd_kafka_t *rk = new_producer(bootstrap, on_dr);
		if (!rk)
			return 2;
		int fatal = 0;
		for (long seq = 1; !stop && !fatal; seq++) {
			char v[64];
			int len = snprintf(v, sizeof(v), "%s.%d-%ld", tag, gen, seq);
			rd_kafka_resp_err_t e;
			int ti = (int)(seq % t->n);
			int32_t part = (int32_t)((seq / t->n) % t->npart[ti]);
			while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(t->name[ti]),
						      RD_KAFKA_V_PARTITION(part),
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
			fatal = after_produce(rk, &produced, pause_us);
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

/* --- the key-value workload ------------------------------------------------ */
static FILE *sentf;

/* The acknowledgement of a kv write: its ID is the message's opaque. */
static void on_kv_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	(void)opaque;
	char *id = m->_private;
	if (m->err) {
		failed++;
	} else {
		acked++;
		fprintf(ackf, "%s %d %lld %.*s %s %s\n", rd_kafka_topic_name(m->rkt), (int)m->partition,
			(long long)m->offset, (int)m->key_len, (const char *)m->key,
			m->payload ? "put" : "del", id);
		fflush(ackf);
	}
	free(id);
}

/* A small seeded generator (the key draw is a function of TAG). */
static uint32_t next_rand(uint64_t *st)
{
	*st = *st * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*st >> 33);
}

static int kv_produce(const char *bootstrap, const char *topic, int npart, int nkeys,
		      const char *tag, const char *prefix, long pause_us)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.sent", prefix);
	sentf = fopen(path, "a");
	snprintf(path, sizeof(path), "%s.acks", prefix);
	ackf = fopen(path, "a");
	if (!sentf || !ackf) {
		perror(prefix);
		return 2;
	}
	uint64_t rnd = 1469598103934665603ull;
	for (const char *c = tag; *c; c++)
		rnd = (rnd ^ (unsigned char)*c) * 1099511628211ull;
	long produced = 0;
	for (int gen = 0; !stop; gen++) {
		rd_kafka_t *rk = new_producer(bootstrap, on_kv_dr);
		if (!rk)
			return 2;
		int fatal = 0;
		for (long seq = 1; !stop && !fatal; seq++) {
			char id[64], key[16];
			snprintf(id, sizeof(id), "%s.%d-%ld", tag, gen, seq);
			int k = (int)(next_rand(&rnd) % (uint32_t)nkeys);
			int del = next_rand(&rnd) % 8 == 0;
			int klen = snprintf(key, sizeof(key), "k%02d", k);
			int32_t part = k % npart;
			fprintf(sentf, "%s %d -1 %s %s %s\n", topic, (int)part, key, del ? "del" : "put", id);
			fflush(sentf);
			char *op = strdup(id);
			if (!op)
				return 2;
			rd_kafka_resp_err_t e;
			while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
						      RD_KAFKA_V_KEY(key, (size_t)klen),
						      RD_KAFKA_V_VALUE(del ? NULL : id, del ? 0 : strlen(id)),
						      RD_KAFKA_V_HEADER("id", id, (ssize_t)strlen(id)),
						      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
						      RD_KAFKA_V_OPAQUE(op), RD_KAFKA_V_END)) ==
				       RD_KAFKA_RESP_ERR__QUEUE_FULL &&
			       !stop)
				rd_kafka_poll(rk, 10);
			if (e) {
				free(op);
				if (e == RD_KAFKA_RESP_ERR__FATAL)
					fatal = 1;
				else if (!stop)
					fprintf(stderr, "chaos_client: producev: %s\n", rd_kafka_err2str(e));
				break;
			}
			fatal = after_produce(rk, &produced, pause_us);
		}
		rd_kafka_flush(rk, 60000);
		rd_kafka_destroy(rk);
		if (!fatal)
			break;
	}
	fclose(ackf);
	fclose(sentf);
	fprintf(stderr, "chaos_client: produced %ld acked %ld failed %ld\n", produced, acked, failed);
	return 0;
}

/* CreateTopics (npart > 0; with the nconf "KEY=VALUE" topic configs conf)
 * or DeleteTopics (npart == 0) of TOPIC.  Create: 0 created, 3 already
 * exists (or still being deleted), 1 other errors.  Delete: 0 deleted or
 * unknown, 1 else.  2 on setup errors. */
static int admin_topic(const char *bootstrap, const char *topic, int npart, char **conf, int nconf)
{
	const int del = npart == 0;
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, base_conf(bootstrap), err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_client: %s\n", err);
		return 2;
	}
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
	rd_kafka_AdminOptions_set_request_timeout(o, 20000, err, sizeof(err));
	if (del) {
		rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
		rd_kafka_DeleteTopics(rk, &dt, 1, o, q);
		rd_kafka_DeleteTopic_destroy(dt);
	} else {
		rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, npart, 1, err, sizeof(err));
		for (int i = 0; i < nconf; i++) {
			char *eq = strchr(conf[i], '=');
			if (!eq || eq == conf[i]) {
				fprintf(stderr, "chaos_client: bad topic config '%s' (KEY=VALUE)\n", conf[i]);
				rd_kafka_NewTopic_destroy(nt);
				rd_kafka_AdminOptions_destroy(o);
				rd_kafka_queue_destroy(q);
				rd_kafka_destroy(rk);
				return 2;
			}
			*eq = 0;
			rd_kafka_NewTopic_set_config(nt, conf[i], eq + 1);
			*eq = '=';
		}
		rd_kafka_CreateTopics(rk, &nt, 1, o, q);
		rd_kafka_NewTopic_destroy(nt);
	}
	int rc = 1;
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
	if (!ev) {
		fprintf(stderr, "chaos_client: no %s result\n", del ? "DeleteTopics" : "CreateTopics");
	} else if (rd_kafka_event_error(ev)) {
		fprintf(stderr, "chaos_client: %s\n", rd_kafka_event_error_string(ev));
	} else {
		size_t n = 0;
		const rd_kafka_topic_result_t **res =
			del ? rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n)
			    : rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
		rc = 0;
		for (size_t i = 0; i < n; i++) {
			rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
			if (!e || (del && e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART))
				continue;
			fprintf(stderr, "chaos_client: %s %s: %s\n", del ? "delete" : "create",
				rd_kafka_topic_result_name(res[i]), rd_kafka_topic_result_error_string(res[i]));
			rc = !del && e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS ? 3 : 1;
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

/* A record read in the key-value format: "TOPIC PARTITION OFFSET KEY
 * put|del ID" (ID: the "id" header; "-" when absent, "?" for no key). */
static void write_kv(FILE *out, const char *topic, const rd_kafka_message_t *m)
{
	rd_kafka_headers_t *h = NULL;
	const void *id = NULL;
	size_t idlen = 0;
	if (rd_kafka_message_headers(m, &h) || rd_kafka_header_get_last(h, "id", &id, &idlen) || !id)
		id = "-", idlen = 1;
	fprintf(out, "%s %d %lld %.*s %s %.*s\n", topic, (int)m->partition, (long long)m->offset,
		m->key_len ? (int)m->key_len : 1, m->key_len ? (const char *)m->key : "?",
		m->payload ? "put" : "del", (int)idlen, (const char *)id);
}

static int consume(const char *bootstrap, const struct topics *t, const char *file, int timeout_s)
{
	const char *kvs = getenv("CHAOS_KV");
	int kv = kvs && !strcmp(kvs, "1");
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
	const char *iso = getenv("CHAOS_ISOLATION"); /* read_committed: the txn workload */
	if (iso && *iso)
		rd_kafka_conf_set(c, "isolation.level", iso, err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_client: %s\n", err);
		fclose(out);
		return 2;
	}
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(t->total);
	for (int i = 0; i < t->n; i++)
		for (int p = 0; p < t->npart[i]; p++)
			rd_kafka_topic_partition_list_add(l, t->name[i], p)->offset =
				RD_KAFKA_OFFSET_BEGINNING;
	rd_kafka_assign(rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	char *eof = calloc((size_t)t->total, 1);
	int left = t->total;
	long long end = mono_s() + timeout_s;
	while (left > 0 && mono_s() < end) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 500);
		if (!m)
			continue;
		int ti = m->rkt ? topic_index(t, rd_kafka_topic_name(m->rkt)) : -1;
		if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (ti >= 0 && m->partition >= 0 && m->partition < t->npart[ti] &&
			    !eof[slot(t, ti, m->partition)]) {
				eof[slot(t, ti, m->partition)] = 1;
				left--;
			}
		} else if (m->err) {
			fprintf(stderr, "chaos_client: consume: %s\n", rd_kafka_message_errstr(m));
		} else if (ti >= 0 && kv) {
			write_kv(out, t->name[ti], m);
		} else if (ti >= 0) {
			fprintf(out, "%s %d %lld %.*s\n", t->name[ti], (int)m->partition,
				(long long)m->offset, (int)m->len, (const char *)m->payload);
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

/* The group member's state for the commit callback. */
struct member {
	const char *group, *name;
	FILE *commits;
	long long sent_us;
	long ncommits;
};

static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
		      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
	(void)rk;
	struct member *m = opaque;
	long long ack = now_us();
	if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
		fprintf(stderr, "chaos_client: %s: commit: %s\n", m->name, rd_kafka_err2str(err));
	for (int i = 0; offsets && i < offsets->cnt; i++) {
		rd_kafka_topic_partition_t *p = &offsets->elems[i];
		if (p->err || p->offset < 0)
			continue;
		fprintf(m->commits, "%s %s %d %lld %lld %lld %s\n", m->group, p->topic,
			(int)p->partition, (long long)p->offset, m->sent_us, ack, m->name);
		m->ncommits++;
	}
	fflush(m->commits);
}

/* Commits the positions of the current assignment (synchronously: the
 * callback runs before this returns). */
static void commit_positions(rd_kafka_t *rk, struct member *mb)
{
	rd_kafka_topic_partition_list_t *a = NULL;
	if (rd_kafka_assignment(rk, &a) || !a)
		return;
	if (a->cnt && !rd_kafka_position(rk, a)) {
		rd_kafka_topic_partition_list_t *c = rd_kafka_topic_partition_list_new(a->cnt);
		for (int i = 0; i < a->cnt; i++)
			if (a->elems[i].offset >= 0)
				rd_kafka_topic_partition_list_add(c, a->elems[i].topic,
								  a->elems[i].partition)
					->offset = a->elems[i].offset;
		if (c->cnt) {
			mb->sent_us = now_us();
			rd_kafka_commit_queue(rk, c, NULL, on_commit, mb);
		}
		rd_kafka_topic_partition_list_destroy(c);
	}
	rd_kafka_topic_partition_list_destroy(a);
}

static FILE *open_with(const char *prefix, const char *suffix)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.%s", prefix, suffix);
	FILE *f = fopen(path, "a");
	if (!f)
		perror(path);
	return f;
}

static int run_member(const char *bootstrap, const char *group, const struct topics *t,
			const char *name, const char *prefix, int drain_s)
{
	FILE *consumed = open_with(prefix, "consumed"), *hwmf = open_with(prefix, "hwm");
	struct member mb = { .group = group, .name = name, .commits = open_with(prefix, "commits") };
	if (!consumed || !hwmf || !mb.commits)
		return 2;
	char err[512];
	rd_kafka_conf_t *c = base_conf(bootstrap);
	const char *kv[][2] = { { "group.id", group },
				{ "enable.auto.commit", "false" },
				{ "auto.offset.reset", "earliest" },
				{ "enable.partition.eof", "true" },
				{ "session.timeout.ms", "6000" },
				{ "heartbeat.interval.ms", "500" },
				{ "max.poll.interval.ms", "30000" },
				{ "client.id", name } };
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (rd_kafka_conf_set(c, kv[i][0], kv[i][1], err, sizeof(err)) != RD_KAFKA_CONF_OK) {
			fprintf(stderr, "chaos_client: %s\n", err);
			rd_kafka_conf_destroy(c);
			return 2;
		}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_client: %s\n", err);
		return 2;
	}
	rd_kafka_poll_set_consumer(rk);
	rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(t->n);
	for (int i = 0; i < t->n; i++)
		rd_kafka_topic_partition_list_add(sub, t->name[i], RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t e = rd_kafka_subscribe(rk, sub);
	rd_kafka_topic_partition_list_destroy(sub);
	if (e) {
		fprintf(stderr, "chaos_client: subscribe: %s\n", rd_kafka_err2str(e));
		rd_kafka_destroy(rk);
		return 2;
	}
	int64_t *hwm = malloc(sizeof(*hwm) * (size_t)t->total);
	char *eof = calloc((size_t)t->total, 1);
	for (int i = 0; i < t->total; i++)
		hwm[i] = -1;
	long long last_commit = 0, end = mono_s() + drain_s;
	long got = 0;
	int left = t->total, rc = 0;
	while (!stop) {
		if (drain_s && (left == 0 || mono_s() >= end)) {
			rc = left ? 1 : 0;
			break;
		}
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
		if (m) {
			int ti = m->rkt ? topic_index(t, rd_kafka_topic_name(m->rkt)) : -1;
			int k = ti >= 0 && m->partition >= 0 && m->partition < t->npart[ti]
					? slot(t, ti, m->partition)
					: -1;
			if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
				if (k >= 0 && !eof[k]) {
					eof[k] = 1;
					left--;
				}
			} else if (m->err) {
				fprintf(stderr, "chaos_client: %s: %s\n", name, rd_kafka_message_errstr(m));
			} else if (k >= 0) {
				got++;
				fprintf(consumed, "%s %d %lld %.*s\n", t->name[ti], (int)m->partition,
					(long long)m->offset, (int)m->len, (const char *)m->payload);
				fflush(consumed);
			}
			if (k >= 0) {
				int64_t lo, hi;
				if (!rd_kafka_get_watermark_offsets(rk, t->name[ti], m->partition, &lo, &hi) &&
				    hi >= 0 && hi != hwm[k]) {
					hwm[k] = hi;
					fprintf(hwmf, "%s %s %d %lld\n", name, t->name[ti], (int)m->partition,
						(long long)hi);
					fflush(hwmf);
				}
			}
			rd_kafka_message_destroy(m);
		}
		long long now = now_us();
		if (now - last_commit >= 300000) {
			commit_positions(rk, &mb);
			last_commit = now;
		}
	}
	commit_positions(rk, &mb);
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	fprintf(stderr, "chaos_client: %s: consumed %ld commits %ld\n", name, got, mb.ncommits);
	fclose(consumed);
	fclose(hwmf);
	fclose(mb.commits);
	free(hwm);
	free(eof);
	if (rc)
		fprintf(stderr, "chaos_client: %s: %d partition(s) did not reach their end in %d s\n",
			name, left, drain_s);
	return rc;
}

int main(int argc, char **argv)
{
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	struct topics t;
	if (argc >= 5 && !strcmp(argv[1], "create") && atoi(argv[4]) > 0)
		return admin_topic(argv[2], argv[3], atoi(argv[4]), argv + 5, argc - 5);
	if (argc == 4 && !strcmp(argv[1], "delete"))
		return admin_topic(argv[2], argv[3], 0, NULL, 0);
	if ((argc == 8 || argc == 9) && !strcmp(argv[1], "kv") && atoi(argv[4]) > 0 &&
	    atoi(argv[5]) > 0)
		return kv_produce(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), argv[6], argv[7],
				  argc == 9 ? atol(argv[8]) : 20000);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "produce"))
		return parse_topics(argv[3], &t) ? 2
						  : produce(argv[2], &t, argv[4], argv[5],
							    argc == 7 ? atol(argv[6]) : 2000);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "consume"))
		return parse_topics(argv[3], &t)
			       ? 2
			       : consume(argv[2], &t, argv[4], argc == 6 ? atoi(argv[5]) : 120);
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "group"))
		return parse_topics(argv[4], &t) ? 2
						  : run_member(argv[2], argv[3], &t, argv[5], argv[6],
								 argc == 8 ? atoi(argv[7]) : 0);
	fprintf(stderr, "usage: chaos_client create BOOTSTRAP TOPIC NPART [KEY=VALUE...]\n"
			"       chaos_client delete BOOTSTRAP TOPIC\n"
			"       chaos_client produce BOOTSTRAP TOPICS TAG ACKFILE [PAUSE_US]\n"
			"       chaos_client consume BOOTSTRAP TOPICS OUTFILE [TIMEOUT_S]\n"
			"       chaos_client kv BOOTSTRAP TOPIC NPART NKEYS TAG PREFIX [PAUSE_US]\n"
			"       chaos_client group BOOTSTRAP GROUP TOPICS MEMBER PREFIX [DRAIN_S]\n"
			"  TOPICS: NAME:NPART[,NAME:NPART...]\n");
	return 2;
}
