/*
 * api_admin.c — CreateTopics 0..6 (5+ flexible), DeleteTopics 0..5 (4+),
 * CreatePartitions 0..3 (2+).  (CreateTopics 7 and DeleteTopics 6 need topic
 * ids, which kaas does not have yet; topic configs: api_configs.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "kafka/config_wire.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/status_map.h"
#include "kafka/request.h"
#include "util/status.h"

/* The Kafka error code for a status of the topic service (broker/topics.h).
 * Until the one status map (kafka/status_map.c) exists, this is the map
 * for topic calls. */
static int16_t topic_kerr(int rc)
{
	/* An admin operation that the volume refused (a fence or an offline
	 * topic included) is a storage error to the client, not a leader move. */
	if (rc == KAAS_EFENCED || rc == KAAS_EOFFLINE)
		return KAAS_KERR_KAFKA_STORAGE_ERROR;
	return kaas_kafka_error(rc, rc == -ENOMEM ? KAAS_KERR_UNKNOWN_SERVER_ERROR
						  : KAAS_KERR_KAFKA_STORAGE_ERROR);
}

/* The request's top-level array: zeroed room for its elements of
 * elem_size (one more, so that an empty array is not NULL) and *n their
 * count; NULL when the connection is to be closed (a null array, a short
 * request, out of memory). */
static void *read_items(struct kaas_kr *r, int f, size_t min_elem, size_t elem_size, int32_t *n)
{
	*n = kaas_kr_array(r, f, min_elem);
	if (!kaas_kr_ok(r) || *n < 0)
		return NULL;
	return calloc((size_t)*n + 1, elem_size);
}

/* Skip a manual assignment: [(partition index,) broker ids, tags] — kaas
 * places partitions itself.  Returns the count read (-1: null). */
static int32_t skip_assignments(struct kaas_kr *r, int f, int with_index)
{
	int32_t na = kaas_kr_array(r, f, with_index ? (f ? 6 : 8) : (f ? 2 : 4));
	for (int32_t j = 0; j < na && kaas_kr_ok(r); j++) {
		if (with_index)
			(void)kaas_kr_i32(r);
		int32_t nb = kaas_kr_array(r, f, 4);
		for (int32_t k = 0; k < nb && kaas_kr_ok(r); k++)
			(void)kaas_kr_i32(r);
		kaas_kr_tags(r, f);
	}
	return na;
}

/* The end of every request here (its top-level tagged fields) and the
 * start of its answer: the throttle time (when the version has it) and
 * the length of the answer's array of n.  1, or 0 when the request is
 * malformed (then the items are freed: close it). */
static int read_end(struct kaas_req *req, void *items, int throttle, int32_t n)
{
	kaas_kr_tags(&req->r, req->hdr.flex);
	if (!kaas_kr_ok(&req->r)) {
		free(items);
		return 0;
	}
	if (throttle)
		kaas_kw_i32(&req->w, 0);
	kaas_kw_array(&req->w, req->hdr.flex, n);
	return 1;
}

/* The end of every answer here: the top-level tagged fields, and the
 * request's items freed. */
static int answered(struct kaas_kw *w, int f, void *items)
{
	kaas_kw_tags(w, f);
	free(items);
	return KAAS_REQ_RESPOND;
}

