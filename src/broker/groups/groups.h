/*
 * groups.h — the group coordinator service: consumer-group membership (the
 * classic eager rebalance protocol) and committed offsets.  It speaks kaas
 * statuses (util/status.h), knows nothing of the Kafka wire: the handlers in
 * src/kafka/api_group_*.c parse requests, call these functions and encode
 * the answers.
 *
 * Threads.  Everything here runs on the loop thread (asserted), except
 * kaas_groups_coordinator_epoch and kaas_groups_find_coordinator (any
 * thread).  Membership lives in memory on the loop thread; committed
 * offsets are read and written on libuv's work queue (offsets.c).  An
 * operation that may have to wait (a JoinGroup until the rebalance
 * completes, a SyncGroup until the leader's assignment, an offset commit
 * or fetch until the volume answered) takes a completion: a callback and
 * an opaque context, called exactly once, on the loop thread — possibly
 * before the call that took it returns.  One timer (every 100 ms) expires
 * members whose session timed out and completes rebalances whose deadline
 * passed.
 *
 * Membership is not persisted: when the coordinator moves, every member,
 * static ones included, rejoins.
 *
 * Static membership (KIP-345): a member joining with an instance id is
 * registered under it.  It sends no LeaveGroup when it stops, so it is kept
 * until its session times out, also across a rebalance it does not rejoin
 * (the leader assigns it partitions as before).  When it comes back (a join
 * with an empty member id and the same instance id) it takes over its old
 * member id's place and assignment: in a Stable group whose chosen protocol
 * stays the same it is answered at once with the current generation and
 * nobody else rebalances.  The member id it replaced is fenced: a request
 * naming the instance id with another member id gets KAAS_EFENCED_INSTANCE.
 *
 * The first join of an Empty group waits the initial rebalance delay (broker
 * config group.initial.rebalance.delay.ms), extended by that much while new
 * members keep arriving, up to the rebalance timeout, so a starting fleet of
 * consumers forms one generation; no other wait is added.
 *
 * Committed offsets live on the cluster volume (cluster/group_store.h),
 * loaded on first use and written on the work queue, one operation per group
 * at a time in arrival order.  A commit completes with 0 only once
 * kaas_group_commit made it durable and found this coordinator not fenced.
 *
 * Which broker coordinates a group is the cluster assignment's: the group
 * maps to a coordinator slot, led by one broker at a leader epoch.  Every
 * operation first checks it: a group whose slot another broker leads (or
 * while this broker drains) fails KAAS_ENOT_COORDINATOR, one whose slot has
 * no leader (or is not taken up yet) KAAS_ENO_COORDINATOR.  The slot's
 * leader epoch is the coordinator epoch group_store fences with; when it
 * changes, or the slot moves away, the group's in-memory state (members,
 * loaded offsets) is dropped — waiting joins and syncs complete with
 * KAAS_ENOT_COORDINATOR — so the next request reloads from the volume at the
 * new epoch.
 *
 * Group ids, member ids and instance ids passed in are NUL-terminated
 * strings; the caller rejects empty group ids and ids holding a NUL.
 */
#ifndef KAAS_BROKER_GROUPS_GROUPS_H
#define KAAS_BROKER_GROUPS_GROUPS_H

#include <stddef.h>
#include <stdint.h>

struct kaas_broker;
struct kaas_broker_info;
struct kaas_groups;

/* Session timeouts a member may ask for (Kafka's broker defaults of
 * group.min/max.session.timeout.ms); the caller refuses others. */
#define KAAS_GROUP_MIN_SESSION_MS 1000
#define KAAS_GROUP_MAX_SESSION_MS 1800000

/* ------------------------------------------------------------ lifecycle */

/* The committed offsets of every group this broker coordinates and has
 * loaded (loop thread; groups whose offsets an operation holds right now
 * are skipped this time): cb(arg, group, topic, partition, offset). */
typedef void (*kaas_group_commit_cb)(void *arg, const char *group, const char *topic,
				     int32_t partition, int64_t offset);
void kaas_groups_each_commit(struct kaas_groups *g, kaas_group_commit_cb cb, void *arg);

/* Set up the coordinator (the loop thread, before the loop runs; no I/O).
 * 0 or -ENOMEM. */
