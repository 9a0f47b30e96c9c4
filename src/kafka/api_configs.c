/*
 * api_configs.c — DescribeConfigs 0..4, AlterConfigs 0..2 and
 * IncrementalAlterConfigs 0..1: topic configuration through the topic
 * service (broker/topics.h, broker/topic_config.h).  Broker resources are
 * described (kaasd's settings, static: set in its --config file) and never
 * altered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/topic_config.h"
#include "kafka/config_wire.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/status_map.h"
#include "util/status.h"

#define RES_TOPIC 2
#define RES_BROKER 4

/* ACLs: op (DESCRIBE_CONFIGS, ALTER_CONFIGS) on a topic or on the
 * cluster (a broker resource): 0 or the error to answer. */
static int16_t configs_refused(struct kaas_req *req, int8_t type, struct kaas_kslice name, int op)
{
	if (type == RES_TOPIC)
		return kaas_req_allowed_slice(req, op, KAAS_RES_TOPIC, name)
			       ? 0 : KAAS_KERR_TOPIC_AUTHORIZATION_FAILED;
	return kaas_req_allowed_cluster(req, op) ? 0 : KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
}

/* Kafka's ConfigSource and ConfigType numbers. */
static int8_t kafka_source(enum kaas_config_source s)
{
	switch (s) {
	case KAAS_CONFIG_FROM_TOPIC:
		return 1;  /* TOPIC_CONFIG */
	case KAAS_CONFIG_FROM_BROKER:
		return 4;  /* STATIC_BROKER_CONFIG */
	case KAAS_CONFIG_FROM_DEFAULT:
		break;
	}
	return 5;          /* DEFAULT_CONFIG */
}

static int8_t kafka_type(enum kaas_config_type t)
{
	switch (t) {
	case KAAS_CONFIG_BOOLEAN:
		return 1;
	case KAAS_CONFIG_STRING:
		return 2;
	case KAAS_CONFIG_INT:
		return 3;
	case KAAS_CONFIG_LONG:
		return 5;
	case KAAS_CONFIG_DOUBLE:
		return 6;
	case KAAS_CONFIG_LIST:
		return 7;
	}
	return 0;
}

/* What a DescribeConfigs request asks of each value. */
struct describe_opts {
	int16_t v;
	int flex;
	int synonyms;
	int read_only;
};

static void write_entry(struct kaas_kw *w, const struct describe_opts *o,
			const struct kaas_config_entry *e)
{
	kaas_kw_str(w, o->flex, e->name);
	kaas_kw_str(w, o->flex, e->value);
	kaas_kw_i8(w, (int8_t)o->read_only);
	if (o->v == 0)
		kaas_kw_i8(w, e->source == KAAS_CONFIG_FROM_DEFAULT); /* is_default */
	else
		kaas_kw_i8(w, kafka_source(e->source));
	kaas_kw_i8(w, 0); /* is_sensitive */
	if (o->v >= 1) {
		size_t n = o->synonyms ? e->nsyn : 0;
		kaas_kw_array(w, o->flex, (int32_t)n);
		for (size_t i = 0; i < n; i++) {
			kaas_kw_str(w, o->flex, e->syn[i].name);
			kaas_kw_str(w, o->flex, e->syn[i].value);
			kaas_kw_i8(w, kafka_source(e->syn[i].source));
			kaas_kw_tags(w, o->flex);
		}
	}
	if (o->v >= 3) {
		kaas_kw_i8(w, kafka_type(e->type));
		kaas_kw_str(w, o->flex, NULL); /* documentation */
	}
	kaas_kw_tags(w, o->flex);
}

/* Is key `name` asked for (keys: the request's nullable key list, read
 * again from its position; nkeys < 0: all)? */
