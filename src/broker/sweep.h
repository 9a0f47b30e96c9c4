/*
 * sweep.h — the broker's sweep of dead writers' temps and exclusive-create
 * private names, keyed by writer incarnation (never by pid).
 *
 * Every replace temp and NFSv4 exclusive-create link name carries its
 * writer's incarnation (substrate.h: private names).  A name is swept when
 * its incarnation is not live: not this process's, not one named by a
 * broker document this broker believes alive (kaas_agent_brokers), and
 * seen by this sweeper, on its own monotonic clock, for at least `grace_ms`
 * (so a writer that just started, or a tool that is not a broker, is never
 * swept mid-write; a temp lives for milliseconds).  Sweeping a live
 * writer's temp anyway only makes its replace fail (ENOENT on the rename):
 * never data loss.
 *
 * Directories: on the cluster volume the root, brokers/, topics/,
 * controller/, producer-ids/, leader-epochs/, groups/ and every groups/<g>/;
 * on the data volume every <topic>/ (a partition directory is swept by its
 * leader's log open, which may remove every temp there).
 */
#ifndef KAAS_BROKER_SWEEP_H
#define KAAS_BROKER_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

struct kaas_agent;

struct kaas_sweeper {
	uint64_t grace_ms;        /* an unknown incarnation is dead after this */
	uint64_t now_ms;          /* this pass's clock (kaas_mono_ms) */
	struct kaas_sweep_seen {
		uint64_t inc;
		uint64_t first_ms;  /* when this sweeper first saw it */
		int seen;           /* seen in this pass */
	} *seen;
	size_t nseen, capseen;
	uint64_t *live;           /* incarnations of brokers believed alive */
	size_t nlive;
};

/* Is incarnation `inc` live at the sweeper's now_ms (kaas_live_fn for
 * kaas_sweep_stale)?  Records first sightings. */
int kaas_sweeper_live(void *sweeper, uint64_t inc, const char *name);

/* One pass over every directory above.  `agent` may be NULL (no broker
 * documents: only this process is live).  Returns the number of names
 * removed, or the first -errno met (the pass goes on past it). */
int kaas_sweeper_pass(struct kaas_sweeper *sw, struct kaas_agent *agent,
		      struct kaas_substrate *cluster, struct kaas_substrate *data, uint64_t now_ms);

void kaas_sweeper_free(struct kaas_sweeper *sw);

#endif
