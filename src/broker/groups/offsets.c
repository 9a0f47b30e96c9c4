/*
 * offsets.c — committed offsets of the groups this broker coordinates: a
 * queue of commit and fetch operations per group, run one at a time in
 * arrival order over cluster/group_store.h.
 *
 * Checks run on the loop thread; the volume work (loading the group's
 * committed offsets on first use at the slot's epoch, kaas_group_commit)
 * runs on libuv's work queue, one operation per group at a time, so two
 * commits never race on the group's document.  A commit completes with 0
 * only after kaas_group_commit returned 0 (durable and not fenced); when it
 * fails the in-memory state is dropped and reloaded from the volume by the
 * next operation, so nothing not durable is ever served.  See groups.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/broker.h"
#include "broker/groups/internal.h"
#include "util/logger.h"
#include "util/status.h"

struct group_op {
	struct group_op *next;
	struct group *gr;
	struct kaas_group_commit *commit; /* a commit's request, else NULL */
	struct kaas_group_txn_commit *txn; /* a TxnOffsetCommit's, else NULL */
	struct kaas_offset_batch *batch;  /* what to fetch or erase (NULL: all) */
	int erase;                /* DeleteGroups / OffsetDelete */
	int expire_only;          /* the timer's erasure of expired offsets */
	int load_only;            /* a takeover's load of a group found with
	                             offsets (discover.c), answered to nobody */
	int64_t empty_since_ms;   /* the group had no members when queued: when
	                             it emptied (0: unknown); -1: it had some */
	int members;              /* an erase: the group had members when queued */
	kaas_offsets_done done;
	void *ctx;
	int status;               /* the answer's (set before or after the work) */
	int rc;                   /* the work's result (work thread) */
};

int64_t kaas_groups_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Has committed offset c expired, in a group without members that
 * emptied at empty_since (0: not known)?  A commit without a time (older
 * documents) expires only from when the group emptied. */
static int expired(const struct kaas_committed *c, int64_t empty_since, int64_t retention,
		   int64_t now)
{
	int64_t from = c->commit_ms > empty_since ? c->commit_ms : empty_since;
	return from > 0 && now - from >= retention;
}

static void topic_id_hex(const struct kaas_topic *kt, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", kt->id[i]);
}

/* Was commit c made to the incarnation of its topic listed now?  Offsets
 * are committed per incarnation (names are not identities): after a delete
 * and re-create, the earlier incarnation's offsets are not the new one's.
 * A commit without an id (made before ids were recorded), or a topic not
 * listed here, is taken as it is. */
static int same_incarnation(struct kaas_broker *b, const struct kaas_committed *c)
{
	if (!c->topic_id[0])
		return 1;
	struct kaas_topic *kt = kaas_topics_get(b->topics, c->topic, (int)strlen(c->topic));
	if (!kt)
		return 1;
	char hex[33];
	topic_id_hex(kt, hex);
	kaas_topic_put(kt);
	return strcmp(hex, c->topic_id) == 0;
}

static void set_part(struct kaas_offset_part *p, const struct kaas_committed *c)
{
	p->offset = c ? c->offset : -1;
	p->leader_epoch = c ? c->leader_epoch : -1;
	p->metadata = c ? c->metadata : NULL;
}

/* A fetch of every committed offset: the group's topics in the order of
 * their first commit, each with its partitions.  0, or -ENOMEM. */
static int fetch_all(struct group *gr, const struct kaas_group_offsets *g,
		     struct kaas_offset_batch *out)
{
	memset(out, 0, sizeof(*out));
	if (!g || g->n == 0)
		return 0;
	struct kaas_broker *b = gr->reg->b;
	if (!(out->topics = calloc(g->n, sizeof(*out->topics))))
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		const struct kaas_committed *c = &g->items[i];
		struct kaas_offset_topic *t = NULL;
		for (int32_t k = 0; k < out->nt && !t; k++)
			if (strcmp(out->topics[k].name, c->topic) == 0)
				t = &out->topics[k];
		if (!t) {
			t = &out->topics[out->nt++];
			t->name = c->topic;
			if (!(t->parts = calloc(g->n - i, sizeof(*t->parts))))
				return -ENOMEM;
		}
		struct kaas_offset_part *p = &t->parts[t->n++];
		p->partition = c->partition;
		set_part(p, same_incarnation(b, c) ? c : NULL);
	}
	return 0;
}