static int wanted(const struct kaas_kr *keys, int32_t nkeys, int flex, const char *name)
{
	if (nkeys < 0)
		return 1;
	struct kaas_kr kr = *keys;
	for (int32_t k = 0; k < nkeys; k++)
		if (kaas_kslice_eq(kaas_kr_str(&kr, flex), name))
			return 1;
	return 0;
}

/* The broker resource's values: kaasd's own settings, then the broker
 * defaults of topic settings given in its --config file. */
static void describe_broker(struct kaas_kw *w, const struct describe_opts *o,
			    const struct kaas_broker *b, const struct kaas_kr *keys, int32_t nkeys)
{
	struct kaas_config_entry own[5];
	memset(own, 0, sizeof own);
	const char *names[5] = { "num.partitions", "auto.create.topics.enable",
				 "message.max.bytes", "socket.request.max.bytes",
				 "offsets.retention.minutes" };
	snprintf(own[0].buf, sizeof own[0].buf, "%d", b->cfg.num_partitions);
	snprintf(own[1].buf, sizeof own[1].buf, "%s", b->cfg.auto_create ? "true" : "false");
	snprintf(own[2].buf, sizeof own[2].buf, "%zu", b->cfg.message_max_bytes);
	snprintf(own[3].buf, sizeof own[3].buf, "%zu", b->cfg.max_request_bytes);
	snprintf(own[4].buf, sizeof own[4].buf, "%lld",
		 (long long)(b->cfg.offsets_retention_ms / 60000));
	const struct kaas_kvlist *d = &b->cfg.topic_defaults;
	size_t total = 5 + d->n, n = 0;
	struct kaas_config_entry *all = calloc(total, sizeof *all);
	for (size_t i = 0; all && i < 5; i++) {
		if (!wanted(keys, nkeys, o->flex, names[i]))
			continue;
		all[n] = own[i];
		all[n].name = names[i];
		all[n].value = all[n].buf;
		all[n].source = KAAS_CONFIG_FROM_BROKER;
		all[n].type = i == 1 ? KAAS_CONFIG_BOOLEAN : KAAS_CONFIG_LONG;
		n++;
	}
	for (size_t i = 0; all && i < d->n; i++) {
		if (!strcmp(d->v[i].key, "message.max.bytes") ||
		    !wanted(keys, nkeys, o->flex, d->v[i].key))
			continue;
		all[n] = (struct kaas_config_entry){ .name = d->v[i].key, .value = d->v[i].value,
						     .source = KAAS_CONFIG_FROM_BROKER,
						     .type = KAAS_CONFIG_STRING };
		n++;
	}
	kaas_kw_array(w, o->flex, (int32_t)n);
	for (size_t i = 0; i < n; i++) {
		all[i].syn[0].name = all[i].name;
		all[i].syn[0].value = all[i].value;
		all[i].syn[0].source = all[i].source;
		all[i].nsyn = 1;
		write_entry(w, o, &all[i]);
	}
	free(all);
}

static void describe_topic(struct kaas_kw *w, const struct describe_opts *o,
			   const struct kaas_kvlist *defaults, const struct kaas_kvlist *topic,
			   const struct kaas_kr *keys, int32_t nkeys)
{
	size_t n = 0, count = kaas_topic_config_count();
	for (size_t i = 0; i < count; i++)
		n += wanted(keys, nkeys, o->flex, kaas_topic_config_name(i));
	kaas_kw_array(w, o->flex, (int32_t)n);
	for (size_t i = 0; i < count; i++) {
		if (!wanted(keys, nkeys, o->flex, kaas_topic_config_name(i)))
			continue;
		struct kaas_config_entry e;
		kaas_topic_config_describe(i, defaults, topic, &e);
		write_entry(w, o, &e);
	}
}

