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
 *   another status                 UNKNOWN_SERVER_ERROR
 */
#ifndef KAAS_KAFKA_STATUS_MAP_H
#define KAAS_KAFKA_STATUS_MAP_H

#include <stdint.h>

/* The Kafka error code for rc: NONE (0) for rc >= 0, the code above for a
 * kaas status, `otherwise` for a -errno. */
int16_t kaas_kafka_error(int rc, int16_t otherwise);

#endif