int kaas_api_create_topics(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	struct item {
		struct kaas_kslice name;
		int32_t np;
		int16_t rf;
		int32_t nassign;
		struct kaas_kvlist config;
		int bad_config;       /* a null config value */
	} *items;
	int32_t nt;
	if (!(items = read_items(r, f, f ? 10 : 16, sizeof(*items), &nt)))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		items[i].name = kaas_kr_str(r, f);
		items[i].np = kaas_kr_i32(r);
		items[i].rf = kaas_kr_i16(r);
		items[i].nassign = skip_assignments(r, f, 1);
		int32_t nc = kaas_kr_array(r, f, f ? 3 : 4);
		for (int32_t j = 0; j < nc && kaas_kr_ok(r); j++) {
			char *k = kaas_kslice_dup(kaas_kr_str(r, f));
			struct kaas_kslice vs = kaas_kr_nstr(r, f);
			char *val = vs.len >= 0 ? kaas_kslice_dup(vs) : NULL;
			if (k && val && kaas_kvlist_set(&items[i].config, k, val) < 0)
				kaas_kr_fail(r);
			items[i].bad_config |= vs.len < 0;
			free(k);
			free(val);
			kaas_kr_tags(r, f);
		}
		kaas_kr_tags(r, f);
	}
	(void)kaas_kr_i32(r); /* timeout */
	int validate_only = v >= 1 ? kaas_kr_i8(r) != 0 : 0;
	if (!kaas_kr_ok(r))
		for (int32_t i = 0; i < nt; i++)
			kaas_kvlist_clear(&items[i].config);
	if (!read_end(req, items, v >= 2, nt))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nt; i++) {
		struct item *it = &items[i];
		int16_t err = 0;
		const char *why = NULL;
		int32_t np = it->nassign > 0 ? it->nassign : it->np;
		if (np == -1)
			np = b->cfg.num_partitions;
		if (!kaas_topic_name_valid((const char *)it->name.p, it->name.len)) {
			err = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
			why = "topic names are 1-249 characters of [a-zA-Z0-9._-], not '.' or '..'";
		} else if (!kaas_req_may_create_topic(req, (const char *)it->name.p,
						      (size_t)it->name.len)) {
			err = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED; /* ACLs */
			why = "not authorized to create the topic";
		} else if (it->rf == 0 || it->rf < -1) {
			err = KAAS_KERR_INVALID_REPLICATION_FACTOR;
			why = "the replication factor must be at least 1 (or -1: the default)";
		} else if (it->bad_config) {
			err = KAAS_KERR_INVALID_CONFIG;
			why = "a config given without a value";
		} else {
			char *name = kaas_kslice_dup(it->name);
			/* Any replication factor is accepted and recorded: the
			 * volume keeps the data durable, and the partition's
			 * leader is its one replica and ISR. */
			int32_t rf = it->rf == -1 ? 1 : it->rf;
			err = name ? topic_kerr(kaas_topics_create_config(b->topics, name, np, rf,
									   &it->config, validate_only,
									   &why))
				   : KAAS_KERR_UNKNOWN_SERVER_ERROR;
			/* Let the controller assign it before answering. */
			if (err == 0 && !validate_only && b->agent)
				(void)kaas_agent_wait_assigned(b->agent, name, 2000);
			free(name);
		}
		kaas_kw_strn(w, f, it->name.p, it->name.len);
		kaas_kw_i16(w, err);
		if (v >= 1)
			kaas_kw_str(w, f, err ? why : NULL);
		if (v >= 5) {
			kaas_kw_i32(w, err ? -1 : np);
			/* the replication factor as asked and recorded (one copy
			 * in fact: the volume's) */
			kaas_kw_i16(w, err ? -1 : (it->rf == -1 ? 1 : it->rf));
			/* configs: what DescribeConfigs answers, with sources */
			if (err)
				kaas_kw_array(w, f, -1);
			else
				kaas_wire_created_configs(w, f, kaas_topics_defaults(b->topics),
							  &it->config);
		}
		kaas_kw_tags(w, f);
		kaas_kvlist_clear(&it->config);
	}
	return answered(w, f, items);
}

int kaas_api_delete_topics(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	int32_t nt;
	struct kaas_kslice *names = read_items(r, f, f ? 1 : 2, sizeof(*names), &nt);
	if (!names)
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nt; i++)
		names[i] = kaas_kr_str(r, f);
	(void)kaas_kr_i32(r);
	if (!read_end(req, names, v >= 1, nt))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nt; i++) {
		int16_t err;
		if (!kaas_topic_name_valid((const char *)names[i].p, names[i].len)) {
			err = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		} else if (!kaas_req_allowed_slice(req, KAAS_OP_DELETE, KAAS_RES_TOPIC, names[i])) {
			err = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED; /* ACLs */
		} else {
			char *name = kaas_kslice_dup(names[i]);
			err = name ? topic_kerr(kaas_topics_delete(req->broker->topics, name))
				   : KAAS_KERR_UNKNOWN_SERVER_ERROR;
			if (err == 0 && req->broker->agent)
				kaas_agent_kick(req->broker->agent);
			free(name);
		}
		kaas_kw_strn(w, f, names[i].p, names[i].len);
		kaas_kw_i16(w, err);
		if (v >= 5)
			kaas_kw_str(w, f, NULL); /* error_message */
		kaas_kw_tags(w, f);
	}
	return answered(w, f, names);
}

/* One topic of a CreatePartitions request: grow it to count partitions. */
struct grow {
	struct kaas_kslice name;
	int32_t count;
};

static void read_grow(struct kaas_kr *r, int f, struct grow *g)
{
	g->name = kaas_kr_str(r, f);
	g->count = kaas_kr_i32(r);
	(void)skip_assignments(r, f, 0);
	kaas_kr_tags(r, f);
}

int kaas_api_create_partitions(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	int32_t nt;
	struct grow *items = read_items(r, f, f ? 7 : 10, sizeof(*items), &nt);
	if (!items)
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++)
		read_grow(r, f, &items[i]);
	(void)kaas_kr_i32(r);
	int validate_only = kaas_kr_i8(r) != 0;
	if (!read_end(req, items, 1, nt))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nt; i++) {
		int16_t err;
		const char *why = NULL;
		if (!kaas_topic_name_valid((const char *)items[i].name.p, items[i].name.len)) {
			err = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		} else if (!kaas_req_allowed_slice(req, KAAS_OP_ALTER, KAAS_RES_TOPIC, items[i].name)) {
			err = KAAS_KERR_TOPIC_AUTHORIZATION_FAILED; /* ACLs */
		} else {
			char *name = kaas_kslice_dup(items[i].name);
			err = name ? topic_kerr(kaas_topics_add_partitions(b->topics, name,
									   items[i].count,
									   validate_only, &why))
				   : KAAS_KERR_UNKNOWN_SERVER_ERROR;
			free(name);
		}
		kaas_kw_strn(w, f, items[i].name.p, items[i].name.len);
		kaas_kw_i16(w, err);
		kaas_kw_str(w, f, err ? why : NULL);
		kaas_kw_tags(w, f);
	}
	return answered(w, f, items);
}
