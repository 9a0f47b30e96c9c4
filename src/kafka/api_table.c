/*
 * api_table.c — the one table of the APIs kaas serves and their versions.
 *
 * Everything that depends on a version range reads it from here: the
 * request header parser (which versions are flexible), the dispatcher
 * (which versions are answered), ApiVersions (what is advertised) and
 * `kaasd --api-versions` (the README's list, checked by
 * tests/kafka/api_versions_readme.sh).  Raising an API's max here is the
 * last step of teaching its handler the new versions.
 */
#include "kafka/protocol.h"

#include <stddef.h>
#include <stdio.h>

#include "util/logger.h"

#define NONE INT16_MAX /* no flexible version */

const struct kaas_api_range kaas_api_table[] = {
	/* key                         oldest min max flex  name */
	{ KAAS_API_PRODUCE,              0, 3, 11, 9, "Produce" },
	{ KAAS_API_FETCH,                0, 4, 12, 12, "Fetch" },
	{ KAAS_API_LIST_OFFSETS,         0, 0, 9, 6, "ListOffsets" },
	{ KAAS_API_METADATA,             0, 0, 12, 9, "Metadata" },
	{ KAAS_API_OFFSET_COMMIT,        0, 0, 8, 8, "OffsetCommit" },
	{ KAAS_API_OFFSET_FETCH,         0, 0, 8, 6, "OffsetFetch" },
	{ KAAS_API_FIND_COORDINATOR,     0, 0, 5, 3, "FindCoordinator" },
	{ KAAS_API_JOIN_GROUP,           0, 0, 9, 6, "JoinGroup" },
	{ KAAS_API_HEARTBEAT,            0, 0, 4, 4, "Heartbeat" },
	{ KAAS_API_LEAVE_GROUP,          0, 0, 5, 4, "LeaveGroup" },
	{ KAAS_API_SYNC_GROUP,           0, 0, 5, 4, "SyncGroup" },
	{ KAAS_API_DESCRIBE_GROUPS,      0, 0, 5, 5, "DescribeGroups" },
	{ KAAS_API_LIST_GROUPS,          0, 0, 5, 3, "ListGroups" },
	{ KAAS_API_SASL_HANDSHAKE,       0, 0, 1, NONE, "SaslHandshake" },
	{ KAAS_API_API_VERSIONS,         0, 0, 4, 3, "ApiVersions" },
	{ KAAS_API_CREATE_TOPICS,        0, 0, 6, 5, "CreateTopics" },
	{ KAAS_API_DELETE_TOPICS,        0, 0, 5, 4, "DeleteTopics" },
	{ KAAS_API_INIT_PRODUCER_ID,     0, 0, 4, 2, "InitProducerId" },
	{ KAAS_API_DESCRIBE_CONFIGS,     0, 0, 4, 4, "DescribeConfigs" },
	{ KAAS_API_ALTER_CONFIGS,        0, 0, 2, 2, "AlterConfigs" },
	{ KAAS_API_SASL_AUTHENTICATE,    0, 0, 2, 2, "SaslAuthenticate" },
	{ KAAS_API_CREATE_PARTITIONS,    0, 0, 3, 2, "CreatePartitions" },
	{ KAAS_API_DELETE_GROUPS,        0, 0, 2, 2, "DeleteGroups" },
	{ KAAS_API_INCREMENTAL_ALTER_CONFIGS, 0, 0, 1, 1, "IncrementalAlterConfigs" },
	{ KAAS_API_OFFSET_DELETE,        0, 0, 0, NONE, "OffsetDelete" },
	/* transactions (txn-coord) */
	{ KAAS_API_ADD_PARTITIONS_TO_TXN, 0, 0, 3, 3, "AddPartitionsToTxn" },
	{ KAAS_API_ADD_OFFSETS_TO_TXN,   0, 0, 3, 3, "AddOffsetsToTxn" },
	{ KAAS_API_END_TXN,              0, 0, 3, 3, "EndTxn" },
	{ KAAS_API_TXN_OFFSET_COMMIT,    0, 0, 3, 3, "TxnOffsetCommit" },
	{ KAAS_API_DESCRIBE_TRANSACTIONS, 0, 0, 0, 0, "DescribeTransactions" },
	{ KAAS_API_LIST_TRANSACTIONS,    0, 0, 0, 0, "ListTransactions" },
	{ KAAS_API_WRITE_TXN_MARKERS,    0, 0, 1, 1, "WriteTxnMarkers" },
	/* issue 15: admin APIs (api_cluster.c, api_partition_admin.c) */
	{ KAAS_API_DELETE_RECORDS,       0, 0, 2, 2, "DeleteRecords" },
	{ KAAS_API_OFFSET_FOR_LEADER_EPOCH, 0, 0, 4, 4, "OffsetForLeaderEpoch" },
	{ KAAS_API_DESCRIBE_LOG_DIRS,    0, 0, 4, 2, "DescribeLogDirs" },
	{ KAAS_API_DESCRIBE_CLUSTER,     0, 0, 1, 0, "DescribeCluster" },
	{ KAAS_API_DESCRIBE_PRODUCERS,   0, 0, 0, 0, "DescribeProducers" },
	{ KAAS_API_DESCRIBE_TOPIC_PARTITIONS, 0, 0, 0, 0, "DescribeTopicPartitions" },
	{ KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0, 0, 0, "DescribeUserScramCredentials" },
	{ KAAS_API_ALTER_USER_SCRAM_CREDENTIALS, 0, 0, 0, 0, "AlterUserScramCredentials" },
	{ KAAS_API_DESCRIBE_ACLS,        0, 0, 3, 2, "DescribeAcls" },
	{ KAAS_API_CREATE_ACLS,          0, 0, 3, 2, "CreateAcls" },
	{ KAAS_API_DELETE_ACLS,          0, 0, 3, 2, "DeleteAcls" },
	{ KAAS_API_DESCRIBE_CLIENT_QUOTAS, 0, 0, 1, 1, "DescribeClientQuotas" },
	{ KAAS_API_ALTER_CLIENT_QUOTAS,  0, 0, 1, 1, "AlterClientQuotas" },
	{ -1, 0, 0, 0, 0, NULL },
};

