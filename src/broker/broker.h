/*
 * broker.h — one kaasd broker: configuration, volumes, topics, the event
 * loop and its cross-thread wake-ups.
 */
#ifndef KAAS_BROKER_BROKER_H
#define KAAS_BROKER_BROKER_H

#include <pthread.h>
#include <stdint.h>

#include <uv.h>

#include "broker/sweep.h"
#include "broker/config.h"
#include "broker/topics.h"
#include "broker/worker.h"
#include "substrate/substrate.h"

struct kaas_req;
struct kaas_groups;
struct kaas_pid_alloc;
struct kaas_agent;

/* A produce completion handed from the log's sync thread to the loop. */
struct kaas_completion {
	struct kaas_completion *next;
	void (*fn)(struct kaas_completion *c); /* runs on the loop thread */
};

/* A parked fetch (long poll). */
struct kaas_fetch_waiter {
	struct kaas_fetch_waiter *prev, *next;
	void (*wake)(struct kaas_fetch_waiter *w); /* loop thread */
};

struct kaas_broker {
	struct kaas_config cfg;
	struct kaas_substrate *data, *cluster;
	struct kaas_topics *topics;
	struct kaas_agent *agent; /* cluster agent (broker/agent.h) */
	struct kaas_worker *produce_worker; /* validates and appends, in order */
	uv_loop_t *loop;
	uv_tcp_t server;
	uv_async_t async;         /* completions and data arrivals */
	uv_signal_t sigterm, sigint;
	uv_timer_t housekeep;
	uv_timer_t drain_timer;
	pthread_mutex_t cq_mu;
	struct kaas_completion *cq_head, *cq_tail;
	int data_arrived;         /* under cq_mu: a log's high watermark moved */
	struct kaas_fetch_waiter waiters; /* list head (loop thread) */
	int draining;
	size_t inflight;          /* requests not yet sent or dropped */
	size_t pool_jobs;         /* work-queue jobs outstanding */
	int housekeep_busy;
	size_t nconns;
	char cluster_id[23];
	struct kaas_groups *groups;  /* the group coordinator (groups.h) */
	struct kaas_pid_alloc *pids; /* producer ids (cluster/producer_ids.h) */
	struct kaas_sweeper sweeper; /* dead writers' temps (broker/sweep.h);
	                                housekeeping thread only */
	uint64_t last_sweep_ms;
};

/* Hand a completion to the loop (any thread). */
void kaas_broker_complete(struct kaas_broker *b, struct kaas_completion *c);
/* Park / unpark a fetch waiter (loop thread). */
void kaas_broker_park(struct kaas_broker *b, struct kaas_fetch_waiter *w);
void kaas_broker_unpark(struct kaas_fetch_waiter *w);
/* Milliseconds of a monotonic clock. */
uint64_t kaas_now_ms(void);

/* Run the broker until SIGTERM/SIGINT (server.c).  Returns 0 on a clean
 * stop, -errno if the listener could not start. */
int kaas_broker_run(struct kaas_broker *b);

#endif
