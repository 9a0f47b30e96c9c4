/*
 * rebalance_bench.c — consumer-group rebalance latency through librdkafka,
 * behind scripts/bench.  Prints one JSON object on stdout (progress on
 * stderr).
 *
 *   kaas-rebalance-bench BROKER TOPIC PARTITIONS ROUNDS HEARTBEAT_MS
 *       Member A (eager range assignor, heartbeat.interval.ms HEARTBEAT_MS,
 *       each member polled by its own thread) holds all PARTITIONS of TOPIC
 *       (created here).  Each round a member B is started and, once settled,
 *       closed (a dynamic member: LeaveGroup):
 *         join_ms   from B's creation to both members holding their new
 *                   assignment (the later of the two assign callbacks);
 *         leave_ms  from B's close to A holding every partition again (A's
 *                   assign callback).
 *       A learns of each rebalance by its next heartbeat, so both are
 *       bounded below by the time to A's next heartbeat: up to one
 *       interval.  Each join and leave starts after a pseudo-random pause
 *       of 200 ms plus up to one heartbeat interval, so the samples meet
 *       A's heartbeat at every phase (else the rounds lock to it).
 *       Reports the medians and every sample.
 *
 * Exit status 0; 1 when a round did not settle within 60 s; 2 for bad
 * arguments.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

static const char *broker, *topic;
static int heartbeat_ms;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct member {
	rd_kafka_t *rk;
	pthread_t thread;
	atomic_int held;          /* partitions held now */
	_Atomic double assigned_at; /* time of the last assign callback */
	atomic_int stop;
};

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	struct member *m = opaque;
	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		rd_kafka_assign(rk, parts);
		atomic_store(&m->held, parts->cnt);
		atomic_store(&m->assigned_at, now_ms());
	} else {
		rd_kafka_assign(rk, NULL);
		atomic_store(&m->held, 0);
	}
}

static void *member_loop(void *arg)
{
	struct member *m = arg;
	while (!atomic_load(&m->stop)) {
		rd_kafka_message_t *msg = rd_kafka_consumer_poll(m->rk, 5);
		if (msg)
			rd_kafka_message_destroy(msg);
	}
	rd_kafka_consumer_close(m->rk); /* LeaveGroup */
	rd_kafka_destroy(m->rk);
	return NULL;
}

static void member_start(struct member *m, const char *name)
{
	char err[512], hb[32];
	memset(m, 0, sizeof(*m));
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	snprintf(hb, sizeof(hb), "%d", heartbeat_ms);
	rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof(err));
	rd_kafka_conf_set(c, "group.id", "rebalance-bench", err, sizeof(err));
	rd_kafka_conf_set(c, "client.id", name, err, sizeof(err));
	rd_kafka_conf_set(c, "partition.assignment.strategy", "range", err, sizeof(err));
	rd_kafka_conf_set(c, "session.timeout.ms", "30000", err, sizeof(err));
	if (rd_kafka_conf_set(c, "heartbeat.interval.ms", hb, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "%s\n", err);
		exit(2);
	}
	rd_kafka_conf_set_opaque(c, m);
	rd_kafka_conf_set_rebalance_cb(c, on_rebalance);
	m->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!m->rk) {
		fprintf(stderr, "rd_kafka_new: %s\n", err);
		exit(2);
	}
	rd_kafka_poll_set_consumer(m->rk);
	rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
	rd_kafka_subscribe(m->rk, sub);
	rd_kafka_topic_partition_list_destroy(sub);
	pthread_create(&m->thread, NULL, member_loop, m);
}

static void member_stop(struct member *m)
{
	atomic_store(&m->stop, 1);
	pthread_join(m->thread, NULL);
}

