/*
 * txn_store.h — the transaction coordinator's state on the cluster volume.
 *
 * One writer per transactional id: the leader of its coordinator slot (the
 * same slots as consumer groups, broker/agent.h), fenced by the slot's
 * leader epoch E exactly as group_store.h fences committed offsets:
 *
 *   <cluster>/txns/<enc>/fence/epoch-<E:020>     claims (contract/epoch_fence.h)
 *   <cluster>/txns/<enc>/state-<E:020>.json      the state, replaced per transition
 *
 * <enc> is kaas_group_dirname(transactional id).  A coordinator taking the
 * id over at E claims fence/epoch-E first, then loads the newest state
 * document and re-publishes it as state-E.json; every transition replaces
 * state-E.json and then checks that epoch E+1 is unclaimed (a zombie's late
 * rename lands in its own older file, which readers ignore, and it is told
 * KAAS_EFENCED).  Readers take the highest E.
 *
 * Outcome of a transaction for the consumer groups it committed offsets to
 * (group coordinators read these; see broker/groups/txn_offsets.c):
 *
 *   <cluster>/groups/<genc>/txn-commit-<pid:020>-<seq:020>   claims, empty
 *   <cluster>/groups/<genc>/txn-abort-<pid:020>-<seq:020>
 *
 * written by the transaction coordinator once the decision (PrepareCommit /
 * PrepareAbort) is durable, by exclusive create (a re-drive finds it there:
 * done).  seq is the transaction's number within the transactional id.
 *
 * Return values: >= 0 or -errno / kaas status (KAAS_EFENCED), detail in
 * kaas_sub_errdetail().  No threads: callers serialise per id.
 */
#ifndef KAAS_TXN_STORE_H
#define KAAS_TXN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cluster/group_store.h"
#include "substrate/substrate.h"

#define KAAS_TXNS_DIR "txns"

enum kaas_txn_state {
	KAAS_TXN_EMPTY = 0,
	KAAS_TXN_ONGOING,
	KAAS_TXN_PREPARE_COMMIT,
	KAAS_TXN_PREPARE_ABORT,
	KAAS_TXN_COMPLETE_COMMIT,
	KAAS_TXN_COMPLETE_ABORT,
};

struct kaas_txn_part {
	char *topic;
	int32_t partition;
};

struct kaas_txn_doc {
	char *txn_id;
	uint64_t epoch;            /* the coordinator epoch it is written under */
	int64_t producer_id;       /* -1: none yet */
	int16_t producer_epoch;
	int16_t timed_out_epoch;   /* the epoch a timeout abort fenced (KIP-360
	                              recovery), -1: none */
	int32_t timeout_ms;        /* transaction.timeout.ms of the producer */
	enum kaas_txn_state state;
	uint64_t seq;              /* the current (or last) transaction's number */
	int64_t start_ms;          /* wall clock: when it became Ongoing */
	int64_t update_ms;         /* wall clock: last transition */
	size_t nparts, capparts;
	struct kaas_txn_part *parts;
	size_t ngroups, capgroups;
	char **groups;
};

/* Kafka's names of the states ("Empty", "Ongoing", "PrepareCommit", ...). */
const char *kaas_txn_state_name(enum kaas_txn_state s);

/* Take the id over as its coordinator at `epoch` and load its newest state
 * into *d (an Empty state with producer_id -1 if it has none).  Errors:
 * KAAS_EFENCED (a newer or equal epoch is another coordinator's), -EBADMSG
 * (corrupt newest document: the id goes offline, never reset), -EEXIST (the
 * directory belongs to another id), or the substrate's -errno. */
int kaas_txn_open(struct kaas_substrate *cluster, const char *txn_id, uint64_t epoch,
		  struct kaas_txn_doc *d);

/* Read the newest state without taking the id over (group coordinators,
 * tools).  -ENOENT if it has none. */
int kaas_txn_peek(struct kaas_substrate *cluster, const char *txn_id, struct kaas_txn_doc *d);

/* Persist *d under d->epoch (replace state-E.json), then check the fence.
 * 0: durable and still ours.  KAAS_EFENCED: a newer coordinator took over,
 * do not act on it.  Older epochs' documents are pruned afterwards. */
int kaas_txn_write(struct kaas_substrate *cluster, const struct kaas_txn_doc *d);

/* Is `epoch` still the newest coordinator epoch of txn_id (no claim above
 * it in txns/<enc>/fence, a fresh check: contract/epoch_fence.h)?  0 yes,
 * KAAS_EFENCED superseded, or -errno.  For a coordinator about to act on
 * a state it holds in memory (a direct marker append). */
int kaas_txn_fence_check(struct kaas_substrate *cluster, const char *txn_id, uint64_t epoch);

/* Add a partition / group to the transaction in memory (no duplicates):
 * 1 added, 0 already there, -ENOMEM. */
