/* api_metadata.c — Metadata 0..12 (9+ flexible), with auto-creation of
 * topics.  kaas has no topic ids yet: v10+ answers the zero id, and a topic
 * asked for by id alone is UNKNOWN_TOPIC_ID. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "util/logger.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/wire_cluster.h"
#include "util/status.h"

/* A topic named by the request, with a reference, or NULL.  One this
 * broker has not listed yet is looked for on the volume: created a moment
 * ago through another broker, it is listed (by a cluster round kicked now)
 * before the answer, so that every broker answers the same partition count
 * right after a create — a consumer group leader that read "unknown" here
 * would assign nothing, and librdkafka would not look again before its
 * next periodic metadata refresh (5 minutes by default).  Unknown and
 * allowed: auto-created. */
static struct kaas_topic *lookup_topic(struct kaas_broker *b, struct kaas_kslice name,
				       int allow_create)
{
	const char *nm = (const char *)name.p;
	struct kaas_topic *tp = kaas_topics_get(b->topics, nm, name.len);
	if (tp)
		return tp;
	int create = allow_create && b->cfg.auto_create && !b->draining;
	if (!b->agent && !create)
		return NULL;
	char *s = kaas_kslice_dup(name);
	if (!s)
		return NULL;
	int wait = 0;
	if (b->agent && kaas_topics_on_volume(b->topics, s) == 1) {
		wait = 1;
	} else if (create) {
		int rc = kaas_topics_create(b->topics, s, b->cfg.num_partitions, 0, NULL);
		if (rc != 0 && rc != KAAS_EEXISTS)
			kaas_warn("auto-creating topic %s failed: %s", s, kaas_strerror(rc));
		wait = rc == 0 || rc == KAAS_EEXISTS;
	}
	/* Give the cluster a moment to list and assign it (no topic reference
	 * held: opening its log waits for those). */
	if (wait && b->agent)
		(void)kaas_agent_wait_assigned(b->agent, s, 2000);
	free(s);
	return kaas_topics_get(b->topics, nm, name.len);
}

static void write_topic(struct kaas_kw *w, struct kaas_broker *b, int16_t v, int16_t err,
			const char *name, int nlen, const struct kaas_topic *tp)
{
	int f = v >= 9;
	static const uint8_t zero_id[16];
	kaas_kw_i16(w, err);
	kaas_kw_strn(w, f, name, nlen);
	if (v >= 10)
		kaas_kw_raw(w, zero_id, sizeof(zero_id)); /* topic_id: none yet */
	if (v >= 1)
		kaas_kw_i8(w, 0); /* is_internal */
	int32_t np = tp ? tp->npart : 0;
	kaas_kw_array(w, f, np);
	for (int32_t i = 0; i < np; i++) {
		const struct kaas_partition *p = &tp->parts[i];
		int32_t broker, epoch;
		kaas_kw_i16(w, kaas_wire_part_leader(b, tp, p, &broker, &epoch));
		kaas_kw_i32(w, i);
		kaas_kw_i32(w, broker); /* leader */
		if (v >= 7)
			kaas_kw_i32(w, epoch);
		kaas_kw_array(w, f, 1); /* replicas */
		kaas_kw_i32(w, broker);
		kaas_kw_array(w, f, 1); /* isr */
		kaas_kw_i32(w, broker);
		if (v >= 5)
			kaas_kw_array(w, f, 0); /* offline replicas */
		kaas_kw_tags(w, f);
	}
	if (v >= 8)
		kaas_kw_i32(w, INT32_MIN); /* topic_authorized_operations: not computed */
	kaas_kw_tags(w, f);
}