static void fetch_all_free(struct kaas_offset_batch *v)
{
	for (int32_t i = 0; i < v->nt; i++)
		free(v->topics[i].parts);
	free(v->topics);
}

/* Complete op (loop thread): a fetch reads the group's loaded state now. */
static void answer(struct group_op *op)
{
	if (op->expire_only || op->load_only)
		return;
	if (op->erase) {
		op->done(op->ctx, op->status, op->batch);
		return;
	}
	if (op->commit) {
		op->done(op->ctx, op->status, &op->commit->batch);
		return;
	}
	if (op->txn) {
		op->done(op->ctx, op->status, &op->txn->batch);
		return;
	}
	struct group *gr = op->gr;
	const struct kaas_group_offsets *g = gr && gr->loaded && !op->status ? &gr->offs : NULL;
	if (!op->batch) {
		struct kaas_offset_batch all;
		int rc = fetch_all(gr, g, &all);
		if (rc < 0) {
			fetch_all_free(&all);
			memset(&all, 0, sizeof(all));
		}
		op->done(op->ctx, rc < 0 ? rc : op->status, &all);
		fetch_all_free(&all);
		return;
	}
	for (int32_t i = 0; i < op->batch->nt; i++) {
		struct kaas_offset_topic *t = &op->batch->topics[i];
		for (int32_t j = 0; j < t->n; j++) {
			const struct kaas_committed *c =
				g && t->name ? kaas_group_get(g, t->name, t->parts[j].partition) : NULL;
			if (c && !same_incarnation(gr->reg->b, c))
				c = NULL; /* an earlier incarnation's: none */
			set_part(&t->parts[j], c);
			if (g && t->name && kaas_groups_txn_unstable(gr, t->name, t->parts[j].partition))
				t->parts[j].status = KAAS_EUNSTABLE_OFFSET;
		}
	}
	op->done(op->ctx, op->status, op->batch);
}

/* ------------------------------------------------------------ the queue */

static void run_next(struct group *gr);

/* Apply topic t's partitions not refused to the loaded state: how many,
 * or -ENOMEM. */
static int apply_topic(struct group *gr, const struct kaas_offset_topic *t, int64_t now)
{
	int n = 0;
	for (int32_t j = 0; j < t->n; j++) {
		const struct kaas_offset_part *p = &t->parts[j];
		int rc = p->status ? 0
				   : kaas_group_set(&gr->offs, t->name, p->partition, p->offset,
						    p->leader_epoch, p->metadata, now);
		if (rc == 0 && !p->status)
			rc = kaas_group_set_topic_id(&gr->offs, t->name, p->partition, t->topic_id);
		if (rc < 0)
			return rc;
		n += !p->status;
	}
	return n;
}

/* Apply a commit's partitions to the loaded state: 1 if any, 0 if none,
 * or -ENOMEM. */
static int apply_commit(struct group *gr, struct kaas_offset_batch *batch)
{
	int64_t now = kaas_groups_wall_ms(); /* expiry counts from it */
	int any = 0;
	for (int32_t i = 0; i < batch->nt; i++) {
		int n = apply_topic(gr, &batch->topics[i], now);
		if (n < 0)
			return n;
		any |= n > 0;
	}
	return any;
}

/* Work queue, after the load: forget the offsets an erase names (batch
 * NULL: every one) and persist what is left.  0 or a status. */
static int erase_work(struct group *gr, struct kaas_offset_batch *batch, int members)
{
	size_t gone = 0;
	if (gr->offs.n == 0 && !members)
		return KAAS_EGROUP_UNKNOWN;
	if (!batch) {
		gone = kaas_group_forget_all(&gr->offs);
	}
	for (int32_t i = 0; batch && i < batch->nt; i++) {
		struct kaas_offset_topic *t = &batch->topics[i];
		for (int32_t j = 0; t->name && j < t->n; j++)
			if (!t->parts[j].status)
				gone += (size_t)kaas_group_forget(&gr->offs, t->name,
								  t->parts[j].partition);
	}
	if (!gone)
		return 0;
	int rc = kaas_group_commit(gr->reg->b->cluster, &gr->offs);
	if (rc < 0) {
		kaas_warn("group %s: erasing offsets not durable: %s (%s)", gr->id,
			  kaas_strerror(rc), kaas_sub_errdetail());
		gr->loaded = 0; /* reload from the volume before serving again */
	}
	return rc;
}

