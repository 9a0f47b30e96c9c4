/*
 * dispatch.c — from a parsed frame to its API handler: the API table, the
 * checks that close a connection (a header that does not parse, an unknown
 * API key, an unsupported version except ApiVersions, which answers
 * UNSUPPORTED_VERSION as KIP-511 asks), and the work pool of the request
 * seam (kaas_pool_queue) with its accounting of outstanding jobs.
 * Handlers that may block on the volume run on the pool; the others on
 * the loop.
 */
#include "server/internal.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/sasl.h"
#include "kafka/txn_markers_api.h"
#include "util/logger.h"
#include "util/metrics.h"
#include "util/thread_name.h"

struct api_entry {
	int16_t key;
	kaas_loop_handler loop;
	kaas_pool_handler pool;
};

static const struct api_entry handlers[] = {
	{ KAAS_API_PRODUCE, kaas_api_produce, NULL },
	{ KAAS_API_FETCH, kaas_api_fetch, NULL },
	{ KAAS_API_LIST_OFFSETS, NULL, kaas_api_list_offsets },
	{ KAAS_API_METADATA, NULL, kaas_api_metadata },
	{ KAAS_API_OFFSET_COMMIT, kaas_api_offset_commit, NULL },
	{ KAAS_API_OFFSET_FETCH, kaas_api_offset_fetch, NULL },
	{ KAAS_API_FIND_COORDINATOR, NULL, kaas_api_find_coordinator },
	{ KAAS_API_JOIN_GROUP, kaas_api_join_group, NULL },
	{ KAAS_API_HEARTBEAT, kaas_api_heartbeat, NULL },
	{ KAAS_API_LEAVE_GROUP, kaas_api_leave_group, NULL },
	{ KAAS_API_SYNC_GROUP, kaas_api_sync_group, NULL },
	{ KAAS_API_DESCRIBE_GROUPS, kaas_api_describe_groups, NULL },
	{ KAAS_API_LIST_GROUPS, kaas_api_list_groups, NULL },
	{ KAAS_API_INIT_PRODUCER_ID, NULL, kaas_api_init_producer_id },
	{ KAAS_API_API_VERSIONS, NULL, kaas_api_versions },
	{ KAAS_API_CREATE_TOPICS, NULL, kaas_api_create_topics },
	{ KAAS_API_DELETE_TOPICS, NULL, kaas_api_delete_topics },
	{ KAAS_API_DESCRIBE_CONFIGS, NULL, kaas_api_describe_configs },
	{ KAAS_API_ALTER_CONFIGS, NULL, kaas_api_alter_configs },
	{ KAAS_API_DELETE_GROUPS, kaas_api_delete_groups, NULL },
	{ KAAS_API_OFFSET_DELETE, kaas_api_offset_delete, NULL },
	{ KAAS_API_INCREMENTAL_ALTER_CONFIGS, NULL, kaas_api_incremental_alter_configs },
	{ KAAS_API_CREATE_PARTITIONS, NULL, kaas_api_create_partitions },
	/* transactions (txn-coord) */
	{ KAAS_API_ADD_PARTITIONS_TO_TXN, NULL, kaas_api_add_partitions_to_txn },
	{ KAAS_API_ADD_OFFSETS_TO_TXN, NULL, kaas_api_add_offsets_to_txn },
	{ KAAS_API_END_TXN, NULL, kaas_api_end_txn },
	{ KAAS_API_TXN_OFFSET_COMMIT, kaas_api_txn_offset_commit, NULL },
	{ KAAS_API_DESCRIBE_TRANSACTIONS, NULL, kaas_api_describe_transactions },
	{ KAAS_API_LIST_TRANSACTIONS, NULL, kaas_api_list_transactions },
	{ KAAS_API_WRITE_TXN_MARKERS, NULL, kaas_api_write_txn_markers },
	/* issue 15: admin APIs */
	{ KAAS_API_DESCRIBE_CLUSTER, NULL, kaas_api_describe_cluster },
	{ KAAS_API_DESCRIBE_LOG_DIRS, NULL, kaas_api_describe_log_dirs },
	{ KAAS_API_DELETE_RECORDS, NULL, kaas_api_delete_records },
	{ KAAS_API_OFFSET_FOR_LEADER_EPOCH, NULL, kaas_api_offset_for_leader_epoch },
	{ KAAS_API_DESCRIBE_PRODUCERS, NULL, kaas_api_describe_producers },
	{ KAAS_API_DESCRIBE_TOPIC_PARTITIONS, NULL, kaas_api_describe_topic_partitions },
	{ KAAS_API_SASL_HANDSHAKE, NULL, kaas_api_sasl_handshake },
	{ KAAS_API_SASL_AUTHENTICATE, NULL, kaas_api_sasl_authenticate },
	{ KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS, NULL, kaas_api_describe_user_scram_credentials },
	{ KAAS_API_ALTER_USER_SCRAM_CREDENTIALS, NULL, kaas_api_alter_user_scram_credentials },
	{ KAAS_API_DESCRIBE_ACLS, NULL, kaas_api_describe_acls },
	{ KAAS_API_CREATE_ACLS, NULL, kaas_api_create_acls },
	{ KAAS_API_DELETE_ACLS, NULL, kaas_api_delete_acls },
	{ KAAS_API_DESCRIBE_CLIENT_QUOTAS, NULL, kaas_api_describe_client_quotas },
	{ KAAS_API_ALTER_CLIENT_QUOTAS, NULL, kaas_api_alter_client_quotas },
	{ -1, NULL, NULL },
};

