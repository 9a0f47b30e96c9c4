/* kaasctl_admin_topic.c — `kaasctl topic create|list|describe|alter-config|
 * add-partitions|delete` through the Kafka protocol: Metadata, CreateTopics,
 * DescribeConfigs, IncrementalAlterConfigs, CreatePartitions, DeleteTopics. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"

#define RESOURCE_TOPIC 2
#define SOURCE_DYNAMIC_TOPIC 1
#define TIMEOUT_MS 30000

static const char usage_topic[] =
	"usage: kaasctl [--bootstrap HOST:PORT] topic create NAME [--partitions N]\n"
	"           [--replication-factor R] [--config KEY=VALUE]...\n"
	"       kaasctl topic list\n"
	"       kaasctl topic describe [NAME...] [--all-configs]\n"
	"       kaasctl topic alter-config NAME [--set KEY=VALUE]... [--delete KEY]...\n"
	"       kaasctl topic add-partitions NAME N\n"
	"       kaasctl topic delete NAME\n";

static int usage(void)
{
	fputs(usage_topic, stderr);
	return KCTL_EXIT_ERROR;
}

static int parse_i32(const char *s, int32_t lo, int32_t hi, int32_t *out)
{
	char *e;
	errno = 0;
	long v = strtol(s, &e, 10);
	if (errno || *e || !*s || v < lo || v > hi)
		return -1;
	*out = (int32_t)v;
	return 0;
}

/* A per-resource answer: "WHAT NAME: error" when code is set. */
static int resource_err(const char *what, const char *name, int16_t code,
			const struct kaas_kslice *msg)
{
	char w[400];
	snprintf(w, sizeof w, "%s %s", what, name);
	return kctl_admin_kerr(w, code, msg);
}

static int topic_create(struct kctl_admin *a, int argc, char **argv)
{
	if (argc < 3 || argv[2][0] == '-')
		return usage();
	const char *name = argv[2];
	int32_t parts = -1, rf = -1;
	const char **cfg = calloc((size_t)argc, sizeof *cfg);
	int ncfg = 0;
	if (!cfg)
		return kctl_error("out of memory");
	for (int i = 3; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--partitions") &&
		    parse_i32(argv[i + 1], 1, 1000000, &parts) == 0) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--replication-factor") &&
			   parse_i32(argv[i + 1], 1, 32767, &rf) == 0) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--config") && strchr(argv[i + 1], '=')) {
			cfg[ncfg++] = argv[++i];
		} else {
			free(cfg);
			kctl_error("topic create: bad argument '%s'", argv[i]);
			return usage();
		}
	}
	struct kctl_conn *c = &a->boot;
	int v = kctl_conn_pick(c, KAAS_API_CREATE_TOPICS, 2, 4);
	if (v < 0) {
		free(cfg);
		return kctl_error("%s", c->why);
	}
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_CREATE_TOPICS, (int16_t)v, 0);
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, name);
	kaas_kw_i32(&w, parts);
	kaas_kw_i16(&w, (int16_t)rf);
	kaas_kw_array(&w, 0, 0); /* no manual assignment */
	kaas_kw_array(&w, 0, ncfg);
	for (int i = 0; i < ncfg; i++) {
		const char *eq = strchr(cfg[i], '=');
		kaas_kw_strn(&w, 0, cfg[i], (int32_t)(eq - cfg[i]));
		kaas_kw_str(&w, 0, eq + 1);
	}
	free(cfg);
	kaas_kw_i32(&w, TIMEOUT_MS);
	kaas_kw_i8(&w, 0); /* validate only: no */
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("CreateTopics: %s", c->why);
	(void)kaas_kr_i32(&r);
	int32_t n = kaas_kr_array(&r, 0, 6);
	int16_t err = n == 1 ? 0 : -1;
	struct kaas_kslice msg = { NULL, -1 };
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		(void)kaas_kr_str(&r, 0);
		err = kaas_kr_i16(&r);
		msg = kaas_kr_nstr(&r, 0);
	}
	int rc;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed CreateTopics answer", c->addr);
	else if (err)
		rc = resource_err("topic create", name, err, &msg);
	else if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "created", name);
		rc = kctl_json_emit(o);
	} else {
		printf("created topic %s\n", name);
		rc = 0;
	}
	free(buf);
	return rc;
}

