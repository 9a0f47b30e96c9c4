/*
 * txn_bench.c — what a transaction costs a producer (issue 16), behind
 * bench/txn.sh (scripts/bench --txn).  One librdkafka producer writes
 * RECORDS messages of SIZE bytes, message i to partition i % PARTITIONS of
 * TOPIC, acks=all, and prints one JSON object on stdout (errors on stderr):
 *
 *   kaas-txn-bench txn BROKER TOPIC SIZE RECORDS PARTITIONS PER_TXN
 *       a transactional producer (transactional.id "kaas-bench-TOPIC"):
 *       transactions of PER_TXN records (the last may be shorter), each
 *       begin, produce, flush, commit.  Reports msgs/s, MB/s and the
 *       commit latency (commit_transaction after the flush: EndTxn and the
 *       markers) p50/p99 in milliseconds.
 *   kaas-txn-bench idem BROKER TOPIC SIZE RECORDS PARTITIONS PER_TXN
 *       an idempotent producer (enable.idempotence) sending the same
 *       records as a stream, then one flush; PER_TXN is only echoed.
 *       Reports msgs/s, MB/s and the per-message delivery latency p50/p99.
 *
 * Both modes first send PARTITIONS untimed records (one transaction in txn
 * mode): the connection, metadata, the topic (auto-created by the broker)
 * and the producer id exist before the clock starts.  The clock runs from
 * the first timed send to the last delivery (idem) or commit (txn).
 * KAAS_BENCH_CPU_PID=PID adds the CPU (user + system) that process spent
 * over the timed part, per message ("cpu_us_per_msg"; -1 without it).
 *
 * Exit status 0; 1 when a record or a transaction failed (the JSON is
 * still printed, with the counts); 2 for bad arguments.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "bench/latency.h"

/* CPU ticks (user + system) of process pid so far; -1 when unreadable. */
static long long cpu_ticks(long pid)
{
	if (pid <= 0)
		return -1;
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields 14 and 15 (utime, stime), counted after the ")" that ends
	 * the command name (field 2), which may itself hold spaces. */
	char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

/* ------------------------------------------------------------- client */

struct run {
	const char *topic;
	int size, partitions, per_txn, txn;
	uint64_t records;
	char *payload;
	uint64_t delivered, failed, last_dr_ns;
	rd_kafka_resp_err_t last_err;
	struct bench_lat lat; /* idem: per message; txn: per commit */
};

static void set(rd_kafka_conf_t *c, const char *k, const char *v)
{
	char err[512];
	if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "kaas-txn-bench: %s=%s: %s\n", k, v, err);
		exit(2);
	}
}

/* The send time travels in the message's opaque (0: untimed). */
static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)opaque;
	struct run *r = rd_kafka_opaque(rk);
	uint64_t t = bench_now_ns();
	if (m->err) {
		r->failed++;
		r->last_err = m->err;
		return;
	}
	r->delivered++;
	r->last_dr_ns = t;
	uint64_t t0 = (uint64_t)(uintptr_t)m->_private;
	if (t0 && !r->txn)
		bench_lat_add(&r->lat, (double)(t - t0) / 1e3);
}

/* The same settings both ways but the transactional id. */
static rd_kafka_t *make_producer(const char *broker, struct run *r)
{
	char err[512], id[300];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	set(c, "bootstrap.servers", broker);
	set(c, "acks", "all");
	set(c, "enable.idempotence", "true");
	set(c, "linger.ms", "5");
	set(c, "batch.num.messages", "10000");
	set(c, "batch.size", "1000000");
	set(c, "queue.buffering.max.messages", "100000");
	set(c, "queue.buffering.max.kbytes", "32768");
	set(c, "message.timeout.ms", "60000");
	set(c, "compression.type", "none");
	if (r->txn) {
		snprintf(id, sizeof id, "kaas-bench-%s", r->topic);
		set(c, "transactional.id", id);
		set(c, "transaction.timeout.ms", "60000");
	}
	rd_kafka_conf_set_dr_msg_cb(c, on_dr);
	rd_kafka_conf_set_opaque(c, r);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
	if (!rk) {
		fprintf(stderr, "kaas-txn-bench: rd_kafka_new: %s\n", err);
		exit(1);
	}
	return rk;
}