void kaas_wire_created_configs(struct kaas_kw *w, int flex, const struct kaas_kvlist *defaults,
			       const struct kaas_kvlist *topic)
{
	size_t count = kaas_topic_config_count();
	kaas_kw_array(w, flex, (int32_t)count);
	for (size_t i = 0; i < count; i++) {
		struct kaas_config_entry e;
		kaas_topic_config_describe(i, defaults, topic, &e);
		kaas_kw_str(w, flex, e.name);
		kaas_kw_str(w, flex, e.value);
		kaas_kw_i8(w, 0); /* read_only */
		kaas_kw_i8(w, kafka_source(e.source));
		kaas_kw_i8(w, 0); /* is_sensitive */
		kaas_kw_tags(w, flex);
	}
}

int kaas_api_describe_configs(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	struct describe_opts o = { .v = req->hdr.api_version, .flex = req->hdr.flex };
	struct res {
		int8_t type;
		struct kaas_kslice name;
		int32_t nkeys;
		struct kaas_kr keys; /* the reader at the key list */
	} *rs = NULL;
	int32_t nres = kaas_kr_array(r, o.flex, o.flex ? 4 : 7);
	if (nres >= 0)
		rs = calloc((size_t)nres + 1, sizeof *rs);
	if (!rs)
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nres && kaas_kr_ok(r); i++) {
		rs[i].type = kaas_kr_i8(r);
		rs[i].name = kaas_kr_str(r, o.flex);
		rs[i].nkeys = kaas_kr_array(r, o.flex, o.flex ? 1 : 2);
		rs[i].keys = *r;
		for (int32_t k = 0; k < rs[i].nkeys && kaas_kr_ok(r); k++)
			(void)kaas_kr_str(r, o.flex);
		kaas_kr_tags(r, o.flex);
	}
	if (o.v >= 1)
		o.synonyms = kaas_kr_i8(r) != 0;
	if (o.v >= 3)
		(void)kaas_kr_i8(r); /* include_documentation: kaas has none */
	kaas_kr_tags(r, o.flex);
	if (!kaas_kr_ok(r)) {
		free(rs);
		return KAAS_REQ_CLOSE;
	}
	kaas_kw_i32(w, 0);
	kaas_kw_array(w, o.flex, nres);
	for (int32_t i = 0; i < nres; i++) {
		struct res *x = &rs[i];
		int16_t err = 0;
		const char *msg = NULL;
		struct kaas_kvlist topic = { 0 };
		char *name = kaas_kslice_dup(x->name);
		if (!name) {
			err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
		} else if ((err = configs_refused(req, x->type, x->name,
						  KAAS_OP_DESCRIBE_CONFIGS)) != 0) {
			msg = "not authorized"; /* ACLs */
		} else if (x->type == RES_TOPIC) {
			int rc = kaas_topic_name_valid(name, x->name.len)
					 ? kaas_topics_config_get(b->topics, name, &topic)
					 : KAAS_EINVALNAME;
			err = rc < 0 ? kaas_kafka_error(rc, KAAS_KERR_UNKNOWN_SERVER_ERROR) : 0;
			if (rc == KAAS_EOFFLINE) {
				err = KAAS_KERR_KAFKA_STORAGE_ERROR;
				msg = "the topic is offline (damaged document)";
			}
		} else if (x->type != RES_BROKER) {
			err = KAAS_KERR_INVALID_REQUEST;
			msg = "only topic and broker resources are described";
		}
		kaas_kw_i16(w, err);
		kaas_kw_str(w, o.flex, msg);
		kaas_kw_i8(w, x->type);
		kaas_kw_strn(w, o.flex, x->name.p, x->name.len);
		o.read_only = x->type != RES_TOPIC;
		if (err)
			kaas_kw_array(w, o.flex, 0);
		else if (x->type == RES_TOPIC)
			describe_topic(w, &o, kaas_topics_defaults(b->topics), &topic, &x->keys,
				       x->nkeys);
		else
			describe_broker(w, &o, b, &x->keys, x->nkeys);
		kaas_kw_tags(w, o.flex);
		kaas_kvlist_clear(&topic);
		free(name);
	}
	free(rs);
	kaas_kw_tags(w, o.flex);
	return KAAS_REQ_RESPOND;
}

