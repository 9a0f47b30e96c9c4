/*
 * txn_wire.h — what the transaction handlers (api_txn*.c) share.
 */
#ifndef KAAS_KAFKA_TXN_WIRE_H
#define KAAS_KAFKA_TXN_WIRE_H

#include <stdint.h>

#include "kafka/codec.h"

/* The Kafka error of a transaction coordinator status rc (0: NONE; a
 * -errno: COORDINATOR_NOT_AVAILABLE), with PRODUCER_FENCED answered
 * INVALID_PRODUCER_EPOCH to versions below fenced_from (KIP-588). */
int16_t kaas_txn_kerr(int rc, int16_t version, int16_t fenced_from);

/* A transactional id as a C string: NULL when it is null, empty or holds a
 * NUL byte (INVALID_REQUEST), or out of memory. */
char *kaas_txn_id_dup(struct kaas_kslice id);

#endif