/* Work queue, after the load, when the group had no members as the
 * operation was queued: forget its expired offsets and persist what is
 * left.  0 or -errno (then the state is reloaded before serving). */
static int expire_work(struct group *gr, int64_t empty_since)
{
	int64_t now = kaas_groups_wall_ms(), retention = gr->reg->retention_ms;
	size_t gone = 0;
	for (size_t i = 0; i < gr->offs.n;) {
		const struct kaas_committed *c = &gr->offs.items[i];
		if (!expired(c, empty_since, retention, now)) {
			i++;
			continue;
		}
		kaas_info("group %s: committed offset %s/%d expired (offsets.retention.minutes)",
			  gr->id, c->topic, c->partition);
		gone += (size_t)kaas_group_forget(&gr->offs, c->topic, c->partition);
	}
	int rc = gone ? kaas_group_commit(gr->reg->b->cluster, &gr->offs) : 0;
	if (rc < 0) {
		kaas_warn("group %s: erasing expired offsets not durable: %s (%s)", gr->id,
			  kaas_strerror(rc), kaas_sub_errdetail());
		gr->loaded = 0;
	}
	return rc;
}

/* Work queue: load the group if needed, then apply and persist a commit. */
static void op_work(void *arg)
{
	struct group *gr = arg;
	struct group_op *op = gr->ops_head;
	struct kaas_substrate *cluster = gr->reg->b->cluster;
	op->rc = 0;
	if (!gr->loaded && !op->commit && !op->txn && !op->load_only) {
		/* An operation that only reads or erases takes nothing over
		 * when the volume holds nothing for the group: a fetch or a
		 * DeleteGroups of a name nobody committed to (or one deleted)
		 * creates no groups/<name>/ and leaves no group behind. */
		size_t n;
		int st = kaas_group_has_state(cluster, gr->id, &n);
		if (st < 0) {
			kaas_warn("group %s: cannot read committed offsets: %s (%s)", gr->id,
				  kaas_strerror(st), kaas_sub_errdetail());
			op->rc = st;
			return;
		}
		if (st == 0) {
			if (op->erase && !op->members)
				op->status = KAAS_EGROUP_UNKNOWN;
			return;
		}
	}
	if (!gr->loaded) {
		kaas_group_offsets_free(&gr->offs);
		memset(&gr->offs, 0, sizeof(gr->offs));
		/* The slot's epoch now (0: no longer ours, so never take over). */
		uint64_t epoch = kaas_groups_coordinator_epoch(gr->reg, gr->id);
		int rc = epoch ? kaas_group_open(cluster, gr->id, epoch, &gr->offs) : KAAS_EFENCED;
		if (rc < 0) {
			kaas_warn("group %s: cannot load committed offsets: %s (%s)", gr->id,
				  kaas_strerror(rc), kaas_sub_errdetail());
			kaas_group_offsets_free(&gr->offs);
			memset(&gr->offs, 0, sizeof(gr->offs));
			op->rc = rc;
			return;
		}
		gr->loaded = 1;
		gr->ntxnp = 1; /* not known yet: settle below reads them */
	}
	if (gr->ntxnp || op->txn) {
		op->rc = kaas_groups_txn_settle(gr);
		if (op->rc < 0) {
			gr->loaded = 0;
			return;
		}
	}
	if (op->txn) {
		int rc = kaas_groups_txn_work(gr, op->txn);
		if (rc == KAAS_ETXN_FENCED || rc == KAAS_ETXN_PID_MAPPING || rc == KAAS_ETXN_STATE)
			op->status = rc; /* an answer, not a failure */
		else
			op->rc = rc;
		return;
	}
	if (op->empty_since_ms >= 0 && (op->rc = expire_work(gr, op->empty_since_ms)) < 0)
		return;
	if (op->expire_only || op->load_only)
		return;
	if (op->erase) {
		op->rc = erase_work(gr, op->batch, op->members);
		if (op->rc == KAAS_EGROUP_UNKNOWN) {
			op->status = op->rc; /* an answer, not a failure */
			op->rc = 0;
		}
		return;
	}
	if (!op->commit)
		return;
	int any = apply_commit(gr, &op->commit->batch);
	if (any < 0) {
		op->rc = any;
		gr->loaded = 0;
		return;
	}
	if (!any)
		return;
	int rc = kaas_group_commit(cluster, &gr->offs);
	if (rc < 0) {
		kaas_warn("group %s: commit not durable: %s (%s)", gr->id, kaas_strerror(rc),
			  kaas_sub_errdetail());
		op->rc = rc;
		gr->loaded = 0; /* reload from the volume before serving again */
	}
}

