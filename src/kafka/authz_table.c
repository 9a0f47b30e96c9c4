/* authz_table.c — the per-API authorization table (kafka/authz.h): the
 * one place an API kaasd serves says what it needs.  (Apart from authz.c
 * so that a program without the request seam can check the table.) */
#include "kafka/authz.h"

#include <stddef.h>

#include "kafka/protocol.h"

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
	{ KAAS_API_SASL_HANDSHAKE, KAAS_AUTHZ_NONE, "nothing" },
	{ KAAS_API_SASL_AUTHENTICATE, KAAS_AUTHZ_NONE, "nothing" },
	/* Transactions (issue 16). */
	{ KAAS_API_ADD_PARTITIONS_TO_TXN, H, "WRITE transactional id, WRITE topic "
					     "(TOPIC_AUTHORIZATION_FAILED, others "
					     "OPERATION_NOT_ATTEMPTED)" },
	{ KAAS_API_ADD_OFFSETS_TO_TXN, H, "WRITE transactional id, READ group" },
	{ KAAS_API_END_TXN, H, "WRITE transactional id" },
	{ KAAS_API_TXN_OFFSET_COMMIT, H, "WRITE transactional id, READ group, READ topic" },
	{ KAAS_API_DESCRIBE_TRANSACTIONS, H, "DESCRIBE transactional id" },
	{ KAAS_API_LIST_TRANSACTIONS, H, "the transactional ids it may DESCRIBE" },
	{ KAAS_API_WRITE_TXN_MARKERS, H, "CLUSTER_ACTION cluster (CLUSTER_AUTHORIZATION_FAILED "
					 "per partition)" },
	/* The admin APIs of issue 15. */
	{ KAAS_API_DELETE_RECORDS, H, "DELETE topic (TOPIC_AUTHORIZATION_FAILED per partition)" },
	{ KAAS_API_OFFSET_FOR_LEADER_EPOCH, H, "DESCRIBE topic" },
	{ KAAS_API_DESCRIBE_LOG_DIRS, H, "DESCRIBE cluster" },
	{ KAAS_API_DESCRIBE_CLUSTER, KAAS_AUTHZ_NONE, "nothing (as Kafka)" },
	{ KAAS_API_DESCRIBE_PRODUCERS, H, "READ topic" },
	{ KAAS_API_DESCRIBE_TOPIC_PARTITIONS, H, "DESCRIBE topic (hidden when listing all)" },
	/* SCRAM credentials (issue 17). */
	{ KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS, H, "DESCRIBE cluster" },
	{ KAAS_API_ALTER_USER_SCRAM_CREDENTIALS, H, "ALTER cluster" },
	/* Client quotas (issue 35). */
	{ KAAS_API_DESCRIBE_CLIENT_QUOTAS, H, "DESCRIBE_CONFIGS cluster" },
	{ KAAS_API_ALTER_CLIENT_QUOTAS, H, "ALTER_CONFIGS cluster (CLUSTER_AUTHORIZATION_FAILED "
					   "per entry)" },
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

