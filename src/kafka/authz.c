/* authz.c — the per-API authorization table and the handlers' checks
 * (kafka/authz.h). */
#include "kafka/authz.h"

#include <stdio.h>
#include <string.h>

#include "broker/authorizer.h"
#include "broker/broker.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/security.h"
#include "util/logger.h"

#define H KAAS_AUTHZ_HANDLER

/* Every API kaasd serves and what Kafka requires for it (the checks are
 * in the handlers named; the error is the one Kafka answers). */
const struct kaas_authz_api kaas_authz_table[] = {
	{ KAAS_API_PRODUCE, H, "WRITE topic (TOPIC_AUTHORIZATION_FAILED per partition); "
			       "transactional: WRITE transactional id" },
	{ KAAS_API_FETCH, H, "READ topic (TOPIC_AUTHORIZATION_FAILED per partition)" },
	{ KAAS_API_LIST_OFFSETS, H, "DESCRIBE topic" },
	{ KAAS_API_METADATA, H, "DESCRIBE topic (hidden when listing all); auto-create: "
				"CREATE cluster or topic" },
	{ KAAS_API_OFFSET_COMMIT, H, "READ group, READ topic" },
	{ KAAS_API_OFFSET_FETCH, H, "DESCRIBE group, DESCRIBE topic" },
	{ KAAS_API_FIND_COORDINATOR, H, "DESCRIBE group / DESCRIBE transactional id" },
	{ KAAS_API_JOIN_GROUP, H, "READ group" },
	{ KAAS_API_HEARTBEAT, H, "READ group" },
	{ KAAS_API_LEAVE_GROUP, H, "READ group" },
	{ KAAS_API_SYNC_GROUP, H, "READ group" },
	{ KAAS_API_DESCRIBE_GROUPS, H, "DESCRIBE group" },
	{ KAAS_API_LIST_GROUPS, H, "DESCRIBE cluster, else the groups it may DESCRIBE" },
	{ KAAS_API_API_VERSIONS, KAAS_AUTHZ_NONE, "nothing" },
	{ KAAS_API_CREATE_TOPICS, H, "CREATE cluster or topic" },
	{ KAAS_API_DELETE_TOPICS, H, "DELETE topic" },
	{ KAAS_API_INIT_PRODUCER_ID, H, "WRITE transactional id; idempotent: IDEMPOTENT_WRITE "
					"cluster or WRITE on some topic" },
	{ KAAS_API_DESCRIBE_CONFIGS, H, "DESCRIBE_CONFIGS topic / cluster" },
	{ KAAS_API_ALTER_CONFIGS, H, "ALTER_CONFIGS topic / cluster" },
	{ KAAS_API_CREATE_PARTITIONS, H, "ALTER topic" },
	{ KAAS_API_DELETE_GROUPS, H, "DELETE group" },
	{ KAAS_API_INCREMENTAL_ALTER_CONFIGS, H, "ALTER_CONFIGS topic / cluster" },
	{ KAAS_API_OFFSET_DELETE, H, "DELETE group, READ topic" },
	{ KAAS_API_DESCRIBE_ACLS, H, "DESCRIBE cluster" },
	{ KAAS_API_CREATE_ACLS, H, "ALTER cluster" },
	{ KAAS_API_DELETE_ACLS, H, "ALTER cluster" },
	/* The SASL exchange (issue 17, authentication) needs no ACL. */
	{ 17 /* SaslHandshake */, KAAS_AUTHZ_NONE, "nothing" },
	{ 36 /* SaslAuthenticate */, KAAS_AUTHZ_NONE, "nothing" },
	/* To map at merge (Kafka's rule; the handler must check it first):
	 *   AddPartitionsToTxn 24: WRITE transactional id, WRITE topic
	 *   AddOffsetsToTxn 25: WRITE transactional id, READ group
	 *   EndTxn 26: WRITE transactional id
	 *   TxnOffsetCommit 28: WRITE transactional id, READ group, READ topic
	 *   DescribeTransactions 65 / ListTransactions 66: DESCRIBE transactional id
	 *   DeleteRecords 21: DELETE topic; OffsetForLeaderEpoch 23: DESCRIBE topic
	 *   DescribeLogDirs 35, DescribeCluster 60: DESCRIBE cluster
	 *   DescribeProducers 61: READ topic; DescribeTopicPartitions 75: DESCRIBE topic
	 *   DescribeUserScramCredentials 50: DESCRIBE cluster; Alter... 51: ALTER cluster */
	{ -1, KAAS_AUTHZ_NONE, NULL },
};

#undef H

const struct kaas_authz_api *kaas_authz_api_find(int16_t key)
{
	for (const struct kaas_authz_api *a = kaas_authz_table; a->key >= 0; a++)
		if (a->key == key)
			return a;
	return NULL;
}

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
	struct kaas_authz *az = req->broker ? req->broker->authz : NULL;
	if (!kaas_authz_enabled(az) || kaas_authz_api_find(req->hdr.api_key) ||
	    kaas_authz_super(az, principal_of(req)))
		return 1;
	kaas_warn("API %d has no entry in the authorization table (src/kafka/authz.c): "
		  "refused to %s", req->hdr.api_key, principal_of(req));
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
