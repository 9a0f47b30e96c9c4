/*
 * internal.h — the group coordinator's own state, shared by its files
 * (coordinator.c: the registry of groups, slots and epochs, the timer;
 * rebalance.c: the rebalance state machine; membership.c: join, sync,
 * heartbeat, leave; offsets.c: the per-group queue of offset operations;
 * queries.c: describe, list, find coordinator).  Not for other modules:
 * they use groups.h.  Everything here is the loop thread's unless said.
 */
#ifndef KAAS_BROKER_GROUPS_INTERNAL_H
#define KAAS_BROKER_GROUPS_INTERNAL_H

#include <assert.h>
#include <pthread.h>
#include <stdint.h>

#include <uv.h>

#include "broker/groups/groups.h"
#include "cluster/group_store.h"
#include "cluster/txn_store.h"

enum group_state {
	GROUP_EMPTY = 0,
	GROUP_PREPARING,      /* PreparingRebalance: waiting for members to (re)join */
	GROUP_COMPLETING,     /* CompletingRebalance: waiting for the leader's SyncGroup */
	GROUP_STABLE,
	GROUP_DEAD,
};

struct group_member {
	struct group_member *next;
	char *id;
	char *instance_id;        /* group.instance.id of a static member, else NULL */
	char *client_id, *client_host;
	int32_t session_ms, rebalance_ms;
	int nprot;
	struct kaas_group_protocol *prot;
	kaas_group_join_done join_done; /* a waiting JoinGroup (NULL: none) */
	void *join_ctx;
	kaas_group_sync_done sync_done; /* a waiting SyncGroup (NULL: none) */
	void *sync_ctx;
	uint8_t *assignment;
	int32_t assignment_len;
	uint64_t last_seen_ms;    /* last heartbeat / join / sync */
	int pending;              /* id handed out with MEMBER_ID_REQUIRED, not joined yet */
};

/* A queued offsets operation (offsets.c). */
struct group_op;

struct group {
	struct group *next;
	struct kaas_groups *reg;
	char *id;
	enum group_state state;
	int32_t generation;
	char *protocol_type;      /* NULL until a member joined; kept when it
	                             empties (set by the next first member);
	                             forgotten when the group's state is dropped */
	char *protocol;           /* chosen at the last rebalance */
	char *leader;             /* a member id (owned copy) */
	struct group_member *members;
	uint64_t rebalance_deadline_ms;
	int initial_delay;        /* the first rebalance of an Empty group: wait it out */
	int new_member_added;     /* a member joined during that initial delay */
	int32_t initial_remaining_ms; /* how much longer it may still be extended */
	uint64_t epoch;           /* the slot epoch this in-memory state belongs to (0: not ours) */
	/* offsets (offsets.c) */
	int loaded;               /* offs holds the volume's state */
	struct kaas_group_offsets offs; /* the work thread's while op_running */
	struct group_op *ops_head; /* in arrival order; the head runs */
	int op_running;
	int reload;               /* dropped while an op ran: unload when it is done */
	size_t noffs;             /* committed offsets after the last op (loop
	                             thread's copy of offs.n: ListGroups) */
	/* transactional offsets not yet decided (txn_offsets.c; the work
	 * thread's while op_running, read by the loop's answers otherwise) */
	struct kaas_txn_pending *txnp;
	size_t ntxnp;
	int64_t empty_since_ms;   /* wall clock when its last member left (0:
	                             never seen with members here): expiry */
};

/* A coordinator slot as discover.c sees it. */
struct group_slot {
	uint64_t epoch;           /* the epoch this broker leads it at (0: not ours) */
	uint64_t loaded_epoch;    /* its groups were found at this epoch (0: not yet) */
	uint64_t job_epoch;       /* a discovery at this epoch is on the pool */
};

/* A request waiting for the slots' groups to be found (discover.c). */
struct group_load_waiter {
	struct group_load_waiter *next;
	void (*fn)(void *ctx);
	void *ctx;
	uint64_t deadline_ms;
};

struct kaas_groups {
	struct kaas_broker *b;
	struct group *list;
	/* discover.c: the groups of the slots this broker takes over */
	int32_t nslots;
	struct group_slot *slots;
	int discovering;          /* a discovery is on the pool */
	uint64_t discover_after_ms; /* a failed one is retried from then */
	struct group_load_waiter *waiters;
	uv_timer_t tick;
	int started, closed;
	uint64_t member_seq;
	int32_t initial_delay_ms; /* group.initial.rebalance.delay.ms */
	int64_t retention_ms;     /* offsets.retention.minutes, in ms */
	uint64_t next_expiry_ms;  /* the timer's next look for expired offsets */
	pthread_t loop_thread;    /* the thread that owns all of the above */
};

/* The caller runs on the loop thread (the one that set the service up). */
#define GROUPS_ON_LOOP(g) assert(pthread_equal(pthread_self(), (g)->loop_thread))

/* ---- coordinator.c */

/* The one coordinator check of every operation: 0 when this broker
 * coordinates group `id` now, else KAAS_ENOT_COORDINATOR (another broker
 * leads the slot, or this one is draining) or KAAS_ENO_COORDINATOR.  When
 * the group is in memory and the answer is an error, or the slot epoch is
 * not the one its state was set up at, that state is dropped (waiting
 * requests complete KAAS_ENOT_COORDINATOR, members removed, offsets reloaded
 * on next use) — the group may be freed, so look it up again afterwards. */