/* DescribeConfigs of one topic into cfgs (name: value); all: defaults too. */
static int describe_configs(struct kctl_conn *c, const char *topic, int all, cJSON *cfgs)
{
	int v = kctl_conn_pick(c, KAAS_API_DESCRIBE_CONFIGS, 1, 2);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_DESCRIBE_CONFIGS, (int16_t)v, 0);
	kaas_kw_array(&w, 0, 1);
	kaas_kw_i8(&w, RESOURCE_TOPIC);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_array(&w, 0, -1); /* every key */
	kaas_kw_i8(&w, 0);        /* no synonyms */
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("DescribeConfigs: %s", c->why);
	(void)kaas_kr_i32(&r);
	int rc = 0;
	int32_t n = kaas_kr_array(&r, 0, 10);
	for (int32_t i = 0; i < n && kaas_kr_ok(&r) && rc == 0; i++) {
		int16_t err = kaas_kr_i16(&r);
		struct kaas_kslice msg = kaas_kr_nstr(&r, 0);
		(void)kaas_kr_i8(&r);
		(void)kaas_kr_str(&r, 0);
		if (err) {
			rc = resource_err("DescribeConfigs of topic", topic, err, &msg);
			break;
		}
		int32_t nc = kaas_kr_array(&r, 0, 8);
		for (int32_t j = 0; j < nc && kaas_kr_ok(&r); j++) {
			char *k = kaas_kslice_dup(kaas_kr_str(&r, 0));
			struct kaas_kslice val = kaas_kr_nstr(&r, 0);
			(void)kaas_kr_i8(&r); /* read only */
			int8_t source = kaas_kr_i8(&r);
			int8_t sensitive = kaas_kr_i8(&r);
			int32_t ns = kaas_kr_array(&r, 0, 5);
			for (int32_t s = 0; s < ns && kaas_kr_ok(&r); s++) {
				(void)kaas_kr_str(&r, 0);
				(void)kaas_kr_nstr(&r, 0);
				(void)kaas_kr_i8(&r);
			}
			if (k && (all || source == SOURCE_DYNAMIC_TOPIC)) {
				char *vs = sensitive ? NULL : kaas_kslice_dup(val);
				if (vs)
					cJSON_AddStringToObject(cfgs, k, vs);
				else
					cJSON_AddNullToObject(cfgs, k);
				free(vs);
			}
			free(k);
		}
	}
	if (rc == 0 && !kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed DescribeConfigs answer", c->addr);
	free(buf);
	return rc;
}