int kaas_api_metadata(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	int32_t n = kaas_kr_array(r, f, 2);
	if (!kaas_kr_ok(r) || (v == 0 && n < 0))
		return KAAS_REQ_CLOSE;
	struct kaas_kslice *names = NULL;
	if (n > 0 && !(names = calloc((size_t)n, sizeof(*names))))
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < n; i++) {
		if (v >= 10)
			(void)kaas_kr_raw(r, 16); /* topic_id: kaas answers by name */
		names[i] = v >= 12 ? kaas_kr_nstr(r, f) : kaas_kr_str(r, f);
		kaas_kr_tags(r, f);
	}
	int allow_create = 1;
	if (v >= 4)
		allow_create = kaas_kr_i8(r) != 0;
	if (v >= 8 && v <= 10)
		(void)kaas_kr_i8(r); /* include_cluster_authorized_operations */
	if (v >= 8)
		(void)kaas_kr_i8(r); /* include_topic_authorized_operations */
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r)) {
		free(names);
		return KAAS_REQ_CLOSE;
	}
	int all = n < 0 || (v == 0 && n == 0);
	if (v >= 3)
		kaas_kw_i32(w, 0); /* throttle */
	if (kaas_wire_brokers(req, f, v >= 1) < 0) {
		free(names);
		return KAAS_REQ_CLOSE;
	}
	if (v >= 2)
		kaas_kw_str(w, f, b->cluster_id);
	if (v >= 1)
		kaas_kw_i32(w, kaas_wire_controller(b));
	if (all) {
		int k = 0;
		struct kaas_topic **list = kaas_topics_list(b->topics, &k);
		/* ACLs: only the topics the principal may describe (decided
		 * once: the count must match what is written). */
		char *hide = calloc((size_t)k + 1, 1);
		int shown = 0;
		for (int i = 0; i < k; i++) {
			const char *tn = list[i]->name;
			hide[i] = hide && !kaas_req_allowed(req, KAAS_OP_DESCRIBE, KAAS_RES_TOPIC,
							    tn, strlen(tn));
			shown += !hide || !hide[i];
		}
		if (!hide)
			w->err = -ENOMEM;
		kaas_kw_array(w, f, shown);
		for (int i = 0; i < k; i++) {
			if (hide && hide[i]) {
				kaas_topic_put(list[i]);
				continue;
			}
			write_topic(w, b, v,
				    list[i]->offline ? KAAS_KERR_KAFKA_STORAGE_ERROR : KAAS_KERR_NONE,
				    list[i]->name, (int)strlen(list[i]->name), list[i]);
			kaas_topic_put(list[i]);
		}
		free(list);
		free(hide);
	} else {
		kaas_kw_array(w, f, n);
		for (int32_t i = 0; i < n; i++) {
			const char *nm = (const char *)names[i].p;
			int len = names[i].len;
			if (len < 0) { /* by id alone (v12+): kaas has no topic ids */
				write_topic(w, b, v, KAAS_KERR_UNKNOWN_TOPIC_ID, NULL, -1, NULL);
				continue;
			}
			if (!kaas_topic_name_valid(nm, len)) {
				write_topic(w, b, v, KAAS_KERR_INVALID_TOPIC_EXCEPTION, nm, len, NULL);
				continue;
			}
			if (!kaas_req_allowed(req, KAAS_OP_DESCRIBE, KAAS_RES_TOPIC, nm, (size_t)len)) {
				write_topic(w, b, v, KAAS_KERR_TOPIC_AUTHORIZATION_FAILED, nm, len,
					    NULL); /* ACLs */
				continue;
			}
			int may_create = allow_create && b->cfg.auto_create &&
					 kaas_req_may_create_topic(req, nm, (size_t)len);
			struct kaas_topic *tp = lookup_topic(b, names[i], may_create);
			if (!tp && allow_create && b->cfg.auto_create && !may_create)
				write_topic(w, b, v, KAAS_KERR_TOPIC_AUTHORIZATION_FAILED, nm, len,
					    NULL); /* may not create it */
			else if (tp)
				write_topic(w, b, v,
					    tp->offline ? KAAS_KERR_KAFKA_STORAGE_ERROR : KAAS_KERR_NONE,
					    nm, len, tp);
			else
				write_topic(w, b, v, KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION, nm, len,
					    NULL);
			kaas_topic_put(tp);
		}
	}
	if (v >= 8 && v <= 10)
		kaas_kw_i32(w, INT32_MIN); /* cluster_authorized_operations */
	kaas_kw_tags(w, f);
	free(names);
	return KAAS_REQ_RESPOND;
}
