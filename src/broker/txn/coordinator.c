/*
 * coordinator.c — the transactional ids coordinated here and the
 * operations of the transactional producer on them (txn.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "broker/groups/groups.h"
#include "broker/txn/internal.h"
#include "cluster/producer_ids.h"
#include "util/logger.h"
#include "util/status.h"
#include "util/step.h"
#include "util/lock_rank.h"

int64_t kaas_txn_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The slot epoch this broker coordinates id at: 0 and *epoch, or
 * KAAS_ENOT_COORDINATOR / KAAS_ENO_COORDINATOR. */
static int slot_epoch(struct kaas_txns *t, const char *id, uint64_t *epoch)
{
	struct kaas_broker *b = t->b;
	*epoch = b->draining ? 0 : kaas_groups_coordinator_epoch(b->groups, id);
	if (*epoch)
		return 0;
	int32_t leader;
	uint32_t e;
	if (!b->agent || kaas_agent_coordinator(b->agent, id, strlen(id), &leader, &e) < 0)
		return KAAS_ENO_COORDINATOR;
	return leader == b->cfg.broker_id && !b->draining ? KAAS_ENO_COORDINATOR
							   : KAAS_ENOT_COORDINATOR;
}

int kaas_txn_acquire(struct kaas_txns *t, const char *id, struct txn_entry **out)
{
	if (!t)
		return KAAS_ENO_COORDINATOR; /* no coordinator service (tools, the fuzzer) */
	kaas_lock(&t->mu, KAAS_RANK_LEAF);
	struct txn_entry *e = t->list;
	while (e && strcmp(e->id, id))
		e = e->next;
	if (!e) {
		e = calloc(1, sizeof *e);
		if (!e || !(e->id = strdup(id))) {
			free(e);
			kaas_unlock(&t->mu);
			return -ENOMEM;
		}
		pthread_mutex_init(&e->mu, NULL);
		e->next = t->list;
		t->list = e;
	}
	kaas_unlock(&t->mu);
	kaas_lock(&e->mu, KAAS_RANK_TXN_ENTRY);
	uint64_t epoch;
	int rc = slot_epoch(t, id, &epoch);
	if (rc == 0 && e->epoch != epoch) {
		if (e->epoch)
			kaas_txn_doc_free(&e->doc);
		e->epoch = 0;
		rc = kaas_txn_open(t->b->cluster, id, epoch, &e->doc);
		if (rc == 0) {
			e->epoch = epoch;
			kaas_info("transactional id %s: coordinating at epoch %" PRIu64 " (%s, producer %"
				  PRId64 "/%d)", id, epoch, kaas_txn_state_name(e->doc.state),
				  e->doc.producer_id, e->doc.producer_epoch);
		} else {
			kaas_warn("transactional id %s: cannot take over at epoch %" PRIu64 ": %s (%s)",
				  id, epoch, kaas_strerror(rc), kaas_sub_errdetail());
			rc = rc == KAAS_EFENCED ? KAAS_ENOT_COORDINATOR : KAAS_ENO_COORDINATOR;
		}
	} else if (rc < 0 && e->epoch) {
		kaas_txn_doc_free(&e->doc);
		e->epoch = 0;
	}
	if (rc < 0) {
		kaas_unlock(&e->mu);
		return rc;
	}
	*out = e;
	return 0;
}

void kaas_txn_release(struct txn_entry *e)
{
	kaas_unlock(&e->mu);
}

int kaas_txn_commit_doc(struct kaas_txns *t, struct txn_entry *e)
{
	e->doc.update_ms = kaas_txn_wall_ms();
	int rc = kaas_txn_write(t->b->cluster, &e->doc);
	if (rc < 0) {
		kaas_warn("transactional id %s: %s not durable: %s (%s)", e->id,
			  kaas_txn_state_name(e->doc.state), kaas_strerror(rc), kaas_sub_errdetail());
		kaas_txn_doc_free(&e->doc);
		e->epoch = 0; /* reload before serving again */
		return rc == KAAS_EFENCED ? KAAS_ENOT_COORDINATOR : KAAS_ENO_COORDINATOR;
	}
	return 0;
}

/* Is (pid, epoch) the id's producer?  0 or the status Kafka answers. */
static int check_producer(const struct kaas_txn_doc *d, int64_t pid, int16_t epoch)
{
	if (d->producer_id != pid)
		return KAAS_ETXN_PID_MAPPING;
	if (d->producer_epoch != epoch)
		return KAAS_ETXN_FENCED;
	return 0;
}

static int completing(enum kaas_txn_state s)
{
	return s == KAAS_TXN_PREPARE_COMMIT || s == KAAS_TXN_PREPARE_ABORT;
}