/* ------------------------------------------------ altering configs */

enum op { OP_SET = 0, OP_DELETE = 1, OP_APPEND = 2, OP_SUBTRACT = 3, OP_REPLACE = -1 };

/* One resource of an AlterConfigs / IncrementalAlterConfigs request. */
struct alter_res {
	int8_t type;
	struct kaas_kslice name;
	int32_t n;
	struct alter_cfg {
		struct kaas_kslice key, value; /* value.len < 0: null */
		int8_t op;                    /* enum op */
	} *cfg;
};

/* The new overrides of a topic: its current ones changed by the request's
 * operations (or, for AlterConfigs, replaced by them).  0, or a status
 * with *why. */
static int new_overrides(const struct alter_res *x, const struct kaas_kvlist *cur,
			 struct kaas_kvlist *out, const char **why)
{
	static _Thread_local char msg[160];
	int replace = x->n > 0 && x->cfg[0].op == OP_REPLACE;
	if (!replace && kaas_kvlist_copy(out, cur) < 0)
		return -ENOMEM;
	for (int32_t i = 0; i < x->n; i++) {
		const struct alter_cfg *c = &x->cfg[i];
		char *key = kaas_kslice_dup(c->key);
		char *val = c->value.len >= 0 ? kaas_kslice_dup(c->value) : NULL;
		int rc = key && (val || c->value.len < 0) ? 0 : -ENOMEM;
		char list[1024];
		if (rc == 0 && (c->op == OP_APPEND || c->op == OP_SUBTRACT) &&
		    kaas_topic_config_type(key) != KAAS_CONFIG_LIST) {
			snprintf(msg, sizeof msg, "%.100s is not a list: APPEND and SUBTRACT do not apply",
				 key);
			*why = msg;
			rc = KAAS_EBADCONFIG;
		} else if (rc == 0 && c->op != OP_DELETE && !val) {
			snprintf(msg, sizeof msg, "%.100s: a null value", key);
			*why = msg;
			rc = KAAS_EBADCONFIG;
		} else if (rc == 0 && c->op != OP_SET && c->op != OP_REPLACE && c->op != OP_DELETE &&
			   kaas_topic_config_list_edit(key, kaas_kvlist_get(out, key), val,
						       c->op == OP_APPEND, list, sizeof list) < 0) {
			*why = "the list is too long";
			rc = KAAS_EBADCONFIG;
		} else if (rc == 0) {
			if (c->op == OP_DELETE)
				(void)kaas_kvlist_del(out, key);
			else if (c->op == OP_SET || c->op == OP_REPLACE)
				rc = kaas_kvlist_set(out, key, val);
			else if (list[0])
				rc = kaas_kvlist_set(out, key, list);
			else
				(void)kaas_kvlist_del(out, key);
		}
		free(key);
		free(val);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* new_overrides as the topic registry's edit (arg: the resource): applied
 * to the overrides the topic's document holds when it is rewritten, never
 * to this broker's copy, which may not have followed a change made through
 * another broker yet. */
static int overrides_edit(void *arg, const struct kaas_kvlist *cur, struct kaas_kvlist *next,
			  const char **why)
{
	return new_overrides(arg, cur, next, why);
}

/* Alter one resource: the Kafka error code, *why the message. */
static int16_t alter_one(struct kaas_broker *b, const struct alter_res *x, int validate_only,
			 const char **why)
{
	if (x->type == RES_BROKER) {
		*why = "kaasd's broker configs are static: set them in its --config file";
		return KAAS_KERR_INVALID_REQUEST;
	}
	if (x->type != RES_TOPIC) {
		*why = "only topic configs can be altered";
		return KAAS_KERR_INVALID_REQUEST;
	}
	char *name = kaas_kslice_dup(x->name);
	if (!name)
		return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	int rc = kaas_topic_name_valid(name, x->name.len)
			 ? kaas_topics_edit_config(b->topics, name, overrides_edit, (void *)x,
						   validate_only, why)
			 : KAAS_EINVALNAME;
	free(name);
	if (rc == KAAS_EOFFLINE || rc == KAAS_EFENCED)
		return KAAS_KERR_KAFKA_STORAGE_ERROR;
	return rc < 0 ? kaas_kafka_error(rc, KAAS_KERR_KAFKA_STORAGE_ERROR) : 0;
}

/* Both APIs: read the resources (incremental: with an operation per
 * config), alter each, answer per resource. */
static int alter_configs(struct kaas_req *req, int incremental)
{
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	int flex = req->hdr.flex;
	struct alter_res *rs = NULL;
	int32_t nres = kaas_kr_array(r, flex, flex ? 4 : 7);
	if (nres >= 0)
		rs = calloc((size_t)nres + 1, sizeof *rs);
	int ok = rs != NULL;
	for (int32_t i = 0; ok && i < nres && kaas_kr_ok(r); i++) {
		rs[i].type = kaas_kr_i8(r);
		rs[i].name = kaas_kr_str(r, flex);
		rs[i].n = kaas_kr_array(r, flex, flex ? (incremental ? 4 : 3) : (incremental ? 5 : 4));
		if (rs[i].n > 0 && !(rs[i].cfg = calloc((size_t)rs[i].n, sizeof *rs[i].cfg)))
			ok = 0;
		for (int32_t k = 0; ok && k < rs[i].n && kaas_kr_ok(r); k++) {
			rs[i].cfg[k].key = kaas_kr_str(r, flex);
			rs[i].cfg[k].op = incremental ? kaas_kr_i8(r) : OP_REPLACE;
			rs[i].cfg[k].value = kaas_kr_nstr(r, flex);
			kaas_kr_tags(r, flex);
			if (incremental && (rs[i].cfg[k].op < OP_SET || rs[i].cfg[k].op > OP_SUBTRACT))
				rs[i].cfg[k].op = 99; /* answered INVALID_REQUEST below */
		}
		kaas_kr_tags(r, flex);
	}
	int validate_only = kaas_kr_i8(r) != 0;
	kaas_kr_tags(r, flex);
	if (ok && kaas_kr_ok(r)) {
		kaas_kw_i32(w, 0);
		kaas_kw_array(w, flex, nres);
		for (int32_t i = 0; i < nres; i++) {
			const char *why = NULL;
			int16_t err = 0;
			for (int32_t k = 0; k < rs[i].n; k++)
				if (rs[i].cfg[k].op == 99) {
					err = KAAS_KERR_INVALID_REQUEST;
					why = "unknown config operation";
				}
			if (!err && (err = configs_refused(req, rs[i].type, rs[i].name,
							   KAAS_OP_ALTER_CONFIGS)) != 0)
				why = "not authorized"; /* ACLs */
			if (!err)
				err = alter_one(req->broker, &rs[i], validate_only, &why);
			kaas_kw_i16(w, err);
			kaas_kw_str(w, flex, err ? why : NULL);
			kaas_kw_i8(w, rs[i].type);
			kaas_kw_strn(w, flex, rs[i].name.p, rs[i].name.len);
			kaas_kw_tags(w, flex);
		}
		kaas_kw_tags(w, flex);
	}
	for (int32_t i = 0; rs && i < nres; i++)
		free(rs[i].cfg);
	free(rs);
	return ok && kaas_kr_ok(r) ? KAAS_REQ_RESPOND : KAAS_REQ_CLOSE;
}

int kaas_api_alter_configs(struct kaas_req *req)
{
	return alter_configs(req, 0);
}

int kaas_api_incremental_alter_configs(struct kaas_req *req)
{
	return alter_configs(req, 1);
}
