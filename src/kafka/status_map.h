/*
 * status_map.h — the one place where kaas statuses (util/status.h) become
 * Kafka error codes (kafka/protocol.h).
 *
 * The broker's services answer in kaas statuses and -errno; the API
 * handlers of src/kafka turn them into the error codes they put on the
 * wire with kaas_kafka_error.  A -errno says what the volume or the
 * process said, and what that means to a client depends on the operation,
 * so the handler names it (`otherwise`); a status means the same
 * everywhere:
 *   KAAS_EFENCED, KAAS_ENOTLEADER  NOT_LEADER_OR_FOLLOWER
 *   KAAS_EOFFLINE                  LEADER_NOT_AVAILABLE
 *   KAAS_ESEQDUP                   DUPLICATE_SEQUENCE_NUMBER
 *   KAAS_ESEQORDER                 OUT_OF_ORDER_SEQUENCE_NUMBER
 *   KAAS_ESEQGAP                   NOT_ENOUGH_REPLICAS (see broker/idempotence.h:
 *                                  "not written, retry", which librdkafka
 *                                  does without renumbering)
 *   KAAS_EPRODFENCED               INVALID_PRODUCER_EPOCH
 *   KAAS_EPRODUNKNOWN              UNKNOWN_PRODUCER_ID
 *   KAAS_EBADBATCH                 INVALID_RECORD
 *   KAAS_EINDOUBT                  REQUEST_TIMED_OUT ("possibly persisted":
 *                                  retry the same batch)
 *   KAAS_EEXISTS                   TOPIC_ALREADY_EXISTS
 *   KAAS_EUNKNOWN, _EUNKNOWN_PARTITION  UNKNOWN_TOPIC_OR_PARTITION
 *   KAAS_EINVALNAME                INVALID_TOPIC_EXCEPTION
 *   KAAS_EINVALCOUNT               INVALID_PARTITIONS
 *   KAAS_ECONTENDED                REQUEST_TIMED_OUT (retry)
 *   KAAS_ENOT_COORDINATOR          NOT_COORDINATOR
 *   KAAS_ENO_COORDINATOR           COORDINATOR_NOT_AVAILABLE
 *   KAAS_EUNKNOWN_MEMBER           UNKNOWN_MEMBER_ID
 *   KAAS_EILLEGAL_GENERATION       ILLEGAL_GENERATION
 *   KAAS_EREBALANCING              REBALANCE_IN_PROGRESS
 *   KAAS_EFENCED_INSTANCE          FENCED_INSTANCE_ID
 *   KAAS_EMEMBER_ID_REQUIRED       MEMBER_ID_REQUIRED
 *   KAAS_EPROTOCOL_MISMATCH        INCONSISTENT_GROUP_PROTOCOL
 *   KAAS_ETXN_CONCURRENT           CONCURRENT_TRANSACTIONS
 *   KAAS_ETXN_STATE                INVALID_TXN_STATE
 *   KAAS_ETXN_PID_MAPPING          INVALID_PRODUCER_ID_MAPPING
 *   KAAS_ETXN_TIMEOUT              INVALID_TRANSACTION_TIMEOUT
 *   KAAS_ETXN_FENCED               PRODUCER_FENCED (handlers of versions
 *                                  before KIP-588: INVALID_PRODUCER_EPOCH)
 *   KAAS_EUNSTABLE_OFFSET          UNSTABLE_OFFSET_COMMIT
 *   KAAS_ETXN_UNKNOWN              TRANSACTIONAL_ID_NOT_FOUND
 *   another status                 UNKNOWN_SERVER_ERROR
 * One context overrides: topic administration (api_admin.c) answers a fence
 * or an offline topic with KAFKA_STORAGE_ERROR (the volume refused it).
 */
#ifndef KAAS_KAFKA_STATUS_MAP_H
#define KAAS_KAFKA_STATUS_MAP_H

#include <stdint.h>

/* The Kafka error code for rc: NONE (0) for rc >= 0, the code above for a
 * kaas status, `otherwise` for a -errno. */
int16_t kaas_kafka_error(int rc, int16_t otherwise);

#endif