/* Take the head operation off the queue (loop thread). */
static struct group_op *pop(struct group *gr)
{
	struct group_op *op = gr->ops_head;
	assert(op);
	gr->ops_head = op->next;
	gr->op_running = 0;
	return op;
}

static void op_done(void *arg, int status)
{
	struct group *gr = arg;
	GROUPS_ON_LOOP(gr->reg);
	assert(gr->op_running);
	struct group_op *op = pop(gr);
	if (status < 0)
		op->rc = -ECANCELED;
	if (op->rc < 0 && !op->status)
		op->status = op->rc == KAAS_EFENCED ? KAAS_ENOT_COORDINATOR : KAAS_ENO_COORDINATOR;
	gr->noffs = gr->loaded ? gr->offs.n : 0;
	answer(op);
	free(op);
	if (gr->reload) {
		gr->reload = 0;
		gr->loaded = 0; /* dropped meanwhile: the next op loads at the new epoch */
	}
	if (gr->loaded && gr->offs.n == 0 && !gr->ntxnp && !gr->members &&
	    gr->state == GROUP_EMPTY && !gr->ops_head) {
		/* Nothing committed, nothing pending, nobody in it (deleted,
		 * expired, or never committed to): as in Kafka, the group is
		 * gone (Dead, not listed) until someone uses it again. */
		gr->loaded = 0;
		kaas_group_offsets_free(&gr->offs);
		memset(&gr->offs, 0, sizeof(gr->offs));
	}
	run_next(gr);
	if (!gr->op_running && !gr->ops_head)
		kaas_groups_maybe_free(gr); /* gr may be gone */
}

static void run_next(struct group *gr)
{
	if (gr->op_running || !gr->ops_head)
		return;
	struct kaas_broker *b = gr->reg->b;
	gr->op_running = 1;
	if (kaas_pool_queue(b, op_work, op_done, gr) < 0) {
		struct group_op *op = pop(gr);
		op->status = KAAS_ENO_COORDINATOR;
		answer(op);
		free(op);
		run_next(gr);
	}
}

static void enqueue(struct group *gr, struct group_op *op)
{
	op->gr = gr;
	op->empty_since_ms = gr->state == GROUP_EMPTY && !gr->members ? gr->empty_since_ms : -1;
	struct group_op **end = &gr->ops_head; /* a group's queue is short */
	while (*end)
		end = &(*end)->next;
	*end = op;
	run_next(gr);
}

/* ------------------------------------------------------------ operations */

/* The group an operation names, after the coordinator check: it (found or
 * created), or NULL with *err set (the check's status, or -ENOMEM). */
static struct group *op_group(struct kaas_groups *g, const char *id, int *err)
{
	struct group *gr = NULL;
	*err = kaas_groups_check(g, id);
	if (!*err && !(gr = kaas_groups_lookup(g, id, 1)))
		*err = -ENOMEM;
	return gr;
}

/* Answer op at once with status err (refused before it was queued) and
 * drop the group if nothing else holds it. */
static void refuse(struct group_op *op, struct group *gr, int err)
{
	op->status = err;
	answer(op);
	free(op);
	if (gr)
		kaas_groups_maybe_free(gr);
}

/* May `member_id` (instance `iid`) commit at generation `gen` now?  0 or
 * the status. */