/* Queue record i (stamped with its send time when timed): 0 or the error. */
static rd_kafka_resp_err_t send_one(rd_kafka_t *rk, struct run *r, uint64_t i, int timed)
{
	rd_kafka_resp_err_t e;
	while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(r->topic),
				      RD_KAFKA_V_PARTITION((int32_t)(i % (uint64_t)r->partitions)),
				      RD_KAFKA_V_VALUE(r->payload, (size_t)r->size),
				      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				      RD_KAFKA_V_OPAQUE((void *)(uintptr_t)(timed ? bench_now_ns() : 0)),
				      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		rd_kafka_poll(rk, 1);
	if (e) {
		r->failed++;
		r->last_err = e;
	}
	return e;
}

/* A transactional call's error reported (and freed): 1, else 0. */
static int txn_failed(const char *what, rd_kafka_error_t *e)
{
	if (!e)
		return 0;
	fprintf(stderr, "kaas-txn-bench: %s: %s\n", what, rd_kafka_error_string(e));
	rd_kafka_error_destroy(e);
	return 1;
}

/* One transaction of records [from, to): 0 committed, 1 failed (aborted
 * when the producer still can).  commit_us: the commit call's time. */
static int one_txn(rd_kafka_t *rk, struct run *r, uint64_t from, uint64_t to, int timed,
		   double *commit_us)
{
	if (txn_failed("begin_transaction", rd_kafka_begin_transaction(rk)))
		return 1;
	for (uint64_t i = from; i < to; i++) {
		if (send_one(rk, r, i, timed)) {
			txn_failed("abort_transaction", rd_kafka_abort_transaction(rk, 60000));
			return 1;
		}
		rd_kafka_poll(rk, 0);
	}
	rd_kafka_flush(rk, 60000);
	uint64_t t0 = bench_now_ns();
	rd_kafka_error_t *e = rd_kafka_commit_transaction(rk, 60000);
	*commit_us = (double)(bench_now_ns() - t0) / 1e3;
	if (!e)
		return 0;
	int must_abort = rd_kafka_error_txn_requires_abort(e);
	txn_failed("commit_transaction", e);
	if (must_abort)
		txn_failed("abort_transaction", rd_kafka_abort_transaction(rk, 60000));
	return 1;
}

/* The untimed warm-up: 0, or 1 when it failed. */
static int warm_up(rd_kafka_t *rk, struct run *r)
{
	if (r->txn) {
		double us;
		if (txn_failed("init_transactions", rd_kafka_init_transactions(rk, 60000)))
			return 1;
		if (one_txn(rk, r, 0, (uint64_t)r->partitions, 0, &us))
			return 1;
	} else {
		for (int i = 0; i < r->partitions; i++)
			send_one(rk, r, (uint64_t)i, 0);
		rd_kafka_flush(rk, 60000);
	}
	int bad = r->failed != 0 || r->delivered != (uint64_t)r->partitions;
	if (bad)
		fprintf(stderr, "kaas-txn-bench: warm-up: %" PRIu64 " of %d delivered (%s)\n",
			r->delivered, r->partitions, rd_kafka_err2str(r->last_err));
	r->delivered = 0;
	return bad;
}

