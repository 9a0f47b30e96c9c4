/*
 * txn_offsets.c — transactional offsets (TxnOffsetCommit) in the group
 * coordinator: held pending on the volume (cluster/txn_store.h,
 * txn-offsets-<pid>-<E>.json) until the transaction's coordinator records
 * its outcome for this group (txn-commit-/txn-abort-<pid>-<seq>), then
 * folded into the committed offsets (commit) or dropped (abort).
 *
 * Settling runs on the work thread at the start of every group operation
 * while anything is pending (and at every load), so OffsetFetch answers
 * from settled state; an offset still pending is reported unstable
 * (OffsetFetch's require_stable: UNSTABLE_OFFSET_COMMIT).  Applying is
 * idempotent: the committed offsets are written (and fenced) first, the
 * pending file and the outcome are removed after, so a crash in between
 * applies the same offsets again at the next load.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/groups/internal.h"
#include "broker/txn/txn.h"
#include "contract/contract.h"
#include "util/logger.h"
#include "util/status.h"
#include "util/step.h"

void kaas_groups_txn_free(struct group *gr)
{
	kaas_txn_pending_free_all(gr->txnp, gr->ntxnp);
	gr->txnp = NULL;
	gr->ntxnp = 0;
}

/* What became of pending state p: 1 committed, 0 aborted (or abandoned:
 * its transaction moved on without an outcome for this group), 2 still
 * open, or -errno (ask again later).
 *
 * The transaction's state first, the outcome claim second: the
 * coordinator creates the claim before it writes Complete* (and before a
 * later transaction of the id starts), so once the state shows the
 * transaction moved on, a claim it was given is on the volume, and the
 * claim's fresh listing (kaas_txn_group_outcome) shows it.  The other
 * order took a commit landing between the two reads for an abort. */
static int outcome(struct kaas_substrate *cl, const char *group, const struct kaas_txn_pending *p)
{
	struct kaas_txn_doc d;
	int rc = kaas_txn_peek(cl, p->txn_id, &d);
	if (rc == -ENOENT) {
		/* "No state" may be this host's cached "no such name" for
		 * txns/<enc> or txns/ (contract.h, "fresh lookups"): believed,
		 * an open transaction's offsets were dropped as abandoned. */
		char dir[512];
		rc = kaas_txn_named_dir(KAAS_TXNS_DIR, p->txn_id, dir, sizeof dir);
		if (rc == 0)
			rc = kaas_revalidate_parents(cl, dir);
		if (rc == 0)
			rc = kaas_txn_peek(cl, p->txn_id, &d);
	}
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0) {
		int open = d.producer_id == p->producer_id && d.seq == p->seq &&
			   (d.state == KAAS_TXN_ONGOING || d.state == KAAS_TXN_PREPARE_COMMIT ||
			    d.state == KAAS_TXN_PREPARE_ABORT);
		kaas_txn_doc_free(&d);
		if (open)
			return 2;
	}
	kaas_step("group.txn.outcome-between-checks");
	rc = kaas_txn_group_outcome(cl, group, p->producer_id, p->seq);
	return rc == -ENOENT ? 0 : rc;
}

static void apply(struct group *gr, const struct kaas_txn_pending *p, int64_t now, int *rc)
{
	for (size_t i = 0; *rc == 0 && i < p->offs.n; i++) {
		const struct kaas_committed *c = &p->offs.items[i];
		*rc = kaas_group_set(&gr->offs, c->topic, c->partition, c->offset, c->leader_epoch,
				     c->metadata, now);
		if (*rc == 0)
			*rc = kaas_group_set_topic_id(&gr->offs, c->topic, c->partition, c->topic_id);
	}
}

struct keep_ctx {
	const struct kaas_txn_pending *v;
	size_t n;
};

/* Keep an outcome claim only while its pending state is still there. */
static int keep_outcome(void *ctx, int64_t pid, uint64_t seq)
{
	struct keep_ctx *k = ctx;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].producer_id == pid && k->v[i].seq == seq)
			return 1;
	return 0;
}

