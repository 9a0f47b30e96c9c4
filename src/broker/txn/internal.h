/*
 * internal.h — what the parts of the transaction coordinator share
 * (coordinator.c: ids and operations; complete.c: driving a decision to its
 * end; markers.c: the channel to partition leaders; driver.c: the thread).
 */
#ifndef KAAS_BROKER_TXN_INTERNAL_H
#define KAAS_BROKER_TXN_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "broker/txn/txn.h"
#include "cluster/txn_store.h"

struct kaas_broker;

/* One transactional id this broker has touched. */
struct txn_entry {
	struct txn_entry *next;
	char *id;
	pthread_mutex_t mu;         /* serialises the id's operations */
	uint64_t epoch;             /* the slot epoch doc is loaded at; 0: not loaded */
	struct kaas_txn_doc doc;    /* valid when epoch != 0 */
	uint64_t warned_ms;         /* last "not written yet" warning (1 per 5 s) */
};

struct kaas_txns {
	struct kaas_broker *b;
	int32_t max_timeout_ms;
	pthread_mutex_t mu;         /* list, stop */
	pthread_cond_t cv;
	struct txn_entry *list;
	int stop;
	pthread_t thread;
	int started;
};

/* Wall clock in ms (the documents' times). */
int64_t kaas_txn_wall_ms(void);

/* The entry for id, locked and loaded at the slot epoch this broker holds:
 * 0 and *out (unlock with txn_release), or a coordinator status. */
int kaas_txn_acquire(struct kaas_txns *t, const char *id, struct txn_entry **out);
void kaas_txn_release(struct txn_entry *e);

/* Write e->doc (a transition made in memory): 0, or the failure (the entry
 * is then unloaded: the next operation reloads from the volume). */
int kaas_txn_commit_doc(struct kaas_txns *t, struct txn_entry *e);

/* Drive a Prepare* state to Complete* (entry locked): 0 when complete (or
 * nothing to do), KAAS_ETXN_CONCURRENT while markers are outstanding, or
 * a failure. */
int kaas_txn_complete(struct kaas_txns *t, struct txn_entry *e);

/* Decide an Ongoing transaction (entry locked): PrepareCommit/PrepareAbort
 * written, then completion tried once.  bump: raise the producer epoch
 * first (an abort that fences the producer: timeout, InitProducerId). */
int kaas_txn_decide(struct kaas_txns *t, struct txn_entry *e, int commit, int bump);

/* Have the leader of part write the marker of d's decision: 1 durable (or
 * not needed: the topic is gone, deleted or marked deleting), 0 requested
 * (ask again later), or a failure.  KAAS_ETXN_COORD_FENCED: d->epoch is no
 * longer the id's coordinator epoch (found by the fence check before a
 * direct append, or by the partition), the state in memory is stale.
 * *fresh: 1 when the coordinator epoch was checked already in this pass
 * over d's partitions (0 at the start of the pass); set by the check. */
int kaas_txn_marker(struct kaas_txns *t, const struct kaas_txn_doc *d,
		    const struct kaas_txn_part *part, int commit, int *fresh);
/* Remove the requests and replies of d's transaction (done). */
void kaas_txn_markers_forget(struct kaas_txns *t, const struct kaas_txn_doc *d);
/* The leader's side (the txn thread): one listing of txn-markers/, the
 * markers requested of partitions this broker leads written; with sweep,
 * also the replies whose transaction moved on removed (left by a
 * coordinator that died between Complete* and its unlink).  The number of
 * requests listed (0: idle, or no directory yet), or the listing's -errno. */
int kaas_txn_markers_serve(struct kaas_txns *t, int sweep);

/* The thread's body: re-drive, time out, serve marker requests. */
void *kaas_txn_driver_main(void *arg);

#endif
