/*
 * groups.h — the group coordinator: consumer-group membership (the classic
 * eager rebalance protocol) and committed offsets.
 *
 * Membership lives in memory on the loop thread (it is not persisted: when
 * the coordinator moves, every member, static ones included, rejoins):
 * JoinGroup, SyncGroup,
 * Heartbeat and LeaveGroup run there, and the requests that must wait (a
 * JoinGroup until the rebalance completes, a SyncGroup until the leader's
 * assignment) are parked, never blocking the loop.  One timer (every
 * GROUPS_TICK_MS) expires members whose session timed out and completes
 * rebalances whose deadline passed.
 *
 * Static membership (KIP-345, JoinGroup v5+): a member joining with a
 * group.instance.id is registered under it.  It sends no LeaveGroup when it
 * stops, so it is kept until its session times out, also across a
 * rebalance it does not rejoin (the leader assigns it partitions as before).
 * When it comes back (JoinGroup with an empty member id and the same
 * instance id) it takes over its old member id's place and assignment: in a
 * Stable group whose chosen protocol stays the same it is answered at once
 * with the current generation and nobody else rebalances.  The member id it
 * replaced is fenced: a request naming the instance id with another member
 * id gets FENCED_INSTANCE_ID (JoinGroup, SyncGroup v3+, Heartbeat v3+,
 * OffsetCommit v7+, LeaveGroup v3+).
 *
 * The first join of an Empty group waits group.initial.rebalance.delay.ms
 * (broker config, default 3000 as in Kafka), extended by that much while
 * new members keep arriving, up to the rebalance timeout, so a starting
 * fleet of consumers forms one generation; no other wait is added.
 *
 * Committed offsets live on the cluster volume (src/cluster/group_store.h),
 * loaded on first use and written on libuv's work queue, one operation per
 * group at a time in arrival order (group_offsets.c).  An OffsetCommit is
 * answered only once kaas_group_commit made it durable and found this
 * coordinator not fenced.
 *
 * Which broker coordinates a group is the cluster assignment's: the group
 * maps to a coordinator slot (kaas_agent_coordinator), led by one broker
 * at a leader epoch.  Every group request passes kaas_groups_check first:
 * a group whose slot another broker leads is answered NOT_COORDINATOR (the
 * client finds the coordinator again), one whose slot has no leader
 * COORDINATOR_NOT_AVAILABLE.  The slot's leader epoch is the coordinator
 * epoch group_store fences with; when it changes, or the slot moves away,
 * the group's in-memory state (members, loaded offsets) is dropped, so the
 * next request reloads from the volume at the new epoch.
 */
#ifndef KAAS_BROKER_GROUPS_H
#define KAAS_BROKER_GROUPS_H

#include <stdint.h>

#include <uv.h>

#include "cluster/group_store.h"
#include "kafka/request.h"

struct kaas_broker;
struct kaas_groups;

enum group_state {
	GROUP_EMPTY = 0,
	GROUP_PREPARING,      /* PreparingRebalance: waiting for members to (re)join */
	GROUP_COMPLETING,     /* CompletingRebalance: waiting for the leader's SyncGroup */
	GROUP_STABLE,
	GROUP_DEAD,
};

struct group_protocol {
	char *name;
	uint8_t *meta;
	int32_t meta_len;
};

struct group_member {
	struct group_member *next;
	char *id;
	char *instance_id;        /* group.instance.id of a static member, else NULL */
	char *client_id, *client_host;
	int32_t session_ms, rebalance_ms;
	int nprot;
	struct group_protocol *prot;
	struct kaas_req *join;    /* parked JoinGroup */
	struct kaas_req *sync;    /* parked SyncGroup */
	uint8_t *assignment;
	int32_t assignment_len;
	uint64_t last_seen_ms;    /* last heartbeat / join / sync */
	int pending;              /* id handed out with MEMBER_ID_REQUIRED, not joined yet */
};

/* A queued offsets operation (group_offsets.c). */
struct group_op;

struct group {
	struct group *next;
	struct kaas_groups *reg;
	char *id;
	enum group_state state;
	int32_t generation;
	char *protocol_type;      /* NULL while empty */
	char *protocol;           /* chosen at the last rebalance */
	char *leader;             /* a member id (owned copy) */
	struct group_member *members;
	uint64_t rebalance_deadline_ms;
	int initial_delay;        /* the first rebalance of an Empty group: wait it out */
	int new_member_added;     /* a member joined during that initial delay */
	int32_t initial_remaining_ms; /* how much longer it may still be extended */
	uint64_t epoch;           /* the slot epoch this in-memory state belongs to (0: not ours) */
	/* offsets */
	int loaded;               /* offs holds the volume's state */
	struct kaas_group_offsets offs;
	struct group_op *ops_head, *ops_tail;
	int op_running;
	int reload;               /* dropped while an op ran: unload when it is done */
	uv_work_t work;
};

struct kaas_groups {
	struct kaas_broker *b;
	struct group *list;
	uv_timer_t tick;
	int started, closed;
	uint64_t member_seq;
	int32_t initial_delay_ms; /* group.initial.rebalance.delay.ms */
};

/* Set up the coordinator (loop thread, before the loop runs; no I/O).
 * 0 or -ENOMEM. */
int kaas_groups_init(struct kaas_broker *b, struct kaas_groups **out);
/* Start the expiry timer (loop thread, once the listener is up). */
void kaas_groups_start(struct kaas_groups *g);
/* Free everything (after the loop stopped). */
void kaas_groups_destroy(struct kaas_groups *g);

/* The coordinator epoch to take `group` over with: the leader epoch of the
 * group's coordinator slot when this broker leads it (and may serve it),
 * else 0 (which every takeover on the volume fences).  Any thread. */
uint64_t kaas_groups_coordinator_epoch(struct kaas_groups *g, const char *group);

/* The one coordinator check of every group request (loop thread): 0 when
 * this broker coordinates group `id` now; else the error to answer:
 * NOT_COORDINATOR (the slot is led by another broker, or this one is
 * draining) or COORDINATOR_NOT_AVAILABLE (the slot has no leader, or this
 * broker has not taken it up yet).  When the group is in memory and the
 * answer is an error or the slot epoch is not the one its state was set up
 * at, that state is dropped (parked requests answered NOT_COORDINATOR,
 * members removed, offsets reloaded on next use) — the group may be freed,
 * so look it up again afterwards. */
int16_t kaas_groups_check(struct kaas_groups *g, const char *id);

/* Find a group by id (NULL if unknown); create it when `create`. */
struct group *kaas_group_lookup(struct kaas_groups *g, const char *id, int create);
/* Drop a group that has no members, no offsets state in use and no queued
 * operation (loop thread). */
void kaas_group_maybe_free(struct group *gr);
struct group_member *kaas_group_member(struct group *gr, const char *id);
/* The member a request names by member id `member_id` and, from the API
 * versions that carry it, instance id `instance_id` (a slice of len < 0:
 * absent, null).  0 with *out, or UNKNOWN_MEMBER_ID (no such member, or it
 * has not completed its first join) or FENCED_INSTANCE_ID (the instance id
 * belongs to another member id: a newer incarnation replaced this one). */
int16_t kaas_group_member_check(struct group *gr, const char *member_id,
				struct kaas_kslice instance_id, struct group_member **out);
const char *kaas_group_state_name(enum group_state s);

/* The API handlers are declared in kafka/request.h. */

/* Answer every queued offsets operation of a group that is being shut down
 * (group_offsets.c): returns how many are still running on the work queue. */
int kaas_group_ops_pending(struct group *gr);

#endif
