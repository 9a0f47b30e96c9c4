/*
 * api_admin.c — CreateTopics 0..6 (5+ flexible), DeleteTopics 0..5 (4+),
 * CreatePartitions 0..3 (2+), DescribeConfigs 0..4 (4).  (CreateTopics 7
 * and DeleteTopics 6 need topic ids, which kaas does not have yet.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "broker/broker.h"
#include "broker/agent.h"
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
			(void)kaas_kr_str(r, f);
			(void)kaas_kr_nstr(r, f);
			kaas_kr_tags(r, f);
		}
		kaas_kr_tags(r, f);
	}
	(void)kaas_kr_i32(r); /* timeout */
	int validate_only = v >= 1 ? kaas_kr_i8(r) != 0 : 0;
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
		} else if (it->rf != -1 && it->rf != 1) {
			err = KAAS_KERR_INVALID_REPLICATION_FACTOR;
			why = "kaas keeps one copy on the shared volume: replication factor must be 1";
		} else {
			char *name = kaas_kslice_dup(it->name);
			err = name ? topic_kerr(kaas_topics_create(b->topics, name, np, validate_only, &why))
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
			kaas_kw_i16(w, err ? -1 : 1); /* one copy, on the volume */
			/* configs: kaas keeps none per topic yet */
			kaas_kw_array(w, f, err ? -1 : 0);
		}
		kaas_kw_tags(w, f);
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

#define RES_TOPIC 2
#define RES_BROKER 4

struct cfg_entry {
	const char *name;
	char value[32];
};

static void write_config(struct kaas_kw *w, int16_t v, int f, const struct cfg_entry *e)
{
	kaas_kw_str(w, f, e->name);
	kaas_kw_str(w, f, e->value);
	kaas_kw_i8(w, 1); /* read only: kaas does not alter configs yet */
	if (v == 0)
		kaas_kw_i8(w, 1); /* is_default */
	if (v >= 1)
		kaas_kw_i8(w, 5); /* config_source: DEFAULT_CONFIG */
	kaas_kw_i8(w, 0);         /* is_sensitive */
	if (v >= 1)
		kaas_kw_array(w, f, 0); /* synonyms */
	if (v >= 3) {
		kaas_kw_i8(w, 0); /* config_type: UNKNOWN */
		kaas_kw_str(w, f, NULL);
	}
	kaas_kw_tags(w, f);
}

int kaas_api_describe_configs(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	struct cfg_entry topic_cfg[] = {
		{ "cleanup.policy", "delete" },
		{ "compression.type", "producer" },
		{ "retention.ms", "604800000" },
		{ "retention.bytes", "-1" },
		{ "segment.bytes", "1073741824" },
		{ "max.message.bytes", "" },
	};
	struct cfg_entry broker_cfg[] = {
		{ "num.partitions", "" },
		{ "auto.create.topics.enable", "" },
		{ "message.max.bytes", "" },
		{ "socket.request.max.bytes", "" },
	};
	snprintf(topic_cfg[5].value, sizeof(topic_cfg[5].value), "%zu", b->cfg.message_max_bytes);
	snprintf(broker_cfg[0].value, sizeof(broker_cfg[0].value), "%d", b->cfg.num_partitions);
	snprintf(broker_cfg[1].value, sizeof(broker_cfg[1].value), "%s",
		 b->cfg.auto_create ? "true" : "false");
	snprintf(broker_cfg[2].value, sizeof(broker_cfg[2].value), "%zu", b->cfg.message_max_bytes);
	snprintf(broker_cfg[3].value, sizeof(broker_cfg[3].value), "%zu", b->cfg.max_request_bytes);

	struct res {
		int8_t type;
		struct kaas_kslice name;
		int32_t nkeys;
		const uint8_t *keys; /* position of the key list in the request */
	} *rs;
	int32_t nres;
	if (!(rs = read_items(r, f, f ? 4 : 7, sizeof(*rs), &nres)))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nres && kaas_kr_ok(r); i++) {
		rs[i].type = kaas_kr_i8(r);
		rs[i].name = kaas_kr_str(r, f);
		rs[i].nkeys = kaas_kr_array(r, f, f ? 1 : 2);
		rs[i].keys = r->p;
		for (int32_t k = 0; k < rs[i].nkeys && kaas_kr_ok(r); k++)
			(void)kaas_kr_str(r, f);
		kaas_kr_tags(r, f);
	}
	if (v >= 1)
		(void)kaas_kr_i8(r);
	if (v >= 3)
		(void)kaas_kr_i8(r);
	if (!read_end(req, rs, 1, nres))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < nres; i++) {
		struct res *x = &rs[i];
		int16_t err = 0;
		const char *msg = NULL;
		const struct cfg_entry *set = NULL;
		int nset = 0;
		if (x->type == RES_TOPIC) {
			struct kaas_topic *tp = NULL;
			if (!kaas_topic_name_valid((const char *)x->name.p, x->name.len)) {
				err = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
			} else if (!(tp = kaas_topics_get(b->topics, (const char *)x->name.p,
							  x->name.len))) {
				err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
			} else {
				set = topic_cfg;
				nset = (int)(sizeof(topic_cfg) / sizeof(topic_cfg[0]));
			}
			kaas_topic_put(tp);
		} else if (x->type == RES_BROKER) {
			set = broker_cfg;
			nset = (int)(sizeof(broker_cfg) / sizeof(broker_cfg[0]));
		} else {
			err = KAAS_KERR_INVALID_REQUEST;
			msg = "only topic and broker resources are described";
		}
		kaas_kw_i16(w, err);
		kaas_kw_str(w, f, msg);
		kaas_kw_i8(w, x->type);
		kaas_kw_strn(w, f, x->name.p, x->name.len);
		/* Filter by the requested keys (null: all). */
		int keep[16] = { 0 };
		int nkeep = 0;
		for (int e = 0; e < nset; e++) {
			int want = x->nkeys < 0;
			struct kaas_kr kr;
			kaas_kr_init(&kr, x->keys, (size_t)(r->end - x->keys));
			for (int32_t k = 0; k < x->nkeys && !want; k++)
				want = kaas_kslice_eq(kaas_kr_str(&kr, f), set[e].name);
			keep[e] = want;
			nkeep += want;
		}
		kaas_kw_array(w, f, nkeep);
		for (int e = 0; e < nset; e++)
			if (keep[e])
				write_config(w, v, f, &set[e]);
		kaas_kw_tags(w, f);
	}
	return answered(w, f, rs);
}