int kaas_groups_init(struct kaas_broker *b, struct kaas_groups **out);
/* Start the expiry timer (loop thread, once the listener is up). */
void kaas_groups_start(struct kaas_groups *g);
/* Free everything (after the loop stopped; NULL is fine). */
void kaas_groups_destroy(struct kaas_groups *g);

/* ------------------------------------------------------------ coordinators */

/* The coordinator epoch to take `group` over with: the leader epoch of the
 * group's coordinator slot when this broker leads it (and may serve it),
 * else 0 (which every takeover on the volume fences).  Any thread. */
uint64_t kaas_groups_coordinator_epoch(struct kaas_groups *g, const char *group);

/* The broker coordinating the group keyed `key` (len bytes, may hold NULs):
 * 0 and *out, or KAAS_ENO_COORDINATOR (draining, no leader, or a leader
 * whose address this broker does not know).  Any thread. */
int kaas_groups_find_coordinator(struct kaas_groups *g, const char *key, size_t len,
				 struct kaas_broker_info *out);

/* Is this broker still finding the groups of a coordinator slot it took
 * over (discover.c): the slot of `group`, or any slot when `group` is
 * NULL?  1 or 0.  Until it has, DescribeGroups could call a group with
 * committed offsets Dead and ListGroups miss it. */
int kaas_groups_loading(struct kaas_groups *g, const char *group);
/* Call fn(ctx) once no slot is loading, or after timeout_ms, or when the
 * broker drains, whichever comes first: on the loop thread, exactly once,
 * never before this returns.  0, or -ENOMEM (fn is not called). */
int kaas_groups_await_load(struct kaas_groups *g, void (*fn)(void *ctx), void *ctx,
			   int timeout_ms);

/* ------------------------------------------------------------ membership */

struct kaas_group_protocol {
	char *name;
	uint8_t *meta;
	int32_t meta_len;
};

/* Free an array of n protocols (and their strings); NULL is fine. */
void kaas_group_protocols_free(struct kaas_group_protocol *p, int n);

/* One member as the coordinator shows it.  Pointers are the coordinator's:
 * valid only during the callback or until the next call into the service. */
struct kaas_group_member_info {
	const char *id;
	const char *instance_id;       /* NULL: a dynamic member */
	const char *client_id, *client_host;
	const uint8_t *meta;           /* its metadata for the group's protocol */
	int32_t meta_len;
	const uint8_t *assignment;     /* NULL: none */
	int32_t assignment_len;
};

struct kaas_group_join {
	const char *group;
	const char *member_id;         /* "": a new member (or a static one coming back) */
	const char *instance_id;       /* NULL: a dynamic member */
	const char *protocol_type;     /* not empty */
	const char *client_id;         /* "" if none */
	const char *client_host;       /* where it connects from, "/ip" */
	int32_t session_ms;            /* within the KAAS_GROUP_*_SESSION_MS bounds */
	int32_t rebalance_ms;          /* <= 0: session_ms */
	int require_member_id;         /* a new dynamic member is given its id
	                                  and must join again (KIP-394) */
	int skip_assignment_ok;        /* the client understands SkipAssignment
	                                  (JoinGroup v9+, KIP-814) */
	int nprot;                     /* > 0 */
	struct kaas_group_protocol *prot; /* taken by kaas_groups_join (freed by it) */
};

struct kaas_group_joined {
	int status;                    /* 0 or a negative status */
	const char *member_id;         /* the member's id ("" if none) */
	int32_t generation;            /* -1 on error */
	const char *protocol;          /* NULL on error */
	const char *leader;            /* NULL on error */
	int skip_assignment;           /* 1: the leader (this member) is given the
	                                  members but must not assign (KIP-814) */
	int nmembers;                  /* for the leader: every joined member */
	const struct kaas_group_member_info *members;
};
typedef void (*kaas_group_join_done)(void *ctx, const struct kaas_group_joined *res);

/* JoinGroup (loop thread).  Completes with 0 once the member is in the
 * group's next generation, or with KAAS_ENOT_COORDINATOR /
 * KAAS_ENO_COORDINATOR, KAAS_EUNKNOWN_MEMBER, KAAS_EFENCED_INSTANCE,
 * KAAS_EPROTOCOL_MISMATCH, KAAS_EMEMBER_ID_REQUIRED (member_id is the id to
 * join with), KAAS_EREBALANCING (a newer join of the same member replaced
 * this one) or -ENOMEM. */
