/*
 * req_metrics.h — what Produce and Fetch responses tell the metrics
 * registry (util/metrics.h): per topic, the bytes and records produced and
 * fetched without error, and per request the first partition error (kept
 * in req->error_code for the request counter's `error` label, which the
 * server counts when the request finishes).
 */
#ifndef KAAS_KAFKA_REQ_METRICS_H
#define KAAS_KAFKA_REQ_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "kafka/request.h"

/* One partition of a response (loop thread): `produce` 1 for Produce, 0
 * for Fetch; topic is tlen bytes (not NUL-terminated); bytes may be < 0
 * (null records: nothing counted).  No-op while metrics are off. */
void kaas_req_metric_part(struct kaas_req *req, int produce, const uint8_t *topic, int32_t tlen,
			  int16_t err, int64_t bytes, uint64_t records);

/* Records in a record set of whole RecordBatch v2 batches (their
 * record-count fields summed; a truncated or foreign tail counts 0). */
uint64_t kaas_records_count(const uint8_t *p, int64_t len);

#endif