/* A Prepare* left by a crash or by markers not yet written: drive it. */
static int settle_previous(struct kaas_txns *t, struct txn_entry *e)
{
	return completing(e->doc.state) ? kaas_txn_complete(t, e) : 0;
}

int kaas_txns_init_producer(struct kaas_txns *t, const char *txn_id, int32_t timeout_ms,
			    int64_t req_pid, int16_t req_epoch, int64_t *pid, int16_t *epoch)
{
	if (timeout_ms <= 0 || timeout_ms > t->max_timeout_ms)
		return KAAS_ETXN_TIMEOUT;
	struct txn_entry *e;
	int rc = kaas_txn_acquire(t, txn_id, &e);
	if (rc < 0)
		return rc;
	struct kaas_txn_doc *d = &e->doc;
	if (req_pid >= 0 && d->producer_id >= 0)
		rc = check_producer(d, req_pid, req_epoch);
	else if (req_pid >= 0)
		rc = KAAS_ETXN_PID_MAPPING;
	/* KIP-360: a producer whose transaction timed out (aborted here at its
	 * epoch + 1, nothing since) may recover with the epoch it had. */
	if (rc == KAAS_ETXN_FENCED && d->state == KAAS_TXN_COMPLETE_ABORT &&
	    d->timed_out_epoch >= 0 && req_epoch == d->timed_out_epoch)
		rc = 0;
	if (rc == 0)
		rc = settle_previous(t, e);
	if (rc == 0 && d->state == KAAS_TXN_ONGOING) {
		/* The producer's open transaction is aborted, fencing it. */
		kaas_info("transactional id %s: InitProducerId aborts the open transaction %" PRIu64,
			  txn_id, d->seq);
		rc = kaas_txn_decide(t, e, 0, 1);
	}
	if (rc == 0 && completing(d->state))
		rc = KAAS_ETXN_CONCURRENT;
	if (rc == 0) {
		if (d->producer_id < 0 || d->producer_epoch >= INT16_MAX - 1) {
			int64_t fresh;
			rc = kaas_pid_next(t->b->pids, &fresh);
			if (rc == 0) {
				d->producer_id = fresh;
				d->producer_epoch = 0;
			}
		} else {
			d->producer_epoch++;
		}
	}
	if (rc == 0) {
		kaas_txn_clear_members(d);
		d->state = KAAS_TXN_EMPTY;
		d->timed_out_epoch = -1;
		d->timeout_ms = timeout_ms;
		rc = kaas_txn_commit_doc(t, e);
	}
	if (rc == 0) {
		*pid = d->producer_id;
		*epoch = d->producer_epoch;
	}
	kaas_txn_release(e);
	return rc;
}

/* The common start of AddPartitions / AddOffsets: the producer checked, a
 * finished transaction completed, a new one begun (not yet written). */
static int begin_or_continue(struct kaas_txns *t, struct txn_entry *e, int64_t pid, int16_t epoch)
{
	struct kaas_txn_doc *d = &e->doc;
	int rc = check_producer(d, pid, epoch);
	if (rc == 0)
		rc = settle_previous(t, e);
	if (rc < 0)
		return rc;
	if (d->state != KAAS_TXN_ONGOING) {
		d->timed_out_epoch = -1;
		kaas_txn_clear_members(d);
		d->state = KAAS_TXN_ONGOING;
		d->seq++;
		d->start_ms = kaas_txn_wall_ms();
	}
	return 0;
}

/* AddPartitionsToTxn (parts) and AddOffsetsToTxn (group): the members
 * join the (possibly new) Ongoing transaction, written before answering. */
static int add_members(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch,
		       const struct kaas_txn_part *parts, size_t n, const char *group)
{
	struct txn_entry *e;
	int rc = kaas_txn_acquire(t, txn_id, &e);
	if (rc < 0)
		return rc;
	int began = e->doc.state != KAAS_TXN_ONGOING;
	rc = begin_or_continue(t, e, pid, epoch);
	int changed = rc == 0 && began;
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		rc = kaas_txn_add_part(&e->doc, parts[i].topic, parts[i].partition);
		changed |= rc > 0;
	}
	if (rc >= 0 && group) {
		rc = kaas_txn_add_group(&e->doc, group);
		changed |= rc > 0;
	}
	if (rc >= 0 && changed) {
		rc = kaas_txn_commit_doc(t, e);
	} else if (rc == -ENOMEM) { /* memory and volume may differ: reload */
		kaas_txn_doc_free(&e->doc);
		e->epoch = 0;
	}
	kaas_txn_release(e);
	return rc < 0 ? rc : 0;
}

int kaas_txns_add_partitions(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch,
			     const struct kaas_txn_part *parts, size_t n)
{
	return add_members(t, txn_id, pid, epoch, parts, n, NULL);
}