void kaas_groups_join(struct kaas_groups *g, struct kaas_group_join *rq, kaas_group_join_done done,
		      void *ctx);

/* One assignment of the leader's SyncGroup: points into the caller's
 * buffers, copied by the service. */
struct kaas_group_assignment {
	const char *member_id;         /* member_id_len bytes (no NUL needed) */
	int32_t member_id_len;
	const uint8_t *data;           /* len < 0: none */
	int32_t len;
};

struct kaas_group_sync {
	const char *group, *member_id;
	const char *instance_id;       /* NULL: none given */
	int32_t generation;
	int32_t nassign;               /* the leader's assignments (others: ignored) */
	const struct kaas_group_assignment *assign;
};
/* `assignment` is valid only during the callback (NULL, 0: none); so are
 * `protocol_type` and `protocol`, the group's (status 0: both set, as Kafka
 * answers them to SyncGroup v5+; else NULL). */
typedef void (*kaas_group_sync_done)(void *ctx, int status, const uint8_t *assignment, int32_t len,
				     const char *protocol_type, const char *protocol);

/* SyncGroup (loop thread).  Completes with 0 and the member's assignment
 * once the leader sent the generation's assignments, or with the coordinator
 * errors, KAAS_EUNKNOWN_MEMBER, KAAS_EFENCED_INSTANCE,
 * KAAS_EILLEGAL_GENERATION or KAAS_EREBALANCING. */
void kaas_groups_sync(struct kaas_groups *g, const struct kaas_group_sync *rq,
		      kaas_group_sync_done done, void *ctx);

/* Heartbeat (loop thread): 0, the coordinator errors, KAAS_EUNKNOWN_MEMBER,
 * KAAS_EFENCED_INSTANCE, KAAS_EILLEGAL_GENERATION or KAAS_EREBALANCING (the
 * member is kept alive, it must rejoin). */
int kaas_groups_heartbeat(struct kaas_groups *g, const char *group, const char *member_id,
			  const char *instance_id, int32_t generation);

struct kaas_group_leaver {
	const char *member_id;         /* NULL: unknown; "" with an instance id: any */
	const char *instance_id;       /* NULL: by member id only */
	int status;                    /* out: 0, KAAS_EUNKNOWN_MEMBER or KAAS_EFENCED_INSTANCE */
};

/* LeaveGroup of n members (loop thread): returns 0 with each leaver's
 * status set, or a coordinator error (statuses untouched).  The group
 * rebalances if a member left. */
int kaas_groups_leave(struct kaas_groups *g, const char *group, struct kaas_group_leaver *v, int n);

/* ------------------------------------------------------------ queries */

struct kaas_group_info {
	const char *state;             /* "Empty", "PreparingRebalance",
	                                  "CompletingRebalance", "Stable" or "Dead" */
	int stable;
	const char *protocol_type;     /* NULL: none */
	const char *protocol;          /* NULL: none chosen */
	int nmembers;                  /* joined members */
	struct kaas_group_member_info *members; /* owned: kaas_group_info_free */
};

/* DescribeGroups of one group (loop thread): 0 with *out ("Dead" and no
 * members for a group this coordinator does not know), a coordinator error,
 * or -ENOMEM.  The strings are valid until the next call into the service;
 * free with kaas_group_info_free. */
int kaas_groups_describe(struct kaas_groups *g, const char *group, struct kaas_group_info *out);
void kaas_group_info_free(struct kaas_group_info *info);

/* ListGroups (loop thread): calls each(ctx, id, protocol_type, state) for
 * every group in use here (members, or committed offsets loaded;
 * protocol_type "" if none; state as DescribeGroups names it) and returns
 * how many.  each may be NULL (count only). */
int kaas_groups_list(struct kaas_groups *g,
		     void (*each)(void *ctx, const char *id, const char *protocol_type,
				  const char *state),
		     void *ctx);

/* ------------------------------------------------------------ offsets */