static cJSON *ids_json(const int32_t *ids, int32_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (int32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
	return arr;
}

static void print_ids(const char *label, const int32_t *ids, int32_t n)
{
	printf("  %s: ", label);
	for (int32_t i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", (int)ids[i]);
}

static int topic_describe(struct kctl_admin *a, int argc, char **argv, int list_only)
{
	int all = 0, nnames = 0;
	const char **names = calloc((size_t)argc + 1, sizeof *names);
	if (!names)
		return kctl_error("out of memory");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--all-configs") && !list_only)
			all = 1;
		else if (argv[i][0] != '-' && !list_only)
			names[nnames++] = argv[i];
		else {
			free(names);
			kctl_error("topic %s: bad argument '%s'", argv[1], argv[i]);
			return usage();
		}
	}
	struct kctl_md md;
	int rc = kctl_metadata(&a->boot, names, nnames ? nnames : -1, &md);
	free(names);
	if (rc)
		return rc;
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "topics");
	for (int32_t i = 0; i < md.ntopics && rc == 0; i++) {
		const struct kctl_md_topic *t = &md.topics[i];
		if (t->internal && nnames == 0)
			continue;
		if (t->err) {
			rc = resource_err("topic", t->name, t->err, NULL);
			break;
		}
		if (list_only) {
			if (a->json)
				cJSON_AddItemToArray(arr, cJSON_CreateString(t->name));
			else
				printf("%s\n", t->name);
			continue;
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddBoolToObject(o, "internal", t->internal);
		cJSON_AddNumberToObject(o, "partition_count", t->nparts);
		cJSON *cfgs = cJSON_AddObjectToObject(o, "configs");
		rc = describe_configs(&a->boot, t->name, all, cfgs);
		if (rc)
			break;
		cJSON *ps = cJSON_AddArrayToObject(o, "partitions");
		for (int32_t j = 0; j < t->nparts; j++) {
			const struct kctl_md_part *p = &t->parts[j];
			cJSON *po = cJSON_CreateObject();
			cJSON_AddItemToArray(ps, po);
			cJSON_AddNumberToObject(po, "partition", p->id);
			cJSON_AddNumberToObject(po, "leader", p->leader);
			if (p->leader_epoch >= 0)
				cJSON_AddNumberToObject(po, "leader_epoch", p->leader_epoch);
			else
				cJSON_AddNullToObject(po, "leader_epoch");
			cJSON_AddItemToObject(po, "replicas", ids_json(p->replicas, p->nreplicas));
			cJSON_AddItemToObject(po, "isr", ids_json(p->isr, p->nisr));
			if (p->err)
				cJSON_AddStringToObject(po, "error", kctl_kerr_name(p->err));
		}
		if (a->json)
			continue;
		printf("Topic: %s  PartitionCount: %d  Configs:", t->name, (int)t->nparts);
		const cJSON *kv;
		int first = 1;
		cJSON_ArrayForEach(kv, cfgs) {
			printf("%s%s=%s", first ? " " : ",", kv->string,
			       cJSON_IsString(kv) ? kv->valuestring : "(sensitive)");
			first = 0;
		}
		printf("\n");
		for (int32_t j = 0; j < t->nparts; j++) {
			const struct kctl_md_part *p = &t->parts[j];
			printf("  Partition: %d  Leader: %d", (int)p->id, (int)p->leader);
			if (p->leader_epoch >= 0)
				printf("  LeaderEpoch: %d", (int)p->leader_epoch);
			print_ids("Replicas", p->replicas, p->nreplicas);
			print_ids("Isr", p->isr, p->nisr);
			if (p->err)
				printf("  Error: %s", kctl_kerr_name(p->err));
			printf("\n");
		}
	}
	kctl_md_free(&md);
	if (rc || !a->json) {
		cJSON_Delete(root);
		return rc;
	}
	return kctl_json_emit(root);
}

static int topic_alter_config(struct kctl_admin *a, int argc, char **argv)
{
	if (argc < 5 || argv[2][0] == '-')
		return usage();
	const char *name = argv[2];
	struct kctl_conn *c = &a->boot;
	int v = kctl_conn_pick(c, KAAS_API_INCREMENTAL_ALTER_CONFIGS, 0, 0);
	if (v < 0)
		return kctl_error("%s", c->why);
	int n = 0;
	for (int i = 3; i < argc; i += 2) {
		if (i + 1 >= argc || (strcmp(argv[i], "--set") && strcmp(argv[i], "--delete")) ||
		    (!strcmp(argv[i], "--set") && !strchr(argv[i + 1], '='))) {
			kctl_error("topic alter-config: bad argument '%s'", argv[i]);
			return usage();
		}
		n++;
	}
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_INCREMENTAL_ALTER_CONFIGS, (int16_t)v, 0);
	kaas_kw_array(&w, 0, 1);
	kaas_kw_i8(&w, RESOURCE_TOPIC);
	kaas_kw_str(&w, 0, name);
	kaas_kw_array(&w, 0, n);
	for (int i = 3; i < argc; i += 2) {
		if (!strcmp(argv[i], "--set")) {
			const char *eq = strchr(argv[i + 1], '=');
			kaas_kw_strn(&w, 0, argv[i + 1], (int32_t)(eq - argv[i + 1]));
			kaas_kw_i8(&w, 0); /* SET */
			kaas_kw_str(&w, 0, eq + 1);
		} else {
			kaas_kw_str(&w, 0, argv[i + 1]);
			kaas_kw_i8(&w, 1); /* DELETE */
			kaas_kw_str(&w, 0, NULL);
		}
	}
	kaas_kw_i8(&w, 0); /* validate only: no */
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("IncrementalAlterConfigs: %s", c->why);
	(void)kaas_kr_i32(&r);
	int32_t nr = kaas_kr_array(&r, 0, 8);
	int16_t err = nr == 1 ? 0 : -1;
	struct kaas_kslice msg = { NULL, -1 };
	for (int32_t i = 0; i < nr && kaas_kr_ok(&r); i++) {
		err = kaas_kr_i16(&r);
		msg = kaas_kr_nstr(&r, 0);
		(void)kaas_kr_i8(&r);
		(void)kaas_kr_str(&r, 0);
	}
	int rc;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed IncrementalAlterConfigs answer", c->addr);
	else if (err)
		rc = resource_err("topic alter-config", name, err, &msg);
	else if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "altered", name);
		rc = kctl_json_emit(o);
	} else {
		printf("altered the configs of topic %s\n", name);
		rc = 0;
	}
	free(buf);
	return rc;
}