int kaas_groups_check(struct kaas_groups *g, const char *id);
/* Find a group by id (NULL if unknown); create it when `create` (NULL on
 * -ENOMEM). */
struct group *kaas_groups_lookup(struct kaas_groups *g, const char *id, int create);
/* Drop a group that has no members, no offsets state in use and no queued
 * operation. */
void kaas_groups_maybe_free(struct group *gr);
const char *kaas_groups_state_name(enum group_state s);
/* Does this broker lead coordinator slot `slot` now: 0 and *epoch, else
 * KAAS_ENOT_COORDINATOR or KAAS_ENO_COORDINATOR (*epoch 0).  Any thread. */
int kaas_groups_slot_owner(struct kaas_groups *g, int32_t slot, uint64_t *epoch);

/* ---- discover.c: a takeover finds the slot's groups (as Kafka loads a
 * coordinator partition): every group of a slot this broker takes over
 * whose newest offsets document holds a commit is loaded, so it is Empty
 * (not Dead) in DescribeGroups, listed by ListGroups and its offsets
 * expire, before anything else touches it. */

/* Note slot epochs that changed and start the discovery a slot needs
 * (the timer, and every kaas_groups_loading).  Answer waiters whose
 * deadline passed. */
void kaas_groups_discover_tick(struct kaas_groups *g);
/* Answer every waiter now (draining, shutdown). */
void kaas_groups_discover_flush(struct kaas_groups *g);

/* ---- offsets.c */

/* Load gr's committed offsets at the current epoch (queued; no answer),
 * unless loaded; noffs: how many its document held when found (listed
 * meanwhile). */
void kaas_groups_load(struct group *gr, size_t noffs);
/* Committed offsets expire (offsets.retention.minutes) in a group without
 * members: retention after their commit or after the group emptied,
 * whichever is later.  The timer queues the erasure of a loaded group's
 * expired offsets (every operation run on an empty group erases them
 * first). */
void kaas_groups_expire_offsets(struct group *gr);
/* The wall clock in ms since the epoch (commit times, expiry). */
int64_t kaas_groups_wall_ms(void);

/* ---- rebalance.c: the state machine */

/* The member with id `id`, or NULL. */
struct group_member *kaas_groups_member(struct group *gr, const char *id);
/* The member registered under instance id `iid` (NULL: none given). */
struct group_member *kaas_groups_static_member(struct group *gr, const char *iid);
/* The member a request names: 0 with *out, or KAAS_EUNKNOWN_MEMBER (no such
 * member, or it has not completed its first join) or KAAS_EFENCED_INSTANCE
 * (instance_id, when given, belongs to another member id). */
int kaas_groups_member_check(struct group *gr, const char *member_id, const char *instance_id,
			     struct group_member **out);
/* Joined (not pending) members. */
int kaas_groups_count_members(const struct group *gr);
/* Free one member (its waiting requests must have been answered). */
void kaas_groups_member_free(struct group_member *m);
/* Complete m's waiting join and sync with `status`. */
void kaas_groups_answer_waiting(struct group_member *m, int status);
/* Unlink and free m, completing its waiting requests with `status`. */
void kaas_groups_remove_member(struct group *gr, struct group_member *m, int status);
/* Complete a join (status 0: with the group's generation; the member list
 * when `with_members` is GROUP_JOIN_MEMBERS, and also SkipAssignment when it
 * is GROUP_JOIN_SKIP (KIP-814: a Stable group's leader that came back keeps
 * the current assignment); `leader` NULL: the group's). */
enum { GROUP_JOIN_ALONE = 0, GROUP_JOIN_MEMBERS = 1, GROUP_JOIN_SKIP = 2 };
void kaas_groups_answer_join(kaas_group_join_done done, void *ctx, const struct group *gr,
			     int status, const char *member_id, int with_members,
			     const char *leader);
/* Member m's join waits for the rebalance: a group already preparing may
 * now be complete; any other starts a rebalance. */
void kaas_groups_park_join(struct group *gr, struct group_member *m, kaas_group_join_done done,
			   void *ctx);
/* The protocol every member supports, by the members' first preferences. */
const char *kaas_groups_choose_protocol(const struct group *gr);
/* Complete the rebalance if every member rejoined or its deadline passed. */
void kaas_groups_try_complete(struct group *gr);
/* Members left: rebalance (or finish one), free the group if it is empty. */
void kaas_groups_member_left(struct group *gr);

/* ---- txn_offsets.c (transactional offsets, KIP-98) */

/* Work thread, group loaded: apply the pending transactional offsets whose
 * transaction committed, drop those of aborted ones, keep the rest in
 * gr->txnp.  0 or a status (the op fails: reload). */
int kaas_groups_txn_settle(struct group *gr);
/* Work thread: hold rq's offsets pending for its transaction.  0 or a
 * status. */
int kaas_groups_txn_work(struct group *gr, struct kaas_group_txn_commit *rq);
/* Loop: is a transactional offset of topic/partition pending? */
int kaas_groups_txn_unstable(const struct group *gr, const char *topic, int32_t partition);
void kaas_groups_txn_free(struct group *gr);

#endif