struct kaas_offset_part {
	int32_t partition;
	int64_t offset;                /* commit: in; fetch: out (-1: none) */
	int32_t leader_epoch;          /* commit: in (-1: none); fetch: out */
	const char *metadata;          /* commit: in (NULL: none); fetch: out
	                                  (NULL: none), valid during the callback */
	int status;                    /* commit: in — nonzero: the caller refused
	                                  this partition, it is skipped; out —
	                                  KAAS_EUNKNOWN_PARTITION */
};

struct kaas_offset_topic {
	const char *name;              /* NULL: not a valid topic name */
	int32_t n;
	struct kaas_offset_part *parts;
	char topic_id[33];             /* set by the service */
};

struct kaas_offset_batch {
	int32_t nt;
	struct kaas_offset_topic *topics;
};

/* `batch` is the caller's (filled in) or, for a fetch of every topic, the
 * service's, valid only during the callback. */
typedef void (*kaas_offsets_done)(void *ctx, int status, struct kaas_offset_batch *batch);

struct kaas_group_commit {
	const char *group, *member_id;
	const char *instance_id;       /* NULL: none given */
	int32_t generation;            /* < 0 with an empty group: a standalone commit */
	struct kaas_offset_batch batch;
};

struct kaas_group_txn_commit {
	const char *group, *txn_id;
	int64_t producer_id;
	int16_t producer_epoch;
	struct kaas_offset_batch batch;
};
/* TxnOffsetCommit (loop thread).  rq must stay valid until done.
 * Completes with 0 once the offsets are held pending on the volume (they
 * become committed offsets when the transaction commits, and are dropped
 * when it aborts), or with the coordinator errors, KAAS_ETXN_FENCED,
 * KAAS_ETXN_PID_MAPPING, KAAS_ETXN_STATE (the transaction does not hold the
 * group: AddOffsetsToTxn first) or -ENOMEM.  OffsetFetch reports a
 * partition with pending offsets with status KAAS_EUNSTABLE_OFFSET (and
 * its last committed offset). */
void kaas_groups_txn_commit(struct kaas_groups *g, struct kaas_group_txn_commit *rq,
			    kaas_offsets_done done, void *ctx);

/* OffsetCommit (loop thread).  rq must stay valid until done.  Completes
 * with 0 once every partition not refused is durable (partitions of unknown
 * topics get KAAS_EUNKNOWN_PARTITION), or with the coordinator errors
 * (KAAS_ENOT_COORDINATOR also when fenced on the volume; KAAS_ENO_COORDINATOR
 * when not durable), KAAS_EUNKNOWN_MEMBER, KAAS_EFENCED_INSTANCE,
 * KAAS_EILLEGAL_GENERATION, KAAS_EREBALANCING or -ENOMEM. */
void kaas_groups_commit(struct kaas_groups *g, struct kaas_group_commit *rq,
			kaas_offsets_done done, void *ctx);

/* OffsetFetch (loop thread) of the listed partitions (batch, which must stay
 * valid until done), or of every committed one (batch NULL).  Completes
 * with 0, the coordinator errors or -ENOMEM; an offset committed to an
 * earlier incarnation of a topic is reported as none. */
void kaas_groups_fetch(struct kaas_groups *g, const char *group, struct kaas_offset_batch *batch,
		       kaas_offsets_done done, void *ctx);

/* DeleteGroups of one group (loop thread).  Completes (batch NULL) with 0
 * once its committed offsets are erased on the volume (an empty offsets
 * document written at the coordinator epoch: fenced like a commit), or
 * with the coordinator errors, KAAS_EGROUP_NONEMPTY (it has members),
 * KAAS_EGROUP_UNKNOWN (no members and no committed offsets) or -ENOMEM. */
void kaas_groups_delete(struct kaas_groups *g, const char *group, kaas_offsets_done done,
			void *ctx);

/* OffsetDelete (loop thread) of the listed partitions (batch valid until
 * done; statuses in: nonzero skips the partition).  A partition of a topic
 * some member of the group subscribes to (consumer protocol) gets
 * KAAS_EGROUP_SUBSCRIBED and is kept; the others' committed offsets are
 * erased durably.  Completes with 0, the coordinator errors,
 * KAAS_EGROUP_UNKNOWN or -ENOMEM. */
void kaas_groups_delete_offsets(struct kaas_groups *g, const char *group,
				struct kaas_offset_batch *batch, kaas_offsets_done done, void *ctx);

#endif
