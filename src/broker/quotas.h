/*
 * quotas.h — client quotas: the cache of the quotas stored on the cluster
 * volume (cluster/quota_store.h) and the rates measured against them
 * (issue 35; Kafka's KIP-13, KIP-124, KIP-219).
 *
 * Which quota applies.  For each key on its own, a request of user U
 * (its principal's name; ANONYMOUS on an unauthenticated listener) and
 * client id C takes the first quota found of, in Kafka's order:
 *
 *   1. user=U, client-id=C         5. user=<default>, client-id=<default>
 *   2. user=U, client-id=<default> 6. user=<default>
 *   3. user=U                      7. client-id=C
 *   4. user=<default>, client-id=C 8. client-id=<default>
 *
 * and none means unlimited.  The rate is shared by every connection whose
 * request matched an entity of the same shape: a quota on user=U (3)
 * holds all of U's clients together, one on user=<default> (6) holds each
 * user to it separately, one on client-id=<default> (8) each client id.
 *
 * How a rate is measured (Kafka's Rate over SampledStat): samples of
 * quota.window.size.seconds (default 1), quota.window.num of them
 * (default 11); a value is recorded into the current sample; the rate is
 * the sum of the live samples over the time they span, counted as at
 * least quota.window.num - 1 windows.  A record that takes the rate over
 * the quota is kept (the bytes did move) and answered with a throttle
 * time of (rate - quota) / quota x that span: the time it takes the rate
 * to fall back to the quota if nothing more is recorded.
 *
 * What is recorded: producer_byte_rate, a Produce request's size;
 * consumer_byte_rate, a Fetch response's size (its record bytes and
 * headers).  request_percentage and controller_mutation_rate are stored
 * and described (AlterClientQuotas, DescribeClientQuotas) but not yet
 * enforced (docs/BROKER.md).
 *
 * Following: a thread re-reads the whole quotas/ directory every
 * heartbeat interval (and the broker that altered quotas right after),
 * so a quota altered through any broker holds on every broker within a
 * heartbeat.  A refresh that fails keeps the last quotas (logged).
 *
 * Settings (Kafka's keys): quota.window.num (default 11, 2..100),
 * quota.window.size.seconds (default 1, 1..3600).
 *
 * Threads: kaas_quotas_record and the queries from any thread; the cache
 * under a rwlock (KAAS_RANK_QUOTA_CACHE), the rates under a mutex
 * (KAAS_RANK_QUOTA_RATES); neither is held across anything else, so the
 * loop thread takes them briefly and never waits on the volume.
 */
#ifndef KAAS_BROKER_QUOTAS_H
#define KAAS_BROKER_QUOTAS_H

#include <stddef.h>
#include <stdint.h>

#include "broker/config.h"
#include "cluster/quota_store.h"
#include "substrate/substrate.h"

struct kaas_quotas;

/* Is `key` a quota setting?  Apply it: 0 or -EINVAL (printed). */
int kaas_config_quota_key(const char *key);
int kaas_config_quota_apply(struct kaas_config *c, const char *key, const char *v);

/* Create over the cluster volume (cfg outlives it) and load the quotas
 * once: 0, or -errno (the directory could not be listed). */
int kaas_quotas_new(struct kaas_substrate *cluster, const struct kaas_config *cfg,
		    struct kaas_quotas **out);
/* Start the refresh thread (every cfg->heartbeat_ms): 0 or -errno. */
int kaas_quotas_start(struct kaas_quotas *q);
/* Stop the thread and free (NULL: no-op). */
void kaas_quotas_free(struct kaas_quotas *q);

/* Re-read the quotas now (any thread): 0 or -errno (the last kept). */
int kaas_quotas_refresh(struct kaas_quotas *q);

/* Is any quota of `key` in force (one atomic load: a request of a key
 * nobody limits costs nothing more)?  NULL q: 0. */
int kaas_quotas_any(struct kaas_quotas *q, int key);

/* The quota of `key` that applies to (user, client) (see the top): the
 * value, or 0 when none does.  NULL q: 0. */
double kaas_quotas_limit(struct kaas_quotas *q, int key, const char *user, const char *client);

/* Record `value` (bytes) against the quota of `key` that applies to (user,
 * client) at monotonic time now_ms, and return the throttle time in ms
 * (0 when no quota applies or the rate is within it; at most
 * quota.window.num x quota.window.size).  NULL q: 0. */
uint32_t kaas_quotas_record(struct kaas_quotas *q, int key, const char *user,
			    const char *client, double value, uint64_t now_ms);

/* Take value back out of the rate of `key` for (user, client) (Kafka's
 * unrecord: a Fetch answered empty because it was throttled costs
 * nothing).  NULL q, or no quota applies: nothing. */
void kaas_quotas_unrecord(struct kaas_quotas *q, int key, const char *user, const char *client,
			  double value, uint64_t now_ms);

/* The most one response may hold under the quota of `key` for (user,
 * client): the quota x (quota.window.num - 1) x quota.window.size (Kafka's
 * getMaxValueInQuotaWindow, which bounds a Fetch's max_bytes so that one
 * response always fits the window), or 0 when no quota applies. */
double kaas_quotas_window_max(struct kaas_quotas *q, int key, const char *user,
			      const char *client);

/* Call fn for every cached quota (under the cache's read lock: fn must
 * not call back into q).  Returns the count. */
size_t kaas_quotas_foreach(struct kaas_quotas *q,
			   void (*fn)(void *arg, const struct kaas_quota *qt), void *arg);

#endif