int kaas_groups_txn_settle(struct group *gr)
{
	struct kaas_substrate *cl = gr->reg->b->cluster;
	kaas_groups_txn_free(gr);
	struct kaas_txn_pending *v;
	size_t n;
	int rc = kaas_txn_pending_read_all(cl, gr->id, &v, &n);
	if (rc < 0)
		return rc;
	int *fate = calloc(n + 1, sizeof *fate);
	if (!fate) {
		kaas_txn_pending_free_all(v, n);
		return -ENOMEM;
	}
	int applied = 0;
	int64_t now = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		fate[i] = outcome(cl, gr->id, &v[i]);
		if (fate[i] < 0)
			fate[i] = 2; /* unknown now: keep it pending */
		if (fate[i] == 1) {
			apply(gr, &v[i], now, &rc);
			applied = 1;
		}
	}
	if (rc == 0 && applied)
		rc = kaas_group_commit(cl, &gr->offs);
	if (rc < 0) {
		free(fate);
		kaas_txn_pending_free_all(v, n);
		return rc;
	}
	/* Decided ones leave the volume; the undecided stay in memory. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (fate[i] == 2) {
			if (k != i)
				v[k] = v[i];
			k++;
			continue;
		}
		kaas_info("group %s: transactional offsets of producer %" PRId64 " (transaction %"
			  PRIu64 ") %s", gr->id, v[i].producer_id, v[i].seq,
			  fate[i] == 1 ? "committed" : "dropped (aborted)");
		kaas_txn_pending_remove(cl, gr->id, v[i].producer_id);
		kaas_txn_pending_free(&v[i]);
	}
	struct keep_ctx kc = { v, k };
	kaas_txn_outcomes_prune(cl, gr->id, keep_outcome, &kc);
	free(fate);
	if (k == 0) {
		free(v);
		v = NULL;
	}
	gr->txnp = v;
	gr->ntxnp = k;
	return 0;
}

int kaas_groups_txn_work(struct group *gr, struct kaas_group_txn_commit *rq)
{
	struct kaas_broker *b = gr->reg->b;
	uint64_t seq;
	int rc = kaas_txns_check_offsets(b, rq->txn_id, rq->producer_id, rq->producer_epoch,
					 gr->id, &seq);
	if (rc < 0)
		return rc;
	/* The producer's pending state for this transaction, or a new one. */
	struct kaas_txn_pending *p = NULL;
	for (size_t i = 0; i < gr->ntxnp; i++)
		if (gr->txnp[i].producer_id == rq->producer_id)
			p = &gr->txnp[i];
	if (p && p->seq != seq)
		return KAAS_ETXN_STATE; /* the previous one is not settled yet */
	if (!p) {
		struct kaas_txn_pending *nv = realloc(gr->txnp, (gr->ntxnp + 1) * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		gr->txnp = nv;
		p = &nv[gr->ntxnp++];
		memset(p, 0, sizeof *p);
		p->producer_id = rq->producer_id;
		p->seq = seq;
		if (!(p->txn_id = strdup(rq->txn_id)) || !(p->offs.group = strdup(gr->id)))
			return -ENOMEM; /* freed with the list */
	}
	p->producer_epoch = rq->producer_epoch;
	p->epoch = gr->offs.epoch;
	for (int32_t i = 0; i < rq->batch.nt; i++) {
		const struct kaas_offset_topic *t = &rq->batch.topics[i];
		for (int32_t j = 0; j < t->n; j++) {
			const struct kaas_offset_part *q = &t->parts[j];
			if (q->status)
				continue;
			rc = kaas_group_set(&p->offs, t->name, q->partition, q->offset, q->leader_epoch,
					    q->metadata, 0);
			if (rc == 0)
				rc = kaas_group_set_topic_id(&p->offs, t->name, q->partition, t->topic_id);
			if (rc < 0)
				return rc;
		}
	}
	rc = kaas_txn_pending_write(b->cluster, gr->id, p);
	if (rc < 0)
		kaas_warn("group %s: transactional offsets not durable: %s (%s)", gr->id,
			  kaas_strerror(rc), kaas_sub_errdetail());
	return rc;
}

int kaas_groups_txn_unstable(const struct group *gr, const char *topic, int32_t partition)
{
	for (size_t i = 0; i < gr->ntxnp; i++)
		if (kaas_group_get(&gr->txnp[i].offs, topic, partition))
			return 1;
	return 0;
}