const struct kaas_api_range *kaas_api_find(int16_t key)
{
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++)
		if (a->key == key)
			return a;
	return NULL;
}

int kaas_api_supported(int16_t key, int16_t version)
{
	const struct kaas_api_range *a = kaas_api_find(key);
	return a && version >= a->min && version <= a->max;
}

int kaas_api_answered(int16_t key, int16_t version)
{
	const struct kaas_api_range *a = kaas_api_find(key);
	if (!a)
		return 0;
	return key == KAAS_API_API_VERSIONS || (version >= a->oldest && version <= a->max);
}

int kaas_api_flexible(int16_t key, int16_t version)
{
	const struct kaas_api_range *a = kaas_api_find(key);
	return a && version >= a->flex_from && version <= a->max;
}

int kaas_api_refused(int16_t key, int16_t version, const char *peer)
{
	const struct kaas_api_range *a = kaas_api_find(key);
	if (!a || version < a->oldest || version >= a->min)
		return 0;
	kaas_warn("connection %s: %s v%d refused UNSUPPORTED_VERSION: kaas serves %s v%d and "
		  "later (RecordBatch v2, Kafka 0.11+)", peer, a->name, version, a->name, a->min);
	return 1;
}

void kaas_api_table_print(FILE *out)
{
	fprintf(out, "| API | key | versions | flexible from | refused (UNSUPPORTED_VERSION) |\n");
	fprintf(out, "|---|---|---|---|---|\n");
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++) {
		fprintf(out, "| %s | %d | %d-%d | ", a->name, a->key, a->min, a->max);
		if (a->flex_from <= a->max)
			fprintf(out, "v%d |", a->flex_from);
		else
			fprintf(out, "- |");
		if (a->oldest < a->min)
			fprintf(out, " %d-%d |\n", a->oldest, a->min - 1);
		else
			fprintf(out, " - |\n");
	}
}
