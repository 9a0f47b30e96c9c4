/*
 * agent.h — the cluster agent inside kaasd: membership, controller,
 * assignment, and which partitions this broker leads.
 *
 * One thread per broker, never the event loop's.  Every heartbeat interval
 * it:
 *   1. renews this broker's document <cluster>/brokers/<id>.json (counter
 *      + 1, incarnation, the controller epoch it holds), membership.h;
 *   2. lists every broker document and folds it into its liveness view (its
 *      own monotonic clock; no clock is compared across hosts);
 *   3. stands down as controller at once if a claim newer than its own
 *      exists; claims the next controller epoch (assignment.h) when no live
 *      broker announces the newest claim (its holder is dead, is this
 *      broker's own previous life, or the claim stayed unannounced for a
 *      whole liveness timeout);
 *   4. as controller: plans the assignment from the topic documents (every
 *      partition of every listed topic plus coordinator_slots slots of
 *      KAAS_COORDINATOR_TOPIC) and the live brokers, and writes it when it
 *      changed or still carries an older controller epoch (re-assertion);
 *      KAAS_EFENCED from the write means a newer controller: stand down;
 *   5. reads assignment.json (ignoring one older than the newest claim) and
 *      reconciles the topic registry with it (kaas_topics_reconcile).
 * A round that cannot renew the heartbeat and apply the assignment leaves
 * the "last renewed" time where it was; once that is older than half the
 * liveness timeout the broker is fenced (kaas_agent_fenced) and answers
 * produce with NOT_LEADER_OR_FOLLOWER until a round succeeds again.
 *
 * A restarted broker id gets its slots back only with a bumped leader epoch:
 * the controller bumps every slot of a broker whose incarnation changed, and
 * a broker does not lead slots of an assignment it found at start until a
 * newer version appears (or it wrote one), so a late write of its previous
 * life is fenced by the logs.
 *
 * Threads: every accessor may be called from any thread (one mutex, memory
 * only); kaas_agent_start and _stop block.
 */
#ifndef KAAS_BROKER_AGENT_H
#define KAAS_BROKER_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "broker/config.h"
#include "broker/topics.h"
#include "cluster/membership.h"
#include "substrate/substrate.h"

struct kaas_agent;

/* Create the agent (no thread yet).  cfg must outlive it; its advertised
 * address is read at kaas_agent_start.  First makes sure no live process
 * has our broker id: its document, if any, must be a clean shutdown's or
 * show no heartbeat progress for min(liveness timeout, 4 heartbeat
 * intervals) (blocks that long).  0, -EADDRINUSE (the id is in use; logged
 * with the other process's address) or -ENOMEM.
 *
 * Two processes with one id: each round first reads our own document; once
 * it holds another incarnation than ours, another process took the id over
 * (it started while this one looked dead) and this one is fenced for good:
 * it leads nothing, refuses produce and stops heartbeating. */
int kaas_agent_new(struct kaas_substrate *cluster, const struct kaas_config *cfg,
		     struct kaas_agent **out);

/* The lease function for kaas_topics_open_leased (arg: the agent). */
int kaas_agent_lease(void *arg, const char *topic, int32_t partition, uint32_t *epoch);

/* Run one round now (so a lone broker leads its partitions before it
 * serves), then start the agent's thread.  0 or -errno: the thread, or
 * the cluster directory cannot be written (the first rounds all failed
 * with -EACCES, -EPERM or -EROFS, or its directories cannot be made;
 * logged as an error naming the path: kaasd refuses to start).  Rounds
 * that keep failing later are logged again every 30 s. */
int kaas_agent_start(struct kaas_agent *c, struct kaas_topics *topics);

/* Stop the thread (no more heartbeats) and free the agent.  NULL is a
 * no-op.  The broker document is rewritten once more, marked stopped (same
 * counter: others see the heartbeat stop; a new process with the id starts
 * without waiting; the controller claim it announced counts as nobody's,
 * so another broker, or its own next life, claims at once). */