static int commit_allowed(struct group *gr, const struct kaas_group_commit *rq)
{
	if (rq->generation < 0 && gr->state == GROUP_EMPTY)
		return 0; /* a standalone commit (no group membership) */
	if (gr->state == GROUP_COMPLETING)
		return KAAS_EREBALANCING;
	struct group_member *m = NULL;
	int err = kaas_groups_member_check(gr, rq->member_id, rq->instance_id, &m);
	if (err)
		return err; /* unknown, or fenced by a newer instance (KIP-345) */
	if (rq->generation != gr->generation)
		return KAAS_EILLEGAL_GENERATION;
	m->last_seen_ms = kaas_now_ms();
	return 0;
}

/* Refuse, one by one, the partitions of topics this broker does not know,
 * and record each topic's incarnation id. */
static void check_partitions(struct kaas_broker *b, struct kaas_offset_batch *batch)
{
	for (int32_t i = 0; i < batch->nt; i++) {
		struct kaas_offset_topic *t = &batch->topics[i];
		struct kaas_topic *kt =
			t->name ? kaas_topics_get(b->topics, t->name, (int)strlen(t->name)) : NULL;
		for (int32_t j = 0; j < t->n; j++) {
			struct kaas_offset_part *p = &t->parts[j];
			if (!p->status && (!kt || p->partition < 0 || p->partition >= kt->npart))
				p->status = KAAS_EUNKNOWN_PARTITION;
		}
		if (kt)
			topic_id_hex(kt, t->topic_id);
		kaas_topic_put(kt);
	}
}

void kaas_groups_commit(struct kaas_groups *g, struct kaas_group_commit *rq,
			kaas_offsets_done done, void *ctx)
{
	GROUPS_ON_LOOP(g);
	struct group_op *op = calloc(1, sizeof(*op));
	if (!op) {
		done(ctx, -ENOMEM, &rq->batch);
		return;
	}
	op->commit = rq;
	op->done = done;
	op->ctx = ctx;
	int err;
	struct group *gr = op_group(g, rq->group, &err);
	if (!err)
		err = commit_allowed(gr, rq);
	if (!err)
		check_partitions(g->b, &rq->batch);
	if (err && gr)
		kaas_info("group %s: commit by %s at generation %d refused (%s; group at generation %d, %s)",
			  gr->id, rq->member_id, rq->generation, kaas_strerror(err), gr->generation,
			  kaas_groups_state_name(gr->state));
	if (err)
		refuse(op, gr, err);
	else
		enqueue(gr, op);
}

/* Does the loaded state of gr (no operation running) hold an offset that
 * has expired?  Loop thread. */
static int expiry_due(const struct group *gr)
{
	if (!gr->loaded || gr->op_running || gr->ops_head || gr->members ||
	    gr->state != GROUP_EMPTY)
		return 0;
	int64_t now = kaas_groups_wall_ms();
	for (size_t i = 0; i < gr->offs.n; i++)
		if (expired(&gr->offs.items[i], gr->empty_since_ms, gr->reg->retention_ms, now))
			return 1;
	return 0;
}

void kaas_groups_expire_offsets(struct group *gr)
{
	GROUPS_ON_LOOP(gr->reg);
	struct group_op *op;
	if (!expiry_due(gr) || !(op = calloc(1, sizeof(*op))))
		return;
	op->expire_only = 1;
	enqueue(gr, op);
}

void kaas_groups_load(struct group *gr, size_t noffs)
{
	GROUPS_ON_LOOP(gr->reg);
	struct group_op *op;
	if (gr->loaded || !(op = calloc(1, sizeof(*op))))
		return; /* loaded already; or the first operation loads it */
	if (!gr->noffs)
		gr->noffs = noffs; /* listed (ListGroups) while it loads */
	op->load_only = 1;
	enqueue(gr, op);
}

