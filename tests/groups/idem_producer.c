/*
 * idem_producer.c — a librdkafka producer with enable.idempotence=true:
 * sends "0".."N-1" to TOPIC partition 0 in small batches (many requests in
 * flight), and exits 0 only if every message was reported delivered.
 *
 *   idem_producer BROKER TOPIC N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

static int delivered, failed;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	(void)opaque;
	if (m->err) {
		if (failed++ < 5)
			fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
	} else {
		delivered++;
	}
}

static int set(rd_kafka_conf_t *c, const char *k, const char *v)
{
	char err[256];
	if (rd_kafka_conf_set(c, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "%s: %s\n", k, err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: idem_producer BROKER TOPIC N\n");
		return 2;
	}
	int n = atoi(argv[3]);
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	if (set(c, "bootstrap.servers", argv[1]) || set(c, "enable.idempotence", "true") ||
	    set(c, "linger.ms", "2") || set(c, "batch.num.messages", "20") ||
	    set(c, "max.in.flight.requests.per.connection", "5") ||
	    set(c, "message.timeout.ms", "90000") || set(c, "request.timeout.ms", "10000") ||
	    set(c, "retry.backoff.ms", "50") || set(c, "reconnect.backoff.ms", "10") ||
	    set(c, "reconnect.backoff.max.ms", "200"))
		return 2;
	rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
	char err[256];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "rd_kafka_new: %s\n", err);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		char v[32];
		int len = snprintf(v, sizeof(v), "%d", i);
		for (;;) {
			rd_kafka_resp_err_t e = rd_kafka_producev(
				rk, RD_KAFKA_V_TOPIC(argv[2]), RD_KAFKA_V_PARTITION(0),
				RD_KAFKA_V_VALUE(v, (size_t)len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				RD_KAFKA_V_END);
			if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
				rd_kafka_poll(rk, 10);
				continue;
			}
			if (e) {
				fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
				return 1;
			}
			break;
		}
		if (i % 50 == 0)
			rd_kafka_poll(rk, 1);
	}
	rd_kafka_flush(rk, 100000);
	int left = rd_kafka_outq_len(rk);
	rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(rk, err, sizeof(err));
	if (fatal)
		fprintf(stderr, "fatal error: %s\n", err);
	rd_kafka_destroy(rk);
	printf("delivered %d of %d, failed %d, left %d\n", delivered, n, failed, left);
	return delivered == n && !failed && !left && !fatal ? 0 : 1;
}
