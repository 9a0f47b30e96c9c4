/*
 * agent_internal.h — the cluster agent's state, shared by agent.c (the
 * thread and its rounds) and agent_view.c (the accessors).
 *
 * Locking: the fields under "Under mu" are read by any thread with mu
 * held; the agent thread writes them with mu held.  The fields under
 * "Agent thread only" are touched by the agent thread alone (and by
 * kaas_agent_start's first round, before the thread exists).
 */
#ifndef KAAS_BROKER_AGENT_INTERNAL_H
#define KAAS_BROKER_AGENT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/agent.h"
#include "cluster/assignment.h"

#define MAX_BROKERS 1024

struct known_inc {
	int32_t id;
	uint64_t incarnation;
};

struct kaas_agent {
	struct kaas_substrate *vol;
	const struct kaas_config *cfg;
	struct kaas_topics *topics;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* kicks and finished rounds */
	int stop, kicked;
	uint64_t rounds;
	uint64_t rounds_observed; /* agent thread: broker listings observed (the
	                             first has no earlier live set to compare) */
	/* Under mu: the view the accessors read. */
	struct kaas_assignment view; /* current assignment (n 0 when none) */
	int have_view;
	int trust_self;           /* may lead our own slots of `view` */
	uint64_t first_version;   /* version of the first assignment read */
	int first_had_mine;
	struct kaas_broker_info *brokers; /* last listing */
	size_t nbrokers;
	int32_t *alive;
	size_t nalive;
	int32_t controller;
	struct kaas_agent_event events[KAAS_AGENT_EVENTS]; /* ring: the last
	                             KAAS_AGENT_EVENTS membership and controller
	                             changes (kaas_agent_note), for the status page */
	uint64_t nevents;         /* events ever noted (the next slot: % size) */
	uint64_t served_version;  /* view version the registry was last
	                             reconciled with (+1; 0: none) */
	uint64_t last_ok_ms;      /* atomic: the lease of the last full round:
	                             the monotonic time taken just before its
	                             heartbeat write (never the round's end: the
	                             heartbeat proves liveness only from when it
	                             was written, and a round may be slow after
	                             it) */
	int superseded;           /* atomic: another process took our id over */
	int joined;               /* atomic: kaas_agent_start ran its first rounds */
	int served;               /* atomic: a round reconciled the registry with
	                             the assignment (its partitions opened) */
	/* Agent thread only. */
	struct kaas_broker_info me;
	struct kaas_liveness lv;
	uint64_t ctrl_epoch;      /* the claim we hold, 0 if none */
	struct kaas_assignment written; /* the last assignment we wrote */
	int have_written;
	uint64_t latest_seen;     /* newest claim seen, and since when */
	uint64_t latest_since_ms;
	uint64_t start_ms;
	uint64_t prev_life_epoch; /* controller epoch our id's previous life announced */
	int published;            /* our document holds our incarnation */
	struct known_inc *incs;
	size_t nincs;
};

/* agent_view.c: note a membership or controller change in the event ring
 * (any thread; takes mu, so never with mu held).  The text is formatted,
 * truncated to fit. */
void kaas_agent_note(struct kaas_agent *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* agent_metrics.c: publish a round's view to the metrics registry
 * (controller epoch, each listed broker's liveness).  Agent thread. */
void kaas_agent_metrics_round(const struct kaas_broker_info *list, size_t n, const int32_t *alive,
			      size_t nalive, uint64_t controller_epoch);

#endif
