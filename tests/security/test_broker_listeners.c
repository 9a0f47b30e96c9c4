/* Listeners in the configuration and in broker documents (issue 17): the
 * "listeners" field round-trips, documents without it (older brokers) read
 * as one unnamed address, the top-level address stays the first listener's
 * (what an older reader sees), and Kafka's listener keys resolve. */
#include "tests/unit/unit.h"

#include <errno.h>

#include "broker/config.h"
#include "cluster/membership.h"
#include "contract/doc.h"

static void fill(struct kaas_broker_info *b)
{
	memset(b, 0, sizeof(*b));
	b->id = 3;
	snprintf(b->host, sizeof(b->host), "10.0.0.3");
	b->port = 9092;
	b->incarnation = 77;
	b->counter = 5;
}

/* kaas_broker_address(b, name) is host:port. */
static void assert_address(const struct kaas_broker_info *b, const char *name, const char *host,
			   int32_t port)
{
	const char *h;
	int32_t p;
	assert_int_equal(kaas_broker_address(b, name, &h, &p), 0);
	assert_string_equal(h, host);
	assert_int_equal(p, port);
}

static void listeners_round_trip(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_broker_info b, got;
	fill(&b);
	b.nlisteners = 2;
	snprintf(b.listeners[0].name, sizeof(b.listeners[0].name), "INTERNAL");
	snprintf(b.listeners[0].host, sizeof(b.listeners[0].host), "10.0.0.3");
	b.listeners[0].port = 9092;
	snprintf(b.listeners[1].name, sizeof(b.listeners[1].name), "SSL");
	snprintf(b.listeners[1].host, sizeof(b.listeners[1].host), "kafka.example.com");
	b.listeners[1].port = 9093;
	assert_int_equal(kaas_broker_publish(s, &b), 0);
	assert_int_equal(kaas_broker_read(s, 3, &got), 0);
	assert_int_equal(got.nlisteners, 2);
	assert_address(&got, "SSL", "kafka.example.com", 9093);
	assert_address(&got, "INTERNAL", "10.0.0.3", 9092);
	assert_address(&got, NULL, "10.0.0.3", 9092);
	const char *host;
	int32_t port;
	assert_int_equal(kaas_broker_address(&got, "OTHER", &host, &port), -ENOENT);
	/* An older reader: format version 1, top-level host and port. */
	cJSON *o;
	int version = 0;
	assert_int_equal(kaas_doc_read(s, "brokers/3.json", "broker", 1, &o, &version), 0);
	assert_int_equal(version, 1);
	assert_string_equal(cJSON_GetObjectItem(o, "host")->valuestring, "10.0.0.3");
	cJSON_Delete(o);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void old_document_has_one_address(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	assert_int_equal(kaas_sub_mkdirs(s, "brokers", 0755), 0);
	/* What a broker before issue 17 wrote. */
	cJSON *o = cJSON_Parse("{\"id\":4,\"host\":\"h4\",\"port\":9000,\"incarnation\":\"9\","
			       "\"counter\":1,\"controller_epoch\":0}");
	assert_non_null(o);
	assert_int_equal(kaas_doc_write(s, "brokers/4.json", "broker", 1, o), 0);
	cJSON_Delete(o);
	struct kaas_broker_info got;
	assert_int_equal(kaas_broker_read(s, 4, &got), 0);
	assert_int_equal(got.nlisteners, 0);
	assert_address(&got, "SSL", "h4", 9000);
	/* A malformed listeners field is a corrupt document. */
	o = cJSON_Parse("{\"id\":4,\"host\":\"h4\",\"port\":9000,\"incarnation\":\"9\","
			"\"counter\":1,\"listeners\":[{\"name\":\"SSL\",\"port\":1}]}");
	assert_int_equal(kaas_doc_write(s, "brokers/4.json", "broker", 1, o), 0);
	cJSON_Delete(o);
	assert_int_equal(kaas_broker_read(s, 4, &got), -EBADMSG);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void config_resolves_listeners(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	unit_put(s, "k.conf",
		 "listeners = internal://0.0.0.0:9092, SSL://[::1]:9093\n"
		 "advertised.listeners = SSL://kafka.example.com:19093\n"
		 "listener.security.protocol.map = INTERNAL:PLAINTEXT,SSL:SSL\n"
		 "ssl.keystore.location = /k.pem\n");
	char path[4200];
	snprintf(path, sizeof(path), "%s/k.conf", dir);
	char *argv[] = { "kaasd", "--config", path, NULL };
	struct kaas_config c;
	assert_int_equal(kaas_config_load(&c, 3, argv), 0);
	assert_int_equal(c.sec.n, 2);
	assert_string_equal(c.sec.l[0].name, "INTERNAL");
	assert_int_equal(c.sec.l[0].protocol, KAAS_SEC_PLAINTEXT);
	assert_string_equal(c.sec.l[0].adv_host, "127.0.0.1");
	assert_string_equal(c.sec.l[1].host, "::1");
	assert_int_equal(c.sec.l[1].protocol, KAAS_SEC_SSL);
	assert_string_equal(c.sec.l[1].adv_host, "kafka.example.com");
	assert_int_equal(c.sec.l[1].adv_port, 19093);
	assert_int_equal(c.listen_port, 9092);
	struct kaas_broker_info me;
	memset(&me, 0, sizeof(me));
	kaas_config_advertised(&c, &me);
	assert_int_equal(me.nlisteners, 2);
	assert_int_equal(me.port, 9092);
	kaas_config_free(&c);
	/* --listen alone: one PLAINTEXT listener, no listeners field. */
	char *argv2[] = { "kaasd", "--listen", "127.0.0.1:7000", NULL };
	assert_int_equal(kaas_config_load(&c, 3, argv2), 0);
	assert_int_equal(c.sec.n, 1);
	assert_string_equal(c.sec.l[0].name, "PLAINTEXT");
	assert_int_equal(c.sec.l[0].port, 7000);
	kaas_config_advertised(&c, &me);
	assert_int_equal(me.nlisteners, 0);
	kaas_config_free(&c);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listeners_round_trip),
		cmocka_unit_test(old_document_has_one_address),
		cmocka_unit_test(config_resolves_listeners),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