static int run(const char *broker, struct run *r, long cpu_pid)
{
	r->payload = malloc((size_t)r->size);
	if (!r->payload)
		return 1;
	for (int i = 0; i < r->size; i++)
		r->payload[i] = (char)('a' + (i * 31 + i / 7) % 26);
	rd_kafka_t *rk = make_producer(broker, r);
	if (warm_up(rk, r)) {
		rd_kafka_destroy(rk);
		free(r->payload);
		return 1;
	}
	uint64_t txns = 0, txn_failures = 0;
	long long c0 = cpu_ticks(cpu_pid);
	uint64_t start = bench_now_ns(), end;
	if (r->txn) {
		for (uint64_t from = 0; from < r->records; from += (uint64_t)r->per_txn) {
			uint64_t to = from + (uint64_t)r->per_txn;
			double us;
			if (one_txn(rk, r, from, to < r->records ? to : r->records, 1, &us))
				txn_failures++;
			else
				bench_lat_add(&r->lat, us);
			txns++;
		}
		end = bench_now_ns();
	} else {
		for (uint64_t i = 0; i < r->records; i++) {
			send_one(rk, r, i, 1);
			rd_kafka_poll(rk, 0);
		}
		rd_kafka_flush(rk, 120000);
		end = r->last_dr_ns > start ? r->last_dr_ns : bench_now_ns();
	}
	long long c1 = cpu_ticks(cpu_pid);
	double dt = (double)(end - start) / 1e9;
	double cpu_us = -1;
	if (c0 >= 0 && c1 >= c0 && r->delivered > 0)
		cpu_us = (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK) * 1e6 / (double)r->delivered;
	bench_lat_sort(&r->lat);
	printf("{\"mode\":\"%s\",\"size\":%d,\"records\":%" PRIu64 ",\"partitions\":%d,\"per_txn\":%d,"
	       "\"msgs\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"transactions\":%" PRIu64
	       ",\"txn_failed\":%" PRIu64 ",\"seconds\":%.3f,\"msgs_per_s\":%.0f,\"MBps\":%.2f,"
	       "\"%s_p50_ms\":%.3f,\"%s_p99_ms\":%.3f,\"cpu_us_per_msg\":%.3f}\n",
	       r->txn ? "txn" : "idem", r->size, r->records, r->partitions, r->per_txn,
	       r->delivered, r->failed, txns, txn_failures, dt,
	       dt > 0 ? (double)r->delivered / dt : 0.0,
	       dt > 0 ? (double)r->delivered * r->size / dt / 1e6 : 0.0,
	       r->txn ? "commit" : "delivery", bench_lat_ms(&r->lat, 0.5), r->txn ? "commit" : "delivery",
	       bench_lat_ms(&r->lat, 0.99), cpu_us);
	int bad = r->failed || txn_failures || r->delivered != r->records;
	if (bad)
		fprintf(stderr, "kaas-txn-bench: %" PRIu64 " of %" PRIu64 " records delivered, %" PRIu64
			" failed (last: %s), %" PRIu64 " transactions failed\n",
			r->delivered, r->records, r->failed, rd_kafka_err2str(r->last_err), txn_failures);
	rd_kafka_destroy(rk);
	free(r->lat.v);
	free(r->payload);
	return bad;
}

/* ---------------------------------------------------------------- main */

static long arg_pos(const char *name, const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v <= 0) {
		fprintf(stderr, "kaas-txn-bench: %s must be a positive integer, not '%s'\n", name, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 8 || (strcmp(argv[1], "txn") != 0 && strcmp(argv[1], "idem") != 0)) {
		fprintf(stderr, "usage: kaas-txn-bench txn|idem BROKER TOPIC SIZE RECORDS PARTITIONS PER_TXN\n");
		return 2;
	}
	struct run r = {
		.topic = argv[3],
		.size = (int)arg_pos("SIZE", argv[4]),
		.records = (uint64_t)arg_pos("RECORDS", argv[5]),
		.partitions = (int)arg_pos("PARTITIONS", argv[6]),
		.per_txn = (int)arg_pos("PER_TXN", argv[7]),
		.txn = strcmp(argv[1], "txn") == 0,
	};
	const char *pid = getenv("KAAS_BENCH_CPU_PID");
	return run(argv[2], &r, pid && *pid ? atol(pid) : 0);
}
