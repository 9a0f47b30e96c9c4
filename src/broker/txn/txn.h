/*
 * txn.h — the transaction coordinator (KIP-98) of one broker.
 *
 * A transactional id is coordinated by the leader of its coordinator slot
 * (the group slots: hash(id) mod coordinator_slots, broker/agent.h), at the
 * slot's leader epoch.  Its state lives on the cluster volume
 * (cluster/txn_store.h) and every transition is written there (and the
 * fence checked) before it is answered or acted on:
 *
 *   Empty / CompleteCommit / CompleteAbort --AddPartitions/AddOffsets-->
 *   Ongoing --EndTxn, timeout, fencing InitProducerId--> PrepareCommit /
 *   PrepareAbort --markers on every partition, outcome for every group-->
 *   CompleteCommit / CompleteAbort
 *
 * A Prepare* state is re-driven to its Complete* state by whichever broker
 * holds the slot: on every operation on the id, and by the service's
 * thread (txn/driver.c) for every id whose slot this broker leads, loaded
 * from the volume after a failover.  Markers are written by the
 * partition's leader: a direct call when that is this broker, otherwise a
 * request document on the cluster volume that the leader's txn thread
 * picks up (txn/markers.c); the log writes a marker once
 * (kaas_log_append_marker), so re-driving is safe.
 *
 * Threads: every function may be called from any thread except the loop
 * (they block on the volume); one mutex per transactional id serialises
 * its operations.  The statuses are util/status.h's (KAAS_ETXN_*,
 * KAAS_ENOT_COORDINATOR, KAAS_ENO_COORDINATOR) and -errno.
 *
 * Named pause steps: txn.open.before-fence-claim (cluster/txn_store.c),
 * txn.end.after-prepare, txn.complete.before-markers,
 * txn.complete.after-marker, txn.complete.before-complete,
 * txn.marker.before-append (the leader's side of a requested marker),
 * txn.marker.before-direct-append (a marker this broker writes on a
 * partition it leads, before the coordinator epoch's fence check).
 */
#ifndef KAAS_BROKER_TXN_H
#define KAAS_BROKER_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/txn_store.h"

struct kaas_broker;
struct kaas_txns;

/* Set up b->txns and start its thread (after the agent and topics).  The
 * largest transaction timeout accepted is max_timeout_ms.  0 or -errno. */
int kaas_txns_start(struct kaas_broker *b, int32_t max_timeout_ms, struct kaas_txns **out);
/* Stop the thread and free the service (NULL: no-op). */
void kaas_txns_stop(struct kaas_txns *t);

/* InitProducerId with a transactional id: the id's producer id and its
 * next epoch (a fresh producer id the first time, or when the epoch is
 * exhausted).  An Ongoing transaction is aborted first (at the bumped
 * epoch, fencing its producer).  req_pid/req_epoch (v3+, -1: none) must
 * name the current producer (else KAAS_ETXN_FENCED / KAAS_ETXN_PID_MAPPING).
 * KAAS_ETXN_TIMEOUT, KAAS_ETXN_CONCURRENT (a previous transaction is still
 * completing), coordinator errors. */
int kaas_txns_init_producer(struct kaas_txns *t, const char *txn_id, int32_t timeout_ms,
			    int64_t req_pid, int16_t req_epoch, int64_t *pid, int16_t *epoch);

/* AddPartitionsToTxn: 0 once every listed partition is recorded durably in
 * the (possibly new) Ongoing transaction. */
int kaas_txns_add_partitions(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch,
			     const struct kaas_txn_part *parts, size_t n);
/* AddOffsetsToTxn: the group joins the Ongoing transaction. */
int kaas_txns_add_group(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch,
			const char *group);
/* EndTxn: 0 once the decision (PrepareCommit / PrepareAbort) is durable;
 * the markers follow (now, or re-driven). */
int kaas_txns_end(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch, int commit);

/* DescribeTransactions: the state as this coordinator holds it (a deep
 * copy; free with kaas_txn_doc_free).  KAAS_ETXN_UNKNOWN for an id with no
 * state. */
int kaas_txns_describe(struct kaas_txns *t, const char *txn_id, struct kaas_txn_doc *out);
/* ListTransactions: each(ctx, doc) for every id coordinated here. */
int kaas_txns_list(struct kaas_txns *t, void (*each)(void *ctx, const struct kaas_txn_doc *d),
		   void *ctx);

/* For TxnOffsetCommit at a group coordinator (any broker): does
 * (pid, epoch) own txn_id's Ongoing transaction with `group` in it?  0 and
 * *seq (the transaction's number), KAAS_ETXN_FENCED, KAAS_ETXN_PID_MAPPING,
 * KAAS_ETXN_STATE, or -errno (read from the volume). */
int kaas_txns_check_offsets(struct kaas_broker *b, const char *txn_id, int64_t pid, int16_t epoch,
			    const char *group, uint64_t *seq);

#endif