int kaas_txn_add_part(struct kaas_txn_doc *d, const char *topic, int32_t partition);
int kaas_txn_add_group(struct kaas_txn_doc *d, const char *group);
int kaas_txn_has_group(const struct kaas_txn_doc *d, const char *group);
/* Forget the partitions and groups (a new transaction starts). */
void kaas_txn_clear_members(struct kaas_txn_doc *d);

/* A deep copy of *src into *dst: 0 or -ENOMEM. */
int kaas_txn_doc_copy(struct kaas_txn_doc *dst, const struct kaas_txn_doc *src);
void kaas_txn_doc_free(struct kaas_txn_doc *d);

/* Call each(ctx, enc) for every transactional id directory in txns/ (the
 * encoded names; the real id is in the documents).  0 or -errno. */
int kaas_txn_list_dirs(struct kaas_substrate *cluster,
		       void (*each)(void *ctx, const char *enc), void *ctx);
/* Read the newest state in txns/<enc>/ (kaas_txn_list_dirs' names). */
int kaas_txn_peek_dir(struct kaas_substrate *cluster, const char *enc, struct kaas_txn_doc *d);

/* Record the outcome of transaction (producer_id, seq) for `group`
 * (exclusive create; already there: 0).  0 or -errno. */
int kaas_txn_group_decide(struct kaas_substrate *cluster, const char *group, int64_t producer_id,
			  uint64_t seq, int commit);
/* The recorded outcome: 1 commit, 0 abort, -ENOENT none, or -errno.  Read
 * by a listing of the group's directory (fresh: a claim created before the
 * listing started is in it), never by a lookup by name. */
int kaas_txn_group_outcome(struct kaas_substrate *cluster, const char *group,
			   int64_t producer_id, uint64_t seq);
/* Remove a recorded outcome once applied (both kinds; absent is fine). */
void kaas_txn_group_forget(struct kaas_substrate *cluster, const char *group, int64_t producer_id,
			   uint64_t seq);


/* ------------------------------------------ pending transactional offsets
 * TxnOffsetCommit's offsets, held by the group's coordinator until the
 * transaction's outcome is known (txn_offsets_store.c):
 *
 *   <cluster>/groups/<genc>/txn-offsets-<pid:020>-<E:020>.json
 *
 * written (replace, then the group's fence checked) by the group's
 * coordinator at epoch E; the highest E of a producer id is its pending
 * state (a zombie's late rename lands in its own lower-E name). */
struct kaas_txn_pending {
	char *txn_id;
	int64_t producer_id;
	int16_t producer_epoch;
	uint64_t seq;              /* the transaction's number */
	uint64_t epoch;            /* the group coordinator epoch of the file */
	struct kaas_group_offsets offs; /* the offsets (commit_ms unused) */
};

/* Persist p at p->epoch for `group`; KAAS_EFENCED if the group's fence
 * moved past p->epoch (do not acknowledge).  0 or -errno. */
int kaas_txn_pending_write(struct kaas_substrate *cluster, const char *group,
			   const struct kaas_txn_pending *p);
/* Every pending state of `group` (the highest epoch per producer id):
 * 0 with *out (n entries; free with kaas_txn_pending_free_all), or -errno. */
int kaas_txn_pending_read_all(struct kaas_substrate *cluster, const char *group,
			      struct kaas_txn_pending **out, size_t *n);
/* Remove every file of producer_id's pending state (absent is fine). */
void kaas_txn_pending_remove(struct kaas_substrate *cluster, const char *group,
			     int64_t producer_id);
/* Remove outcome claims (txn-commit-/txn-abort-) of producer ids for which
 * keep(ctx, pid, seq) answers 0. */
void kaas_txn_outcomes_prune(struct kaas_substrate *cluster, const char *group,
			     int (*keep)(void *ctx, int64_t pid, uint64_t seq), void *ctx);
void kaas_txn_pending_free(struct kaas_txn_pending *p);

/* Helpers of the two store files.  <root>/<kaas_group_dirname(name)>: 0 or
 * -ENAMETOOLONG. */
int kaas_txn_named_dir(const char *root, const char *name, char *out, size_t size);
/* Unlink each name in dir for which match(ctx, name) holds (failures are
 * left for the next call; a missing dir is empty). */
void kaas_txn_unlink_matching(struct kaas_substrate *sub, const char *dir,
			      int (*match)(void *ctx, const char *name), void *ctx);
/* Write body (consumed) as a v1 document of `kind` at path, then check that
 * `fence` holds no epoch above `epoch`: 0, KAAS_EFENCED, or -errno. */
int kaas_txn_write_fenced(struct kaas_substrate *sub, const char *path, const char *kind,
			  cJSON *body, const char *fence, uint64_t epoch);
void kaas_txn_pending_free_all(struct kaas_txn_pending *v, size_t n);

#endif
