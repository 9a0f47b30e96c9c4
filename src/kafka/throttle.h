/*
 * throttle.h — a request's throttle time under the client quotas
 * (broker/quotas.h; Kafka's KIP-13 and KIP-219).
 *
 * A handler that answers with throttle_time_ms records what its request
 * costs against the quota that applies to its connection's user (the
 * principal's name, "ANONYMOUS" before authentication) and its client id
 * (the header's; "" when null), and writes the throttle time returned.
 * The time is also kept in req->throttle_ms: once the response is sent at
 * once, the server stops reading the connection for that long (KIP-219:
 * the client is told, and a client that does not wait is made to).
 */
#ifndef KAAS_KAFKA_THROTTLE_H
#define KAAS_KAFKA_THROTTLE_H

#include <stdint.h>

#include "kafka/request.h"

/* Record value (bytes) against quota key (enum kaas_quota_key) for req's
 * (user, client id); the throttle time in ms (0: none), also raised into
 * req->throttle_ms.  No quotas (req->broker NULL or without them): 0. */
int32_t kaas_req_throttle(struct kaas_req *req, int key, double value);

#endif