void kaas_agent_stop(struct kaas_agent *c);

/* Ask for a round now (any thread). */
void kaas_agent_kick(struct kaas_agent *c);

/* Wait (at most timeout_ms) until the current assignment names a leader
 * for partition 0 of `topic` and this broker has applied it (opened what it
 * leads), kicking rounds.  1 found, 0 not yet. */
int kaas_agent_wait_assigned(struct kaas_agent *c, const char *topic, int timeout_ms);

/* Has this broker failed to renew its heartbeat for half the liveness
 * timeout?  1 fenced (refuse produce), 0 not. */
int kaas_agent_fenced(const struct kaas_agent *c);

/* Ready to serve (/readyz): kaas_agent_start has run its first rounds, a
 * round has reconciled the registry with the assignment (the partitions it
 * grants are opened), and the broker is not fenced.  Any thread, atomics
 * only (NULL: not ready). */
int kaas_agent_ready(const struct kaas_agent *c);

/* Milliseconds since the lease of the last successful round began (-1: no
 * round has succeeded yet).  Any thread, atomics only. */
int64_t kaas_agent_round_age_ms(const struct kaas_agent *c);

/* The leader of (topic, partition) in the current assignment: 0 and
 * *broker, *epoch; -ENOENT when unassigned or no leader (no assignment
 * yet, or no live broker). */
int kaas_agent_leader(struct kaas_agent *c, const char *topic, int32_t partition,
			int32_t *broker, uint32_t *epoch);

/* The broker id of the live controller, or -1 if none is known. */
int32_t kaas_agent_controller(struct kaas_agent *c);

/* Brokers for Metadata: this broker first, then every other broker this
 * agent believes alive, then the leaders of the current assignment it does
 * not (so every leader named is resolvable).  Fills up to max entries of
 * out; returns how many. */
size_t kaas_agent_brokers(struct kaas_agent *c, struct kaas_broker_info *out, size_t max);

/* Group coordinators (for the consumer-group code).  A group maps to slot
 * hash(group) mod coordinator_slots (kaas_agent_coordinator_slot, FNV-1a
 * of the name, stable across brokers and restarts); the slot is assigned
 * like a partition of KAAS_COORDINATOR_TOPIC, with its own leader epoch.
 * kaas_agent_coordinator: 0 and the slot's *broker and *epoch (epoch:
 * fence the group's state with it, e.g. as group_store's epoch), -ENOENT
 * when the slot has no leader yet.  The caller answers NOT_COORDINATOR /
 * COORDINATOR_NOT_AVAILABLE when *broker is not itself or on -ENOENT. */
/* For the status page (server/http_status.c; any thread, memory only,
 * under the agent's mutex).
 * kaas_agent_members: every broker of the agent's last listing of
 * brokers/ (this one included), with alive[i] 1 when its heartbeat moved
 * within the liveness timeout (or it is this broker), else 0; fills up to
 * max, returns how many.
 * kaas_agent_events: the last membership and controller changes this
 * agent saw (a peer dead, stopped or back, this broker claiming or giving
 * up the controller), newest first: up to max (at most KAAS_AGENT_EVENTS),
 * returns how many. */
#define KAAS_AGENT_EVENTS 16
struct kaas_agent_event {
	int64_t unix_ms;          /* wall clock when noted */
	char text[120];
};
size_t kaas_agent_members(struct kaas_agent *c, struct kaas_broker_info *out, int *alive,
			  size_t max);
size_t kaas_agent_events(struct kaas_agent *c, struct kaas_agent_event *out, size_t max);

int32_t kaas_agent_coordinator_slot(const struct kaas_agent *c, const char *group, size_t len);
/* The same without an agent, for `slots` coordinator slots (kaasctl). */
int32_t kaas_coordinator_slot_of(const char *group, size_t len, int32_t slots);
int kaas_agent_coordinator(struct kaas_agent *c, const char *group, size_t len,
			     int32_t *broker, uint32_t *epoch);

#endif
