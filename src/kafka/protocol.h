/*
 * protocol.h — Kafka API keys, error codes and the version ranges kaas
 * serves.  The numbers are the protocol's (see Apache Kafka's
 * clients/src/main/resources/common/message/ JSON files).
 */
#ifndef KAAS_KAFKA_PROTOCOL_H
#define KAAS_KAFKA_PROTOCOL_H

#include <stdint.h>
#include <stdio.h>

enum kaas_api_key {
	KAAS_API_PRODUCE = 0,
	KAAS_API_FETCH = 1,
	KAAS_API_LIST_OFFSETS = 2,
	KAAS_API_METADATA = 3,
	KAAS_API_OFFSET_COMMIT = 8,
	KAAS_API_OFFSET_FETCH = 9,
	KAAS_API_FIND_COORDINATOR = 10,
	KAAS_API_JOIN_GROUP = 11,
	KAAS_API_HEARTBEAT = 12,
	KAAS_API_LEAVE_GROUP = 13,
	KAAS_API_SYNC_GROUP = 14,
	KAAS_API_DESCRIBE_GROUPS = 15,
	KAAS_API_LIST_GROUPS = 16,
	KAAS_API_SASL_HANDSHAKE = 17,
	KAAS_API_API_VERSIONS = 18,
	KAAS_API_CREATE_TOPICS = 19,
	KAAS_API_DELETE_TOPICS = 20,
	KAAS_API_INIT_PRODUCER_ID = 22,
	KAAS_API_DESCRIBE_ACLS = 29,
	KAAS_API_CREATE_ACLS = 30,
	KAAS_API_DELETE_ACLS = 31,
	KAAS_API_DESCRIBE_CONFIGS = 32,
	KAAS_API_ALTER_CONFIGS = 33,
	KAAS_API_SASL_AUTHENTICATE = 36,
	KAAS_API_CREATE_PARTITIONS = 37,
	KAAS_API_DELETE_GROUPS = 42,
	KAAS_API_INCREMENTAL_ALTER_CONFIGS = 44,
	KAAS_API_OFFSET_DELETE = 47,
	/* transactions (txn-coord) */
	KAAS_API_ADD_PARTITIONS_TO_TXN = 24,
	KAAS_API_ADD_OFFSETS_TO_TXN = 25,
	KAAS_API_END_TXN = 26,
	KAAS_API_TXN_OFFSET_COMMIT = 28,
	KAAS_API_WRITE_TXN_MARKERS = 27,
	KAAS_API_DESCRIBE_TRANSACTIONS = 65,
	KAAS_API_LIST_TRANSACTIONS = 66,
	/* issue 15: admin APIs */
	KAAS_API_DELETE_RECORDS = 21,
	KAAS_API_OFFSET_FOR_LEADER_EPOCH = 23,
	KAAS_API_DESCRIBE_LOG_DIRS = 35,
	KAAS_API_DESCRIBE_CLUSTER = 60,
	KAAS_API_DESCRIBE_PRODUCERS = 61,
	KAAS_API_DESCRIBE_TOPIC_PARTITIONS = 75,
	KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS = 50,
	KAAS_API_ALTER_USER_SCRAM_CREDENTIALS = 51,
	/* client quotas (issue 35) */
	KAAS_API_DESCRIBE_CLIENT_QUOTAS = 48,
	KAAS_API_ALTER_CLIENT_QUOTAS = 49,
};