void kaas_groups_fetch(struct kaas_groups *g, const char *group, struct kaas_offset_batch *batch,
		       kaas_offsets_done done, void *ctx)
{
	GROUPS_ON_LOOP(g);
	struct group_op *op = calloc(1, sizeof(*op));
	if (!op) {
		struct kaas_offset_batch none = { 0 };
		done(ctx, -ENOMEM, batch ? batch : &none);
		return;
	}
	op->batch = batch;
	op->done = done;
	op->ctx = ctx;
	int err;
	struct group *gr = op_group(g, group, &err);
	if (err || (gr->loaded && !gr->op_running && !gr->ops_head && !gr->ntxnp &&
		    !expiry_due(gr))) {
		op->status = err;
		op->gr = gr;
		answer(op);
		free(op);
		return;
	}
	enqueue(gr, op);
}

/* ------------------------------------------------------------ erasing */

/* The topics member m's consumer-protocol subscription names (its metadata
 * for the first protocol: version int16, then an array of topic names):
 * does it hold `topic`?  Metadata that does not parse counts as no. */
static int subscribes(const struct group_member *m, const char *topic)
{
	if (m->nprot < 1 || m->prot[0].meta_len < 6)
		return 0;
	const uint8_t *p = m->prot[0].meta, *end = p + m->prot[0].meta_len;
	p += 2; /* version */
	int32_t n = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
	p += 4;
	size_t tl = strlen(topic);
	for (int32_t i = 0; i < n && end - p >= 2; i++) {
		int16_t len = (int16_t)((uint16_t)p[0] << 8 | p[1]);
		p += 2;
		if (len < 0 || end - p < len)
			return 0;
		if ((size_t)len == tl && memcmp(p, topic, tl) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/* Mark the partitions of topics a member subscribes to (consumer groups). */
static void refuse_subscribed(const struct group *gr, struct kaas_offset_batch *batch)
{
	if (!gr->protocol_type || strcmp(gr->protocol_type, "consumer") != 0)
		return;
	for (int32_t i = 0; i < batch->nt; i++) {
		struct kaas_offset_topic *t = &batch->topics[i];
		int sub = 0;
		for (const struct group_member *m = gr->members; t->name && m && !sub; m = m->next)
			sub = subscribes(m, t->name);
		for (int32_t j = 0; sub && j < t->n; j++)
			if (!t->parts[j].status)
				t->parts[j].status = KAAS_EGROUP_SUBSCRIBED;
	}
}

/* Queue an erase of `batch` (NULL: the whole group) after the checks. */
static void erase(struct kaas_groups *g, const char *group, struct kaas_offset_batch *batch,
		  kaas_offsets_done done, void *ctx)
{
	GROUPS_ON_LOOP(g);
	struct group_op *op = calloc(1, sizeof(*op));
	if (!op) {
		done(ctx, -ENOMEM, batch);
		return;
	}
	*op = (struct group_op){ .batch = batch, .done = done, .ctx = ctx, .erase = 1 };
	int err;
	struct group *gr = op_group(g, group, &err);
	if (!err && !batch && kaas_groups_count_members(gr) > 0)
		err = KAAS_EGROUP_NONEMPTY;
	if (!err && batch)
		refuse_subscribed(gr, batch);
	if (!err)
		op->members = kaas_groups_count_members(gr) > 0;
	if (err)
		refuse(op, gr, err);
	else
		enqueue(gr, op);
}

void kaas_groups_delete(struct kaas_groups *g, const char *group, kaas_offsets_done done,
			void *ctx)
{
	erase(g, group, NULL, done, ctx);
}

void kaas_groups_delete_offsets(struct kaas_groups *g, const char *group,
				struct kaas_offset_batch *batch, kaas_offsets_done done, void *ctx)
{
	erase(g, group, batch, done, ctx);
}

void kaas_groups_txn_commit(struct kaas_groups *g, struct kaas_group_txn_commit *rq,
			    kaas_offsets_done done, void *ctx)
{
	GROUPS_ON_LOOP(g);
	int err;
	struct group *gr = op_group(g, rq->group, &err);
	struct group_op *op = err ? NULL : calloc(1, sizeof(*op));
	if (!op) { /* refused, or out of memory */
		if (gr)
			kaas_groups_maybe_free(gr);
		done(ctx, err ? err : -ENOMEM, &rq->batch);
		return;
	}
	*op = (struct group_op){ .txn = rq, .done = done, .ctx = ctx };
	check_partitions(g->b, &rq->batch); /* unknown topics: refused one by one */
	enqueue(gr, op);
}
