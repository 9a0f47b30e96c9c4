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

/* Take value back out of the rate (a Fetch answered empty because it was
 * throttled, as Kafka). */
void kaas_req_unrecord(struct kaas_req *req, int key, double value);

/* The most one response may hold under req's quota of key (the quota x
 * the window less one sample), or 0 when none applies: Kafka bounds a
 * Fetch's max_bytes by it. */
double kaas_req_quota_window_max(struct kaas_req *req, int key);

#endif
