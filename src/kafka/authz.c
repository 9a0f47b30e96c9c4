/* authz.c — the handlers' authorization checks (kafka/authz.h); the
 * per-API table is authz_table.c. */
#include "kafka/authz.h"

#include <stdio.h>
#include <string.h>

#include "broker/authorizer.h"
#include "broker/broker.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/security.h"
#include "util/logger.h"

static const char *principal_of(const struct kaas_req *req)
{
	const struct kaas_conn_security *sec = req->conn ? kaas_conn_security(req->conn) : NULL;
	return sec && sec->principal[0] ? sec->principal : KAAS_PRINCIPAL_ANONYMOUS;
}

/* The client's address without its port ("ip:port" -> "ip"). */
static void host_of(const struct kaas_req *req, char *buf, size_t size)
{
	const char *peer = req->conn ? kaas_conn_peer(req->conn) : "";
	snprintf(buf, size, "%s", peer);
	char *colon = strrchr(buf, ':');
	if (colon)
		*colon = '\0';
}

int kaas_authz_admit(struct kaas_req *req)
{
	if (kaas_authz_api_find(req->hdr.api_key) ||
	    kaas_req_allowed_cluster(req, KAAS_OP_CLUSTER_ACTION))
		return 1;
	kaas_warn("API %d has no entry in the authorization table (src/kafka/authz_table.c): "
		  "refused to %s (it needs CLUSTER_ACTION on the cluster until it has one)",
		  req->hdr.api_key, principal_of(req));
	return 0;
}

int kaas_req_allowed(struct kaas_req *req, int op, int type, const char *name, size_t len)
{
	struct kaas_authz *az = req->broker ? req->broker->authz : NULL;
	if (!kaas_authz_enabled(az))
		return 1;
	char host[64];
	host_of(req, host, sizeof host);
	const char *who = principal_of(req);
	int ok = kaas_authz_allowed(az, who, host, op, type, name, len);
	if (!ok)
		kaas_debug("authorizer: %s from %s may not %s %s %.*s (API %d)", who, host,
			   kaas_acl_op_name(op), kaas_acl_resource_name(type), (int)len, name,
			   req->hdr.api_key);
	return ok;
}

int32_t kaas_req_topic_ops(struct kaas_req *req, struct kaas_kslice name)
{
	static const int ops[] = { KAAS_OP_READ, KAAS_OP_WRITE, KAAS_OP_CREATE, KAAS_OP_DELETE,
				   KAAS_OP_ALTER, KAAS_OP_DESCRIBE, KAAS_OP_DESCRIBE_CONFIGS,
				   KAAS_OP_ALTER_CONFIGS };
	int32_t bits = 0;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (kaas_req_allowed_slice(req, ops[i], KAAS_RES_TOPIC, name))
			bits |= (int32_t)1 << ops[i];
	return bits;
}

int kaas_req_allowed_cluster(struct kaas_req *req, int op)
{
	return kaas_req_allowed(req, op, KAAS_RES_CLUSTER, KAAS_ACL_CLUSTER_NAME,
				strlen(KAAS_ACL_CLUSTER_NAME));
}

int kaas_req_may_create_topic(struct kaas_req *req, const char *name, size_t len)
{
	return kaas_req_allowed_cluster(req, KAAS_OP_CREATE) ||
	       kaas_req_allowed(req, KAAS_OP_CREATE, KAAS_RES_TOPIC, name, len);
}

int16_t kaas_req_init_pid_refused(struct kaas_req *req, struct kaas_kslice txn)
{
	if (txn.len >= 0)
		return kaas_req_allowed_slice(req, KAAS_OP_WRITE, KAAS_RES_TRANSACTIONAL_ID, txn)
			       ? 0 : KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
	struct kaas_authz *az = req->broker ? req->broker->authz : NULL;
	char host[64];
	host_of(req, host, sizeof host);
	if (kaas_req_allowed_cluster(req, KAAS_OP_IDEMPOTENT_WRITE) ||
	    kaas_authz_allowed_any(az, principal_of(req), host, KAAS_OP_WRITE, KAAS_RES_TOPIC))
		return 0;
	return KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
}