static const struct api_entry *find_handler(int16_t key)
{
	for (const struct api_entry *e = handlers; e->key >= 0; e++)
		if (e->key == key)
			return e;
	return NULL;
}

/* ------------------------------------------------------ the work pool */

/* One job on libuv's work queue. */
struct pool_job {
	uv_work_t w;
	struct kaas_server *s;
	kaas_pool_work_fn work;
	kaas_pool_done_fn done;
	void *arg;
};

static void pool_job_work(uv_work_t *w)
{
	static _Thread_local bool named;
	if (!named) { /* libuv's threads: named at their first job */
		kaas_thread_name("kaas-pool");
		named = true;
	}
	struct pool_job *j = w->data;
	j->work(j->arg);
}

static void pool_job_done(uv_work_t *w, int status)
{
	struct pool_job *j = w->data;
	assert(j->s->pool_jobs > 0);
	j->s->pool_jobs--;
	kaas_pool_done_fn done = j->done;
	void *arg = j->arg;
	free(j);
	if (done)
		done(arg, status);
}

int kaas_pool_queue(struct kaas_broker *b, kaas_pool_work_fn work, kaas_pool_done_fn done,
		    void *arg)
{
	struct kaas_server *s = b->server;
	assert(s && work);
	struct pool_job *j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->w.data = j;
	j->s = s;
	j->work = work;
	j->done = done;
	j->arg = arg;
	s->pool_jobs++;
	int rc = uv_queue_work(s->loop, &j->w, pool_job_work, pool_job_done);
	if (rc < 0) {
		s->pool_jobs--;
		free(j);
		return rc;
	}
	return 0;
}

/* --------------------------------------------------------- dispatch */

static void pool_work(void *arg)
{
	struct kaas_req *req = arg;
	const struct api_entry *e = find_handler(req->hdr.api_key);
	req->status = e->pool(req);
}

static void pool_done(void *arg, int status)
{
	struct kaas_req *req = arg;
	kaas_req_finish(req, status < 0 ? KAAS_REQ_CLOSE : req->status);
}

void kaas_server_dispatch(struct kaas_conn *c, struct kaas_req *req)
{
	req->start_ns = kaas_metrics_enabled() ? kaas_metrics_now_ns() : 0;
	if (kaas_conn_raw_next(c)) {
		/* After SaslHandshake v0 the client sends its tokens bare (the
		 * v0 framing of Kafka's SASL; kafka-python uses it). */
		req->raw = 1;
		req->hdr.api_key = KAAS_API_SASL_AUTHENTICATE;
		c->sasl_req = req;
		if (kaas_pool_queue(req->broker, pool_work, pool_done, req) < 0)
			kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	int rc = kaas_req_header_parse(&req->r, &req->hdr);
	if (rc < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	const struct api_entry *e = find_handler(req->hdr.api_key);
	if (!e) {
		if (kaas_ratelog_ok(&c->s->rl_request, "refused request warnings"))
			kaas_warn("connection %s: unknown API key %d", c->peer, req->hdr.api_key);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (!kaas_api_answered(req->hdr.api_key, req->hdr.api_version)) {
		if (kaas_ratelog_ok(&c->s->rl_request, "refused request warnings"))
			kaas_warn("connection %s: unsupported version %d of API %d", c->peer,
				  req->hdr.api_version, req->hdr.api_key);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (!kaas_security_admit(&c->sec, req)) {
		if (kaas_conn_sasl_listener(&c->sec)) {
			/* Unauthenticated peers must not flood the log. */
			kaas_sasl_log_refused(c->peer, req->hdr.api_key,
					      __atomic_load_n(&c->sec.authenticated, __ATOMIC_ACQUIRE));
			kaas_conn_close(c, NULL);
		} else {
			if (kaas_ratelog_ok(&c->s->rl_request, "refused request warnings")) {
				char p[4 * KAAS_PRINCIPAL_MAX];
				kaas_sasl_escape(c->sec.principal, p, sizeof(p));
				kaas_warn("connection %s: %s may not send API %d", c->peer, p,
					  req->hdr.api_key);
			}
		}
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (!kaas_authz_admit(req)) { /* an API missing from kafka/authz.c */
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (req->hdr.api_key == KAAS_API_SASL_HANDSHAKE)
		c->sasl_v0 = req->hdr.api_version == 0;
	if (req->hdr.api_key == KAAS_API_SASL_HANDSHAKE ||
	    req->hdr.api_key == KAAS_API_SASL_AUTHENTICATE)
		c->sasl_req = req; /* no frame is read until it finishes (conn.c) */
	if (e->loop) {
		e->loop(req);
		return;
	}
	if (kaas_pool_queue(req->broker, pool_work, pool_done, req) < 0)
		kaas_req_finish(req, KAAS_REQ_CLOSE);
}

