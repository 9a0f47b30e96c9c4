/*
 * txn_client.c — librdkafka's transactional producer against kaasd.
 *
 *   txn_client BOOTSTRAP TXNID MODE TOPIC_A TOPIC_B TAG [GROUP]
 *
 * Every mode: init_transactions, begin, one record "<TAG>-<i>" to each of
 * TOPIC_A/0, TOPIC_A/1 and TOPIC_B/0 (i = 0..2, in that order), then:
 *   commit  send_offsets_to_transaction (GROUP: TOPIC_A/0 at offset 42) and
 *           commit_transaction
 *   abort   the same offsets, abort_transaction
 *   fence   a second producer with the same transactional id initialises
 *           (fencing this one), commits its own "<TAG>-fencer" to
 *           TOPIC_B/0; this one's commit must then fail fatally (fenced)
 *   hang    flush, print "open", and wait to be killed (never ends it)
 * With KAAS_TXN_KEYS=N the records are instead N keyed ones to TOPIC_A/0:
 * key "k<i>", value "<TAG>-<i>" (i = 0..N-1; a compacted topic).
 * Prints "ok" on success; exits 1 with the error otherwise.  Short
 * transaction timeout (KAAS_TXN_TIMEOUT_MS, default 60000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#define T_MS 30000

static void die(const char *what, rd_kafka_error_t *e)
{
	fprintf(stderr, "txn_client: %s: %s%s\n", what, rd_kafka_error_string(e),
		rd_kafka_error_is_fatal(e) ? " (fatal)" : "");
	exit(1);
}

static rd_kafka_t *producer(const char *bootstrap, const char *txnid)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	const char *to = getenv("KAAS_TXN_TIMEOUT_MS");
	if (rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof err) ||
	    rd_kafka_conf_set(c, "transactional.id", txnid, err, sizeof err) ||
	    rd_kafka_conf_set(c, "transaction.timeout.ms", to ? to : "60000", err, sizeof err) ||
	    rd_kafka_conf_set(c, "linger.ms", "0", err, sizeof err)) {
		fprintf(stderr, "txn_client: conf: %s\n", err);
		exit(2);
	}
	rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
	if (!p) {
		fprintf(stderr, "txn_client: new: %s\n", err);
		exit(2);
	}
	rd_kafka_error_t *e = rd_kafka_init_transactions(p, T_MS);
	if (e)
		die("init_transactions", e);
	return p;
}

static void produce_keyed(rd_kafka_t *p, const char *topic, int32_t part, const char *key,
			  const char *value)
{
	rd_kafka_resp_err_t err = rd_kafka_producev(
		p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
		RD_KAFKA_V_KEY((void *)key, key ? strlen(key) : 0),
		RD_KAFKA_V_VALUE((void *)value, strlen(value)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
		RD_KAFKA_V_END);
	if (err) {
		fprintf(stderr, "txn_client: produce %s/%d: %s\n", topic, part, rd_kafka_err2str(err));
		exit(1);
	}
}

static void produce(rd_kafka_t *p, const char *topic, int32_t part, const char *value)
{
	produce_keyed(p, topic, part, NULL, value);
}

static void send_offsets(rd_kafka_t *p, const char *topic, const char *group)
{
	rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(offs, topic, 0)->offset = 42;
	rd_kafka_consumer_group_metadata_t *md = rd_kafka_consumer_group_metadata_new(group);
	rd_kafka_error_t *e = rd_kafka_send_offsets_to_transaction(p, offs, md, T_MS);
	rd_kafka_consumer_group_metadata_destroy(md);
	rd_kafka_topic_partition_list_destroy(offs);
	if (e)
		die("send_offsets_to_transaction", e);
}

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: txn_client BOOTSTRAP TXNID commit|abort|fence|hang TOPIC_A "
				"TOPIC_B TAG [GROUP]\n");
		return 2;
	}
	const char *bs = argv[1], *txnid = argv[2], *mode = argv[3], *ta = argv[4], *tb = argv[5],
		   *tag = argv[6], *group = argc > 7 ? argv[7] : NULL;
	rd_kafka_t *p = producer(bs, txnid);
	rd_kafka_error_t *e = rd_kafka_begin_transaction(p);
	if (e)
		die("begin_transaction", e);
	char v[128];
	const struct { const char *t; int32_t p; } to[3] = { { ta, 0 }, { ta, 1 }, { tb, 0 } };
	const char *keys = getenv("KAAS_TXN_KEYS");
	for (int i = 0; !keys && i < 3; i++) {
		snprintf(v, sizeof v, "%s-%d", tag, i);
		produce(p, to[i].t, to[i].p, v);
	}
	for (int i = 0; keys && i < atoi(keys); i++) {
		char k[16];
		snprintf(k, sizeof k, "k%d", i);
		snprintf(v, sizeof v, "%s-%d", tag, i);
		produce_keyed(p, ta, 0, k, v);
	}
	if (!strcmp(mode, "hang")) {
		rd_kafka_flush(p, T_MS);
		printf("open\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (group && strcmp(mode, "fence"))
		send_offsets(p, ta, group);
	if (!strcmp(mode, "commit")) {
		if ((e = rd_kafka_commit_transaction(p, T_MS)))
			die("commit_transaction", e);
	} else if (!strcmp(mode, "abort")) {
		rd_kafka_flush(p, T_MS); /* on the partitions first: abort purges what is queued */
		if ((e = rd_kafka_abort_transaction(p, T_MS)))
			die("abort_transaction", e);
	} else if (!strcmp(mode, "fence")) {
		rd_kafka_flush(p, T_MS);
		rd_kafka_t *q = producer(bs, txnid);
		if ((e = rd_kafka_begin_transaction(q)))
			die("fencer begin_transaction", e);
		snprintf(v, sizeof v, "%s-fencer", tag);
		produce(q, tb, 0, v);
		if ((e = rd_kafka_commit_transaction(q, T_MS)))
			die("fencer commit_transaction", e);
		e = rd_kafka_commit_transaction(p, T_MS);
		if (!e) {
			fprintf(stderr, "txn_client: the fenced producer's commit succeeded\n");
			return 1;
		}
		printf("fenced: %s%s\n", rd_kafka_error_string(e),
		       rd_kafka_error_is_fatal(e) ? " (fatal)" : "");
		rd_kafka_error_destroy(e);
		rd_kafka_destroy(q);
	} else {
		fprintf(stderr, "txn_client: unknown mode %s\n", mode);
		return 2;
	}
	rd_kafka_destroy(p);
	printf("ok\n");
	return 0;
}
