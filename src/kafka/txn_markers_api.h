/*
 * txn_markers_api.h — WriteTxnMarkers (api_write_txn_markers.c), the admin
 * clients' abort of a hanging transaction (KIP-664).
 */
#ifndef KAAS_KAFKA_TXN_MARKERS_API_H
#define KAAS_KAFKA_TXN_MARKERS_API_H

#include "kafka/request.h"

/* WriteTxnMarkers 0..1, on the work queue: each marker appended on the
 * partitions this broker leads, answered once durable (see the file). */
kaas_pool_fn kaas_api_write_txn_markers;

#endif
