/*
 * protocol.h — Kafka API keys, error codes and the version ranges kaas
 * serves.  The numbers are the protocol's (see Apache Kafka's
 * clients/src/main/resources/common/message/ JSON files).
 */
#ifndef KAAS_KAFKA_PROTOCOL_H
#define KAAS_KAFKA_PROTOCOL_H

#include <stdint.h>

enum kaas_api_key {
	KAAS_API_PRODUCE = 0,
	KAAS_API_FETCH = 1,
	KAAS_API_LIST_OFFSETS = 2,
	KAAS_API_METADATA = 3,
	KAAS_API_FIND_COORDINATOR = 10,
	KAAS_API_API_VERSIONS = 18,
	KAAS_API_CREATE_TOPICS = 19,
	KAAS_API_DELETE_TOPICS = 20,
	KAAS_API_DESCRIBE_CONFIGS = 32,
	KAAS_API_CREATE_PARTITIONS = 37,
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
	KAAS_KERR_COORDINATOR_NOT_AVAILABLE = 15,
	KAAS_KERR_INVALID_TOPIC_EXCEPTION = 17,
	KAAS_KERR_RECORD_LIST_TOO_LARGE = 18,
	KAAS_KERR_INVALID_REQUIRED_ACKS = 21,
	KAAS_KERR_UNSUPPORTED_VERSION = 35,
	KAAS_KERR_TOPIC_ALREADY_EXISTS = 36,
	KAAS_KERR_INVALID_PARTITIONS = 37,
	KAAS_KERR_INVALID_REPLICATION_FACTOR = 38,
	KAAS_KERR_INVALID_CONFIG = 40,
	KAAS_KERR_INVALID_REQUEST = 42,
	KAAS_KERR_KAFKA_STORAGE_ERROR = 56,
	KAAS_KERR_UNSUPPORTED_COMPRESSION_TYPE = 76,
	KAAS_KERR_INVALID_RECORD = 87,
};

/* One served API: its key and the version range kaas answers. */
struct kaas_api_range {
	int16_t key;
	int16_t min;
	int16_t max;
	int16_t flex_from;      /* first flexible version (header v2), or INT16_MAX */
};

/* The table of APIs kaas advertises (terminated by key -1). */
extern const struct kaas_api_range kaas_api_table[];
/* The entry for `key`, or NULL if kaas does not serve it. */
const struct kaas_api_range *kaas_api_find(int16_t key);

#endif
