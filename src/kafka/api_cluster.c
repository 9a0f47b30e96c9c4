/*
 * api_cluster.c — DescribeCluster 0..1 and DescribeLogDirs 0..4 (2+
 * flexible): the cluster as Metadata shows it, and the one "log dir" of a
 * broker — the data volume — with the size of each partition it leads and
 * the volume's total and usable bytes (the substrate's statfs, -1 when it
 * has none).  Work queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/wire_cluster.h"

/* DescribeCluster's endpoint types (KIP-919). */
#define ENDPOINT_BROKERS 1
#define ENDPOINT_CONTROLLERS 2

int kaas_api_describe_cluster(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	(void)kaas_kr_i8(r); /* include_cluster_authorized_operations: not computed */
	int8_t endpoint = v >= 1 ? kaas_kr_i8(r) : ENDPOINT_BROKERS;
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	int16_t err = KAAS_KERR_NONE;
	const char *why = NULL;
	/* No ACL: Kafka answers DescribeCluster to any principal (DESCRIBE on
	 * the cluster only decides the authorized operations, not computed
	 * here); AdminClient.describeCluster() must work for every user. */
	if (endpoint == ENDPOINT_CONTROLLERS) {
		err = KAAS_KERR_MISMATCHED_ENDPOINT_TYPE;
		why = "kaas brokers answer for endpoint type 1 (brokers); there are no controller "
		      "endpoints";
	} else if (endpoint != ENDPOINT_BROKERS) {
		err = KAAS_KERR_UNSUPPORTED_ENDPOINT_TYPE;
		why = "unknown endpoint type (1: brokers, 2: controllers)";
	}
	kaas_kw_i32(w, 0); /* throttle */
	kaas_kw_i16(w, err);
	kaas_kw_str(w, f, why);
	if (v >= 1)
		kaas_kw_i8(w, endpoint);
	kaas_kw_str(w, f, b->cluster_id);
	kaas_kw_i32(w, err ? -1 : kaas_wire_controller(b));
	if (err)
		kaas_kw_array(w, f, 0);
	else if (kaas_wire_brokers(req, f, 1) < 0)
		return KAAS_REQ_CLOSE;
	kaas_kw_i32(w, INT32_MIN); /* cluster_authorized_operations: not computed */
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}

/* ------------------------------------------------------------ DescribeLogDirs */

/* One topic asked for: its name and partition indexes (a reader at
 * them, as they are read again while answering). */
struct dir_ask {
	struct kaas_kslice name;
	int32_t n;
	struct kaas_kr parts;
	struct kaas_topic *tp;
};

/* Is partition idx of a.tp reported: led here, and asked for (a NULL:
 * every partition of every topic)? */
static struct kaas_log *reported(const struct dir_ask *a, struct kaas_topic *tp, int32_t idx)
{
	if (a) {
		struct kaas_kr kr = a->parts;
		int asked = 0;
		for (int32_t k = 0; k < a->n && !asked; k++)
			asked = kaas_kr_i32(&kr) == idx;
		if (!asked)
			return NULL;
	}
	return idx >= 0 && idx < tp->npart ? tp->parts[idx].log : NULL;
}

/* Write one topic's partitions led here (a: as asked; NULL: all).  The
 * topic is written only when it has some: returns 1 if written. */
static int write_dir_topic(struct kaas_kw *w, int f, struct kaas_topic *tp, const struct dir_ask *a,
			   int count_only)
{
	int32_t n = 0;
	for (int32_t i = 0; i < tp->npart; i++)
		n += reported(a, tp, i) != NULL;
	if (n == 0 || count_only)
		return n > 0;
	kaas_kw_str(w, f, tp->name);
	kaas_kw_array(w, f, n);
	for (int32_t i = 0; i < tp->npart; i++) {
		struct kaas_log *log = reported(a, tp, i);
		if (!log)
			continue;
		kaas_kw_i32(w, i);
		kaas_kw_i64(w, kaas_log_size(log));
		kaas_kw_i64(w, 0);  /* offset lag: the leader is its one replica */
		kaas_kw_i8(w, 0);   /* is_future_key */
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	return 1;
}

static void write_dir_topics(struct kaas_kw *w, int f, struct kaas_topic **list, int k,
			     const struct dir_ask *asks)
{
	int32_t n = 0;
	for (int i = 0; i < k; i++)
		n += list[i] && write_dir_topic(w, f, list[i], asks ? &asks[i] : NULL, 1);
	kaas_kw_array(w, f, n);
	for (int i = 0; i < k; i++)
		if (list[i])
			(void)write_dir_topic(w, f, list[i], asks ? &asks[i] : NULL, 0);
}

int kaas_api_describe_log_dirs(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	struct dir_ask *asks = NULL;
	struct kaas_topic **list = NULL;
	int k = 0;
	int32_t nt = kaas_kr_array_alloc(r, f, f ? 2 : 6, sizeof(*asks), (void **)&asks);
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		asks[i].name = kaas_kr_str(r, f);
		asks[i].n = kaas_kr_array(r, f, 4);
		asks[i].parts = *r;
		for (int32_t j = 0; j < asks[i].n && kaas_kr_ok(r); j++)
			(void)kaas_kr_i32(r);
		kaas_kr_tags(r, f);
	}
	kaas_kr_tags(r, f);
	if (kaas_kr_ok(r) && nt >= 0) {
		/* as asked: one listed topic (or NULL) per element */
		k = nt;
		list = calloc((size_t)nt + 1, sizeof(*list));
		for (int32_t i = 0; list && i < nt; i++)
			if (kaas_topic_name_valid((const char *)asks[i].name.p, asks[i].name.len))
				list[i] = kaas_topics_get(b->topics, (const char *)asks[i].name.p,
							  asks[i].name.len);
	} else if (kaas_kr_ok(r)) {
		list = kaas_topics_list(b->topics, &k);
	}
	if (!list) {
		free(asks);
		return KAAS_REQ_CLOSE;
	}
	/* ACLs: without DESCRIBE on the cluster, no log dirs (v3+ says why,
	 * as Kafka answers) */
	int denied = !kaas_req_allowed_cluster(req, KAAS_OP_DESCRIBE);
	kaas_kw_i32(w, 0); /* throttle */
	if (v >= 3)
		kaas_kw_i16(w, denied ? KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED : KAAS_KERR_NONE);
	if (denied) {
		kaas_kw_array(w, f, 0);
	} else {
		struct kaas_statfs st;
		int have_st = kaas_sub_statfs(b->data, "", &st) == 0;
		kaas_kw_array(w, f, 1); /* one log dir: the data volume */
		kaas_kw_i16(w, KAAS_KERR_NONE);
		kaas_kw_str(w, f, b->cfg.data_url ? b->cfg.data_url : "");
		write_dir_topics(w, f, list, k, nt >= 0 ? asks : NULL);
		if (v >= 4) {
			kaas_kw_i64(w, have_st ? (int64_t)st.total_bytes : -1);
			kaas_kw_i64(w, have_st ? (int64_t)st.free_bytes : -1);
		}
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	for (int i = 0; i < k; i++)
		kaas_topic_put(list[i]);
	free(list);
	free(asks);
	return KAAS_REQ_RESPOND;
}
