/*
 * groups.h — the group coordinator: consumer-group membership (the classic
 * eager rebalance protocol) and committed offsets.
 *
 * Membership lives in memory on the loop thread: JoinGroup, SyncGroup,
 * Heartbeat and LeaveGroup run there, and the requests that must wait (a
 * JoinGroup until the rebalance completes, a SyncGroup until the leader's
 * assignment) are parked, never blocking the loop.  One timer (every
 * GROUPS_TICK_MS) expires members whose session timed out and completes
 * rebalances whose deadline passed.
 *
 * Committed offsets live on the cluster volume (src/cluster/group_store.h),
 * loaded on first use and written on libuv's work queue, one operation per
 * group at a time in arrival order (group_offsets.c).  An OffsetCommit is
 * answered only once kaas_group_commit made it durable and found this
 * coordinator not fenced.
 *
 * The coordinator epoch comes from kaas_groups_coordinator_epoch, today one
 * claim per broker start (<cluster>/coordinator-epochs/epoch-N); the
 * multi-broker assignment will supply per-group epochs there.
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
	char *instance_id;        /* may be NULL (static membership is not special-cased) */
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
	/* offsets */
	int loaded;               /* offs holds the volume's state */
	struct kaas_group_offsets offs;
	struct group_op *ops_head, *ops_tail;
	int op_running;
	uv_work_t work;
};

struct kaas_groups {
	struct kaas_broker *b;
	struct group *list;
	uv_timer_t tick;
	int started, closed;
	uint64_t coord_epoch;     /* this broker's coordinator epoch */
	uint64_t member_seq;
};

/* Set up the coordinator (loop thread, before the loop runs): claims the
 * coordinator epoch on the cluster volume.  0 or -errno. */
int kaas_groups_init(struct kaas_broker *b, struct kaas_groups **out);
/* Start the expiry timer (loop thread, once the listener is up). */
void kaas_groups_start(struct kaas_groups *g);
/* Free everything (after the loop stopped). */
void kaas_groups_destroy(struct kaas_groups *g);

/* The coordinator epoch to take `group` over with.  Today one per broker
 * start; the cluster assignment will answer per group here. */
uint64_t kaas_groups_coordinator_epoch(struct kaas_groups *g, const char *group);

/* Find a group by id (NULL if unknown); create it when `create`. */
struct group *kaas_group_lookup(struct kaas_groups *g, const char *id, int create);
/* Drop a group that has no members, no offsets state in use and no queued
 * operation (loop thread). */
void kaas_group_maybe_free(struct group *gr);
struct group_member *kaas_group_member(struct group *gr, const char *id);
const char *kaas_group_state_name(enum group_state s);

/* The API handlers are declared in kafka/request.h. */

/* Answer every queued offsets operation of a group that is being shut down
 * (group_offsets.c): returns how many are still running on the work queue. */
int kaas_group_ops_pending(struct group *gr);

#endif
