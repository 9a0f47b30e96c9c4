/*
 * broker.h — one kaasd broker: configuration, volumes, topics, the
 * cluster agent, groups and producer ids.
 */
#ifndef KAAS_BROKER_BROKER_H
#define KAAS_BROKER_BROKER_H

#include <stdint.h>

#include <uv.h>

#include "broker/sweep.h"
#include "broker/config.h"
#include "broker/topics.h"
#include "broker/lanes.h"
#include "cluster/membership.h"
#include "substrate/substrate.h"

struct kaas_groups;
struct kaas_pid_alloc;
struct kaas_creds;
struct kaas_agent;
struct kaas_server;
struct kaas_authz;
struct kaas_quotas;

/* The broker's services, shared by the server (src/server) and the API
 * handlers (src/kafka).  The server owns the loop and the connections;
 * everything about them lives in src/server. */
struct kaas_broker {
	struct kaas_config cfg;
	struct kaas_substrate *data, *cluster;
	struct kaas_topics *topics;
	struct kaas_agent *agent; /* cluster agent (broker/agent.h) */
	struct kaas_lanes *lanes; /* produce: per-partition ordered lanes (broker/lanes.h) */
	uv_loop_t *loop;          /* the event loop (timers of handlers and groups) */
	int draining;             /* loop thread: the server is stopping */
	const char *stop_why;     /* set where start-up failed for a reason already
	                           * logged: what kaasd's last line says (static) */
	char cluster_id[23];
	struct kaas_groups *groups;  /* the group coordinator (groups.h) */
	struct kaas_pid_alloc *pids; /* producer ids (cluster/producer_ids.h) */
	struct kaas_txns *txns;      /* the transaction coordinator (broker/txn/txn.h) */
	struct kaas_creds *creds;    /* SASL credentials (broker/credentials.h) */
	struct kaas_sweeper sweeper; /* dead writers' temps (broker/sweep.h);
	                                housekeeping thread only */
	struct kaas_server *server; /* the server running this broker (opaque) */
	struct kaas_authz *authz;   /* ACLs (broker/authorizer.h); NULL: all allowed */
	struct kaas_quotas *quotas; /* client quotas (broker/quotas.h); NULL: none */
	struct kaas_fetch_sessions *fetch_sessions; /* KIP-227 (kafka/fetch_session.h):
	                               loop thread; made by the first Fetch v7+ */
};

/* Milliseconds of a monotonic clock (the clock of kaas_mono_ms). */
static inline uint64_t kaas_now_ms(void)
{
	return kaas_mono_ms();
}

/* ---- the work pool, provided by whoever runs the broker (src/server;
 * a program without a server, like the fuzzer, defines its own) ---- */

/* Work that may block on the volume, run off the loop. */
typedef void (*kaas_pool_work_fn)(void *arg);
/* Its end, on the loop thread: status 0, or < 0 when it was cancelled
 * (the work did not run). */
typedef void (*kaas_pool_done_fn)(void *arg, int status);

/* Queue work(arg) on the broker's work pool, then done(arg, status) on the
 * loop (loop thread only; done may be NULL).  The job counts as
 * outstanding until done has run: a stopping server waits for it before
 * closing.  Returns 0, or -errno when nothing was queued (done will not
 * be called). */
int kaas_pool_queue(struct kaas_broker *b, kaas_pool_work_fn work, kaas_pool_done_fn done,
		    void *arg);

#endif