int kaas_txns_add_group(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch,
			const char *group)
{
	return add_members(t, txn_id, pid, epoch, NULL, 0, group);
}

int kaas_txns_end(struct kaas_txns *t, const char *txn_id, int64_t pid, int16_t epoch, int commit)
{
	struct txn_entry *e;
	int rc = kaas_txn_acquire(t, txn_id, &e);
	if (rc < 0)
		return rc;
	struct kaas_txn_doc *d = &e->doc;
	rc = check_producer(d, pid, epoch);
	enum kaas_txn_state done = commit ? KAAS_TXN_COMPLETE_COMMIT : KAAS_TXN_COMPLETE_ABORT;
	enum kaas_txn_state prep = commit ? KAAS_TXN_PREPARE_COMMIT : KAAS_TXN_PREPARE_ABORT;
	if (rc < 0) {
		/* fall through with the producer's error */
	} else if (d->state == KAAS_TXN_ONGOING) {
		rc = kaas_txn_decide(t, e, commit, 0);
		if (rc == KAAS_ETXN_CONCURRENT)
			rc = 0; /* decided: the markers follow */
	} else if (d->state == done) {
		rc = 0; /* a retry of the EndTxn that completed it */
	} else if (d->state == prep) {
		rc = kaas_txn_complete(t, e);
		if (rc == KAAS_ETXN_CONCURRENT)
			rc = 0;
	} else {
		rc = KAAS_ETXN_STATE;
	}
	kaas_txn_release(e);
	return rc;
}

int kaas_txn_decide(struct kaas_txns *t, struct txn_entry *e, int commit, int bump)
{
	struct kaas_txn_doc *d = &e->doc;
	if (bump) {
		if (d->producer_epoch >= INT16_MAX - 1)
			return KAAS_ETXN_CONCURRENT; /* cannot fence by epoch: let it time out */
		d->producer_epoch++;
	}
	d->state = commit ? KAAS_TXN_PREPARE_COMMIT : KAAS_TXN_PREPARE_ABORT;
	int rc = kaas_txn_commit_doc(t, e);
	if (rc < 0)
		return rc;
	kaas_info("transactional id %s: transaction %" PRIu64 " of producer %" PRId64 "/%d: %s "
		  "(%zu partitions, %zu groups)", e->id, d->seq, d->producer_id, d->producer_epoch,
		  kaas_txn_state_name(d->state), d->nparts, d->ngroups);
	kaas_step("txn.end.after-prepare");
	return kaas_txn_complete(t, e);
}

int kaas_txns_describe(struct kaas_txns *t, const char *txn_id, struct kaas_txn_doc *out)
{
	struct txn_entry *e;
	int rc = kaas_txn_acquire(t, txn_id, &e);
	if (rc < 0)
		return rc;
	if (e->doc.producer_id < 0)
		rc = KAAS_ETXN_UNKNOWN;
	else
		rc = kaas_txn_doc_copy(out, &e->doc);
	kaas_txn_release(e);
	return rc;
}

int kaas_txns_list(struct kaas_txns *t, void (*each)(void *ctx, const struct kaas_txn_doc *d),
		   void *ctx)
{
	if (!t)
		return 0;
	/* A snapshot of the ids, then each under its own lock. */
	kaas_lock(&t->mu, KAAS_RANK_LEAF);
	size_t n = 0;
	for (struct txn_entry *e = t->list; e; e = e->next)
		n++;
	struct txn_entry **v = calloc(n ? n : 1, sizeof *v);
	n = 0;
	for (struct txn_entry *e = t->list; v && e; e = e->next)
		v[n++] = e;
	kaas_unlock(&t->mu);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct txn_entry *e;
		if (kaas_txn_acquire(t, v[i]->id, &e) < 0)
			continue;
		if (e->doc.producer_id >= 0)
			each(ctx, &e->doc);
		kaas_txn_release(e);
	}
	free(v);
	return 0;
}

int kaas_txns_check_offsets(struct kaas_broker *b, const char *txn_id, int64_t pid, int16_t epoch,
			    const char *group, uint64_t *seq)
{
	struct kaas_txn_doc d;
	int rc = kaas_txn_peek(b->cluster, txn_id, &d);
	if (rc == -ENOENT)
		return KAAS_ETXN_PID_MAPPING;
	if (rc < 0)
		return rc;
	rc = check_producer(&d, pid, epoch);
	if (rc == 0 && (d.state != KAAS_TXN_ONGOING || !kaas_txn_has_group(&d, group)))
		rc = KAAS_ETXN_STATE;
	*seq = d.seq;
	kaas_txn_doc_free(&d);
	return rc;
}
