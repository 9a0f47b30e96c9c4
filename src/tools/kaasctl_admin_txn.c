/* kaasctl_admin_txn.c — `kaasctl txn list [--state S]...` (ListTransactions
 * v0 asked of every broker, as each coordinates its own transactional ids)
 * and `kaasctl txn describe ID` (FindCoordinator for the id, then
 * DescribeTransactions v0): what kafka-transactions list|describe show. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"

static int usage(void)
{
	fputs("usage: kaasctl [--bootstrap HOST:PORT] txn list [--state STATE]...\n"
	      "       kaasctl txn describe TRANSACTIONAL-ID\n", stderr);
	return KCTL_EXIT_ERROR;
}

static void add_slice(cJSON *o, const char *key, struct kaas_kslice s)
{
	char *e = kaas_kslice_dup(s);
	kctl_add_text(o, key, e ? e : "");
	free(e);
}

/* ListTransactions v0 of one broker, its entries added to arr (an id
 * already there is not added again). */
static int list_one(struct kctl_conn *c, int32_t node, char **states, int nstates, cJSON *arr)
{
	if (kctl_conn_pick(c, KAAS_API_LIST_TRANSACTIONS, 0, 0) < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_LIST_TRANSACTIONS, 0, 1);
	kaas_kw_array(&w, 1, nstates);
	for (int i = 0; i < nstates; i++)
		kaas_kw_str(&w, 1, states[i]);
	kaas_kw_array(&w, 1, 0); /* every producer id */
	kaas_kw_tags(&w, 1);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 1, &buf, &r) < 0)
		return kctl_error("ListTransactions: %s", c->why);
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	int32_t nu = kaas_kr_array(&r, 1, 1);
	for (int32_t i = 0; i < nu && kaas_kr_ok(&r); i++) {
		struct kaas_kslice s = kaas_kr_str(&r, 1);
		fprintf(stderr, "kaasctl: %s: unknown transaction state '%.*s'\n", c->addr,
			(int)s.len, (const char *)s.p);
	}
	int32_t n = kaas_kr_array(&r, 1, 11);
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		char *id = kaas_kslice_dup(kaas_kr_str(&r, 1));
		int64_t pid = kaas_kr_i64(&r);
		struct kaas_kslice st = kaas_kr_str(&r, 1);
		kaas_kr_tags(&r, 1);
		int dup = 0;
		const cJSON *x;
		cJSON_ArrayForEach(x, arr) {
			const cJSON *xi = cJSON_GetObjectItemCaseSensitive(x, "transactional_id");
			dup |= id && cJSON_IsString(xi) && !strcmp(xi->valuestring, id);
		}
		if (id && !dup) {
			cJSON *o = cJSON_CreateObject();
			kctl_add_text(o, "transactional_id", id);
			cJSON_AddNumberToObject(o, "producer_id", (double)pid);
			add_slice(o, "state", st);
			cJSON_AddNumberToObject(o, "coordinator", node);
			cJSON_AddItemToArray(arr, o);
		}
		free(id);
	}
	int rc = 0;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed ListTransactions answer", c->addr);
	else if (err)
		rc = kctl_admin_kerr("ListTransactions", err, NULL);
	free(buf);
	return rc;
}

static const char *text(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(s) ? s->valuestring : "-";
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(s) ? s->valuedouble : -1;
}

static int txn_list(struct kctl_admin *a, int argc, char **argv)
{
	char **states = calloc((size_t)argc, sizeof *states);
	int nstates = 0;
	if (!states)
		return kctl_error("out of memory");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			states[nstates++] = argv[++i];
		} else {
			free(states);
			return usage();
		}
	}
	struct kctl_md md;
	int rc = kctl_metadata(&a->boot, NULL, 0, &md);
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "transactions");
	for (int32_t i = 0; rc == 0 && i < md.nbrokers; i++) {
		struct kctl_conn c;
		rc = kctl_admin_dial(a, md.brokers[i].host, md.brokers[i].port, &c);
		if (rc == 0)
			rc = list_one(&c, md.brokers[i].id, states, nstates, arr);
		kctl_conn_close(&c);
	}
	kctl_md_free(&md);
	free(states);
	if (rc || a->json) {
		if (rc) {
			cJSON_Delete(root);
			return rc;
		}
		return kctl_json_emit(root);
	}
	printf("%-40s %-12s %-20s %s\n", "TRANSACTIONAL-ID", "COORDINATOR", "PRODUCER-ID", "STATE");
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
		printf("%-40s %-12.0f %-20.0f %s\n", text(x, "transactional_id"), num(x, "coordinator"),
		       num(x, "producer_id"), text(x, "state"));
	if (cJSON_GetArraySize(arr) == 0)
		printf("(no transactions)\n");
	cJSON_Delete(root);
	return 0;
}