static int create_topic(int partitions)
{
	char err[256];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk)
		return -1;
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, sizeof(err));
	rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
	int rc = -1;
	if (ev && !rd_kafka_event_error(ev)) {
		size_t n = 0;
		const rd_kafka_topic_result_t **r =
			rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
		rc = n == 1 && (!rd_kafka_topic_result_error(r[0]) ||
				rd_kafka_topic_result_error(r[0]) == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
			     ? 0
			     : -1;
	}
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_NewTopic_destroy(nt);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

/* Wait until cond holds (60 s at most): 0, or -1. */
static int wait_for(struct member *a, int a_held, struct member *b, int b_held)
{
	double end = now_ms() + 60000;
	while (now_ms() < end) {
		if (atomic_load(&a->held) == a_held && (!b || atomic_load(&b->held) == b_held))
			return 0;
		usleep(1000);
	}
	return -1;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
	double *s = malloc((size_t)n * sizeof(*s));
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_d);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static void print_list(const char *key, const double *v, int n)
{
	printf("\"%s\":[", key);
	for (int i = 0; i < n; i++)
		printf("%s%.1f", i ? "," : "", v[i]);
	printf("]");
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: kaas-rebalance-bench BROKER TOPIC PARTITIONS ROUNDS HEARTBEAT_MS\n");
		return 2;
	}
	broker = argv[1];
	topic = argv[2];
	int parts = atoi(argv[3]), rounds = atoi(argv[4]);
	heartbeat_ms = atoi(argv[5]);
	if (parts < 2 || rounds < 1 || rounds > 1000 || heartbeat_ms < 1) {
		fprintf(stderr, "kaas-rebalance-bench: bad arguments\n");
		return 2;
	}
	if (create_topic(parts) < 0) {
		fprintf(stderr, "kaas-rebalance-bench: cannot create %s\n", topic);
		return 1;
	}
	double *join = calloc((size_t)rounds, sizeof(double));
	double *leave = calloc((size_t)rounds, sizeof(double));
	struct member a, b;
	member_start(&a, "bench-a");
	if (wait_for(&a, parts, NULL, 0) < 0) {
		fprintf(stderr, "kaas-rebalance-bench: the first member got no assignment\n");
		return 1;
	}
	int half = parts / 2, rc = 0, done = 0;
	unsigned seed = 22;
	for (int r = 0; r < rounds; r++) {
		usleep(200000 + (useconds_t)(rand_r(&seed) % (unsigned)heartbeat_ms) * 1000);
		double t0 = now_ms();
		member_start(&b, "bench-b");
		if (wait_for(&a, parts - half, &b, half) < 0) {
			fprintf(stderr, "round %d: the join did not settle\n", r);
			rc = 1;
			member_stop(&b);
			break;
		}
		double ta = atomic_load(&a.assigned_at), tb = atomic_load(&b.assigned_at);
		join[r] = (ta > tb ? ta : tb) - t0;
		usleep(200000 + (useconds_t)(rand_r(&seed) % (unsigned)heartbeat_ms) * 1000);
		t0 = now_ms();
		atomic_store(&b.stop, 1);
		if (wait_for(&a, parts, NULL, 0) < 0) {
			fprintf(stderr, "round %d: the leave did not settle\n", r);
			rc = 1;
			member_stop(&b);
			break;
		}
		leave[r] = atomic_load(&a.assigned_at) - t0;
		member_stop(&b);
		done++;
		fprintf(stderr, "round %d: join %.1f ms, leave %.1f ms\n", r, join[r], leave[r]);
	}
	member_stop(&a);
	printf("{\"heartbeat_interval_ms\":%d,\"partitions\":%d,\"rounds\":%d,", heartbeat_ms, parts, done);
	printf("\"join_ms_median\":%.1f,\"leave_ms_median\":%.1f,", done ? median(join, done) : -1.0,
	       done ? median(leave, done) : -1.0);
	print_list("join_ms", join, done);
	printf(",");
	print_list("leave_ms", leave, done);
	printf("}\n");
	free(join);
	free(leave);
	return rc;
}