enum kaas_kerr {
	KAAS_KERR_UNKNOWN_SERVER_ERROR = -1,
	KAAS_KERR_NONE = 0,
	KAAS_KERR_OFFSET_OUT_OF_RANGE = 1,
	KAAS_KERR_CORRUPT_MESSAGE = 2,
	KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
	KAAS_KERR_LEADER_NOT_AVAILABLE = 5,
	KAAS_KERR_NOT_LEADER_OR_FOLLOWER = 6,
	KAAS_KERR_REQUEST_TIMED_OUT = 7,
	KAAS_KERR_MESSAGE_TOO_LARGE = 10,
	KAAS_KERR_OFFSET_METADATA_TOO_LARGE = 12,
	KAAS_KERR_COORDINATOR_LOAD_IN_PROGRESS = 14,
	KAAS_KERR_COORDINATOR_NOT_AVAILABLE = 15,
	KAAS_KERR_NOT_COORDINATOR = 16,
	KAAS_KERR_INVALID_TOPIC_EXCEPTION = 17,
	KAAS_KERR_RECORD_LIST_TOO_LARGE = 18,
	KAAS_KERR_NOT_ENOUGH_REPLICAS = 19,
	KAAS_KERR_INVALID_REQUIRED_ACKS = 21,
	KAAS_KERR_ILLEGAL_GENERATION = 22,
	KAAS_KERR_INCONSISTENT_GROUP_PROTOCOL = 23,
	KAAS_KERR_INVALID_GROUP_ID = 24,
	KAAS_KERR_UNKNOWN_MEMBER_ID = 25,
	KAAS_KERR_INVALID_SESSION_TIMEOUT = 26,
	KAAS_KERR_REBALANCE_IN_PROGRESS = 27,
	KAAS_KERR_UNSUPPORTED_SASL_MECHANISM = 33,
	KAAS_KERR_ILLEGAL_SASL_STATE = 34,
	KAAS_KERR_UNSUPPORTED_VERSION = 35,
	KAAS_KERR_TOPIC_ALREADY_EXISTS = 36,
	KAAS_KERR_INVALID_PARTITIONS = 37,
	KAAS_KERR_INVALID_REPLICATION_FACTOR = 38,
	KAAS_KERR_INVALID_CONFIG = 40,
	KAAS_KERR_INVALID_REQUEST = 42,
	KAAS_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
	KAAS_KERR_DUPLICATE_SEQUENCE_NUMBER = 46,
	KAAS_KERR_INVALID_PRODUCER_EPOCH = 47,
	KAAS_KERR_KAFKA_STORAGE_ERROR = 56,
	KAAS_KERR_SASL_AUTHENTICATION_FAILED = 58,
	KAAS_KERR_UNKNOWN_PRODUCER_ID = 59,
	KAAS_KERR_NON_EMPTY_GROUP = 68,
	KAAS_KERR_GROUP_ID_NOT_FOUND = 69,
	KAAS_KERR_FETCH_SESSION_ID_NOT_FOUND = 70, /* KIP-227 */
	KAAS_KERR_INVALID_FETCH_SESSION_EPOCH = 71,
	KAAS_KERR_UNSUPPORTED_COMPRESSION_TYPE = 76,
	KAAS_KERR_MEMBER_ID_REQUIRED = 79,
	KAAS_KERR_FENCED_INSTANCE_ID = 82,
	KAAS_KERR_GROUP_SUBSCRIBED_TO_TOPIC = 86,
	KAAS_KERR_INVALID_RECORD = 87,
	KAAS_KERR_RESOURCE_NOT_FOUND = 91,
	KAAS_KERR_DUPLICATE_RESOURCE = 92,
	KAAS_KERR_UNACCEPTABLE_CREDENTIAL = 93,
	KAAS_KERR_UNKNOWN_TOPIC_ID = 100,
	/* transactions (txn-coord) */
	KAAS_KERR_INVALID_TXN_STATE = 48,
	KAAS_KERR_INVALID_PRODUCER_ID_MAPPING = 49,
	KAAS_KERR_INVALID_TRANSACTION_TIMEOUT = 50,
	KAAS_KERR_CONCURRENT_TRANSACTIONS = 51,
	KAAS_KERR_OPERATION_NOT_ATTEMPTED = 55,
	KAAS_KERR_UNSTABLE_OFFSET_COMMIT = 88,
	KAAS_KERR_PRODUCER_FENCED = 90,
	KAAS_KERR_TRANSACTION_COORDINATOR_FENCED = 52,
	KAAS_KERR_TRANSACTIONAL_ID_NOT_FOUND = 105,
	/* issue 15: admin APIs */
	KAAS_KERR_FENCED_LEADER_EPOCH = 74,
	KAAS_KERR_UNKNOWN_LEADER_EPOCH = 75,
	KAAS_KERR_MISMATCHED_ENDPOINT_TYPE = 114,
	KAAS_KERR_UNSUPPORTED_ENDPOINT_TYPE = 115,
};

/* One served API: its key and the version range kaas answers
 * (src/kafka/api_table.c). */
struct kaas_api_range {
	int16_t key;
	int16_t oldest;         /* lowest version parsed: [oldest, min) is answered
				 * UNSUPPORTED_VERSION by the handler (Produce < 3,
				 * Fetch < 4: the pre-0.11 message formats) */
	int16_t min;            /* lowest version served (and advertised) */
	int16_t max;            /* highest version served (and advertised) */
	int16_t flex_from;      /* first flexible version (header v2), or INT16_MAX */
	const char *name;       /* Kafka's name of the API */
};

/* The table of APIs kaas advertises (terminated by key -1). */
extern const struct kaas_api_range kaas_api_table[];
/* The entry for `key`, or NULL if kaas does not serve it. */
const struct kaas_api_range *kaas_api_find(int16_t key);
/* Is (key, version) served: min <= version <= max? */
int kaas_api_supported(int16_t key, int16_t version);
/* Does a handler answer (key, version): served, refused with
 * UNSUPPORTED_VERSION in its own format ([oldest, min)), or ApiVersions
 * (every version: KIP-511)?  Anything else closes the connection, as Apache
 * Kafka does for a version it cannot parse. */
int kaas_api_answered(int16_t key, int16_t version);
/* Is (key, version) a served flexible version (compact encodings, tagged
 * fields, request header v2)? */
int kaas_api_flexible(int16_t key, int16_t version);

/* Is version one that key's handler answers UNSUPPORTED_VERSION on every
 * partition ([oldest, min): Produce < 3, Fetch < 4)?  Then 1, and it is
 * logged with the minimum (those versions have no error message field);
 * peer names the connection.  Else 0. */
int kaas_api_refused(int16_t key, int16_t version, const char *peer);
/* Print the table as the README's Markdown table (kaasd --api-versions). */
void kaas_api_table_print(FILE *out);

#endif