static int describe_parse(struct kctl_conn *c, struct kaas_kr *r, const char *id, cJSON *o)
{
	(void)kaas_kr_i32(r);
	int32_t n = kaas_kr_array(r, 1, 20);
	int16_t err = n == 1 ? 0 : -1;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		err = kaas_kr_i16(r);
		add_slice(o, "transactional_id", kaas_kr_str(r, 1));
		add_slice(o, "state", kaas_kr_str(r, 1));
		cJSON_AddNumberToObject(o, "timeout_ms", kaas_kr_i32(r));
		int64_t start = kaas_kr_i64(r);
		if (start >= 0)
			cJSON_AddNumberToObject(o, "start_time_ms", (double)start);
		else
			cJSON_AddNullToObject(o, "start_time_ms");
		cJSON_AddNumberToObject(o, "producer_id", (double)kaas_kr_i64(r));
		cJSON_AddNumberToObject(o, "producer_epoch", kaas_kr_i16(r));
		cJSON *ts = cJSON_AddArrayToObject(o, "partitions");
		int32_t nt = kaas_kr_array(r, 1, 3);
		for (int32_t t = 0; t < nt && kaas_kr_ok(r); t++) {
			char *topic = kaas_kslice_dup(kaas_kr_str(r, 1));
			int32_t np = kaas_kr_array(r, 1, 4);
			for (int32_t p = 0; p < np && kaas_kr_ok(r); p++) {
				cJSON *x = cJSON_CreateObject();
				kctl_add_text(x, "topic", topic ? topic : "");
				cJSON_AddNumberToObject(x, "partition", kaas_kr_i32(r));
				cJSON_AddItemToArray(ts, x);
			}
			kaas_kr_tags(r, 1);
			free(topic);
		}
		kaas_kr_tags(r, 1);
	}
	char what[400];
	snprintf(what, sizeof what, "transaction %s", id);
	if (!kaas_kr_ok(r))
		return kctl_error("%s: a malformed DescribeTransactions answer", c->addr);
	return err ? kctl_admin_kerr(what, err, NULL) : 0;
}

static int txn_describe(struct kctl_admin *a, int argc, char **argv)
{
	if (argc != 3 || argv[2][0] == '-')
		return usage();
	const char *id = argv[2];
	struct kctl_conn c;
	int32_t node;
	int rc = kctl_admin_coordinator(a, id, 1, &c, &node);
	if (rc == 0 && kctl_conn_pick(&c, KAAS_API_DESCRIBE_TRANSACTIONS, 0, 0) < 0)
		rc = kctl_error("%s", c.why);
	uint8_t *buf = NULL;
	struct kaas_kr r;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "coordinator", node);
	if (rc == 0) {
		struct kaas_kw w;
		kctl_req_begin(&c, &w, KAAS_API_DESCRIBE_TRANSACTIONS, 0, 1);
		kaas_kw_array(&w, 1, 1);
		kaas_kw_str(&w, 1, id);
		kaas_kw_tags(&w, 1);
		if (kctl_conn_call(&c, &w, 1, &buf, &r) < 0)
			rc = kctl_error("DescribeTransactions: %s", c.why);
		else
			rc = describe_parse(&c, &r, id, o);
	}
	free(buf);
	kctl_conn_close(&c);
	if (rc) {
		cJSON_Delete(o);
		return rc;
	}
	if (a->json)
		return kctl_json_emit(o);
	printf("transactional id %s: state %s, coordinator %d, producer id %.0f epoch %.0f, "
	       "timeout %.0f ms", text(o, "transactional_id"), text(o, "state"), (int)node,
	       num(o, "producer_id"), num(o, "producer_epoch"), num(o, "timeout_ms"));
	if (num(o, "start_time_ms") >= 0)
		printf(", started at %.0f ms", num(o, "start_time_ms"));
	printf("\n");
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(o, "partitions"))
		printf("  %s/%.0f\n", text(x, "topic"), num(x, "partition"));
	cJSON_Delete(o);
	return 0;
}

int kctl_admin_txn(struct kctl_admin *a, int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "list"))
		return txn_list(a, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "describe"))
		return txn_describe(a, argc, argv);
	return usage();
}