static int topic_add_partitions(struct kctl_admin *a, int argc, char **argv)
{
	int32_t add;
	if (argc != 4 || argv[2][0] == '-' || parse_i32(argv[3], 1, 1000000, &add) < 0)
		return usage();
	const char *name = argv[2];
	const char *names[1] = { name };
	struct kctl_md md;
	int rc = kctl_metadata(&a->boot, names, 1, &md);
	if (rc)
		return rc;
	const struct kctl_md_topic *t = kctl_md_topic(&md, name);
	int32_t total = t ? t->nparts + add : 0;
	int16_t terr = t ? t->err : KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	kctl_md_free(&md);
	if (terr)
		return resource_err("topic", name, terr, NULL);
	struct kctl_conn *c = &a->boot;
	int v = kctl_conn_pick(c, KAAS_API_CREATE_PARTITIONS, 0, 1);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_CREATE_PARTITIONS, (int16_t)v, 0);
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, name);
	kaas_kw_i32(&w, total);
	kaas_kw_array(&w, 0, -1); /* the broker assigns */
	kaas_kw_i32(&w, TIMEOUT_MS);
	kaas_kw_i8(&w, 0);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("CreatePartitions: %s", c->why);
	(void)kaas_kr_i32(&r);
	int32_t nr = kaas_kr_array(&r, 0, 6);
	int16_t err = nr == 1 ? 0 : -1;
	struct kaas_kslice msg = { NULL, -1 };
	for (int32_t i = 0; i < nr && kaas_kr_ok(&r); i++) {
		(void)kaas_kr_str(&r, 0);
		err = kaas_kr_i16(&r);
		msg = kaas_kr_nstr(&r, 0);
	}
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed CreatePartitions answer", c->addr);
	else if (err)
		rc = resource_err("topic add-partitions", name, err, &msg);
	else if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "topic", name);
		cJSON_AddNumberToObject(o, "partition_count", total);
		rc = kctl_json_emit(o);
	} else {
		printf("topic %s now has %d partitions\n", name, (int)total);
	}
	free(buf);
	return rc;
}

static int topic_delete(struct kctl_admin *a, int argc, char **argv)
{
	if (argc != 3 || argv[2][0] == '-')
		return usage();
	const char *name = argv[2];
	struct kctl_conn *c = &a->boot;
	int v = kctl_conn_pick(c, KAAS_API_DELETE_TOPICS, 1, 3);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_DELETE_TOPICS, (int16_t)v, 0);
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, name);
	kaas_kw_i32(&w, TIMEOUT_MS);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("DeleteTopics: %s", c->why);
	(void)kaas_kr_i32(&r);
	int32_t nr = kaas_kr_array(&r, 0, 4);
	int16_t err = nr == 1 ? 0 : -1;
	for (int32_t i = 0; i < nr && kaas_kr_ok(&r); i++) {
		(void)kaas_kr_str(&r, 0);
		err = kaas_kr_i16(&r);
	}
	int rc;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed DeleteTopics answer", c->addr);
	else if (err)
		rc = resource_err("topic delete", name, err, NULL);
	else if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "deleted", name);
		rc = kctl_json_emit(o);
	} else {
		printf("deleted topic %s\n", name);
		rc = 0;
	}
	free(buf);
	return rc;
}

int kctl_admin_topic(struct kctl_admin *a, int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *sub = argv[1];
	if (!strcmp(sub, "create"))
		return topic_create(a, argc, argv);
	if (!strcmp(sub, "list"))
		return topic_describe(a, argc, argv, 1);
	if (!strcmp(sub, "describe"))
		return topic_describe(a, argc, argv, 0);
	if (!strcmp(sub, "alter-config"))
		return topic_alter_config(a, argc, argv);
	if (!strcmp(sub, "add-partitions"))
		return topic_add_partitions(a, argc, argv);
	if (!strcmp(sub, "delete"))
		return topic_delete(a, argc, argv);
	kctl_error("topic: unknown subcommand '%s'", sub);
	return usage();
}
