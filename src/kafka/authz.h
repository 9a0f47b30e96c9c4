/*
 * authz.h — authorization as the API handlers ask for it (issue 17).
 *
 * The table in authz_table.c is the one place that says, for every API kaasd
 * serves, what it needs (resource type and operation, as Kafka defines
 * them) and that its handler checks it before it touches anything.  An
 * API without an entry fails closed: kaas_authz_admit lets it through only
 * to a principal allowed CLUSTER_ACTION on the cluster (super users; with
 * no cluster binding, allow.everyone.if.no.acl.found decides), else the
 * connection is closed; tests/security/test_authz asserts every served API
 * has an entry.  Adding an API: give it an entry here, and in its handler call
 * kaas_req_allowed for each resource before using it, answering Kafka's
 * error (TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
#ifndef KAAS_KAFKA_AUTHZ_H
#define KAAS_KAFKA_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/acl_store.h"
#include "kafka/codec.h"

struct kaas_req;

#define KAAS_KERR_TOPIC_AUTHORIZATION_FAILED 29
#define KAAS_KERR_GROUP_AUTHORIZATION_FAILED 30
#define KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED 31
#define KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED 53
#define KAAS_KERR_SECURITY_DISABLED 54

/* How an API is authorized. */
enum kaas_authz_kind {
	KAAS_AUTHZ_NONE,     /* needs nothing (ApiVersions, the SASL exchange) */
	KAAS_AUTHZ_HANDLER,  /* its handler checks `needs` per resource */
};

struct kaas_authz_api {
	int16_t key;
	enum kaas_authz_kind kind;
	const char *needs;   /* what it checks, as documentation */
};

/* The table (terminated by key -1) and its entry for key (NULL: none). */
extern const struct kaas_authz_api kaas_authz_table[];
const struct kaas_authz_api *kaas_authz_api_find(int16_t key);

/* May the request go to its handler?  1 yes (the API has an entry, or the
 * principal may CLUSTER_ACTION the cluster: see above), 0 no (logged). */
int kaas_authz_admit(struct kaas_req *req);

/* May the request's principal, from its host, do op on (type, name)?
 * 1 or 0 (refusals logged at debug).  No broker authorizer: 1. */
int kaas_req_allowed(struct kaas_req *req, int op, int type, const char *name, size_t len);
static inline int kaas_req_allowed_slice(struct kaas_req *req, int op, int type,
					 struct kaas_kslice s)
{
	return kaas_req_allowed(req, op, type, s.len > 0 ? (const char *)s.p : "",
				s.len > 0 ? (size_t)s.len : 0);
}

/* The operations the request's principal may do on the topic, as Kafka's
 * authorized-operations bit field (bit n: operation code n): READ, WRITE,
 * CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS, each
 * asked of the authorizer (implied ones included); every one of them with
 * no authorizer (3576, as Kafka answers then). */
int32_t kaas_req_topic_ops(struct kaas_req *req, struct kaas_kslice name);
/* op on the cluster resource. */
int kaas_req_allowed_cluster(struct kaas_req *req, int op);
/* CreateTopics and auto-creation: CREATE on the cluster or on the topic. */
int kaas_req_may_create_topic(struct kaas_req *req, const char *name, size_t len);

/* InitProducerId: WRITE on the transactional id (txn.len >= 0), else
 * IDEMPOTENT_WRITE on the cluster or WRITE on some topic.  0 or the error
 * (TRANSACTIONAL_ID_ / CLUSTER_AUTHORIZATION_FAILED). */
int16_t kaas_req_init_pid_refused(struct kaas_req *req, struct kaas_kslice txn);

#endif
