/* topics/partitions.c — a topic's partition logs: opening them (only under
 * a directory stamped by the topic's incarnation, only where the lease
 * says this broker leads), re-opening failed or moved ones, growing the
 * array, and the data-arrival tokens (see internal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/logger.h"
#include "util/parallel.h"
#include "broker/topics/internal.h"
#include "cluster/membership.h"

struct kaas_hw_token *kaas_hw_token_get(struct kaas_hw_token *tok)
{
	if (tok)
		__atomic_add_fetch(&tok->refs, 1, __ATOMIC_RELAXED);
	return tok;
}

void kaas_hw_token_put(struct kaas_hw_token *tok)
{
	if (!tok)
		return;
	int left = __atomic_sub_fetch(&tok->refs, 1, __ATOMIC_ACQ_REL);
	assert(left >= 0);
	if (left == 0)
		free(tok);
}

/* The log's notify callback (its sync thread): record, then pass on. */
static void token_notify(void *arg, int64_t hw)
{
	struct kaas_hw_token *tok = arg;
	__atomic_store_n(&tok->hw, hw, __ATOMIC_RELEASE);
	if (tok->fn)
		tok->fn(tok->arg, hw);
}

void kaas_partition_mark_failed(struct kaas_partition *p)
{
	__atomic_store_n(&p->failed, 1, __ATOMIC_RELEASE);
}

/* Open the log of partition `idx` of topic `tp` into *p, with `token`
 * (ownership passes to *p) or a new one.  Only under the topic's own
 * directory: it must exist and carry this incarnation's stamp (the open
 * creates the partition directory, never the topic's), so a slow opener
 * never resurrects a deleted topic's directory nor writes into another
 * incarnation's. */
static void open_one(struct kaas_topics *t, const struct kaas_topic *tp, int32_t idx,
		     struct kaas_partition *p, struct kaas_hw_token *token)
{
	const char *name = tp->name;
	memset(p, 0, sizeof(*p));
	p->index = idx;
	if (!token && (token = calloc(1, sizeof(*token)))) {
		token->refs = 1;
		token->fn = t->notify;
		token->arg = t->notify_arg;
	}
	p->token = token;
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/%d", name, idx);
	uint32_t epoch = t->epoch;
	if (t->lease && !t->lease(t->lease_arg, name, idx, &epoch)) {
		p->log = NULL;
		p->open_err = KAAS_PART_NOT_LEADER;
		return;
	}
	p->epoch = epoch;
	int rc = token ? kaas_topic_stamp_state(t->data, name, tp->id) : -ENOMEM;
	if (rc >= 0 && rc != 1) {
		kaas_warn("topic %s partition %d: the topic directory is %s; not opening", name,
			  idx, rc == 0 ? "missing or unstamped" : "another incarnation's");
		rc = -ENOENT;
	}
	struct kaas_log_config cfg;
	kaas_topics_log_config(tp, &cfg);
	if (rc >= 0)
		rc = kaas_log_open(t->data, dir, epoch, &cfg, &p->log);
	if (rc < 0) {
		p->log = NULL;
		p->open_err = rc;
		kaas_error("topic %s partition %d: open failed: %s (%s)", name, idx, kaas_strerror(rc),
			   kaas_sub_errdetail());
	} else {
		__atomic_store_n(&token->hw, kaas_log_high_watermark(p->log), __ATOMIC_RELEASE);
		kaas_log_set_notify(p->log, token_notify, token);
	}
}

/* A batch of opens for kaas_parallel_for: index i opens partition
 * idx[i] (or from + i without idx) into out[i] with token toks[i] (or a
 * new one without toks). */
struct open_batch {
	struct kaas_topics *t;
	const struct kaas_topic *tp;
	const int32_t *idx;
	int32_t from;
	struct kaas_partition *out;
	struct kaas_hw_token **toks;
	uint64_t deadline;        /* kaas_mono_ms; 0: none */
	int late;                 /* some were left unopened (deadline) */
};

static void open_batch_one(void *arg, size_t i)
{
	struct open_batch *b = arg;
	int32_t k = b->idx ? b->idx[i] : b->from + (int32_t)i;
	struct kaas_hw_token *tok = b->toks ? b->toks[i] : NULL;
	if (b->deadline && i > 0 && kaas_mono_ms() >= b->deadline) {
		/* Past the caller's budget (the first of a batch always
		 * opens: progress): left as "ask the leader", for the next
		 * round to open. */
		memset(&b->out[i], 0, sizeof(b->out[i]));
		b->out[i].index = k;
		b->out[i].token = tok;
		b->out[i].open_err = KAAS_PART_NOT_LEADER;
		__atomic_store_n(&b->late, 1, __ATOMIC_RELAXED);
		return;
	}
	open_one(b->t, b->tp, k, &b->out[i], tok);
}

/* Open logs for partitions [from, to) of topic `tp` into arr[from..to),
 * KAAS_TOPICS_OPEN_THREADS at a time. */
static void open_range(struct kaas_topics *t, const struct kaas_topic *tp,
		       struct kaas_partition *arr, int32_t from, int32_t to)
{
	struct open_batch b = { .t = t, .tp = tp, .from = from, .out = arr + from };
	(void)kaas_parallel_for((size_t)(to - from), KAAS_TOPICS_OPEN_THREADS, open_batch_one, &b);
}

int kaas_topics_open_partitions(struct kaas_topics *t, struct kaas_topic *tp)
{
	assert(!tp->reg && !tp->parts && tp->npart >= 1);
	tp->parts = calloc((size_t)tp->npart, sizeof(*tp->parts));
	if (!tp->parts)
		return -ENOMEM;
	open_range(t, tp, tp->parts, 0, tp->npart);
	return 0;
}

int kaas_topics_grow(struct kaas_topics *t, struct kaas_topic *tp, int32_t count)
{
	assert(kaas_topics_holds_admin(t));
	/* Only the admin_mu holder changes npart: read without mu. */
	int32_t old = tp->npart;
	assert(count > old);
	struct kaas_partition *np = calloc((size_t)count, sizeof(*np));
	if (!np)
		return -ENOMEM;
	/* The new logs outside the registry lock, then the array swapped in
	 * (with the current state of the old entries) once no request uses
	 * the topic. */
	open_range(t, tp, np, old, count);
	kaas_topics_lock(t);
	kaas_topic_wait_exclusive(tp, 1);
	memcpy(np, tp->parts, sizeof(*np) * (size_t)old);
	struct kaas_partition *prev = tp->parts;
	tp->parts = np;
	tp->npart = count;
	kaas_topics_unlock(t);
	free(prev);
	return 0;
}

int kaas_topics_reopen(struct kaas_topics *t, struct kaas_topic *tp, int32_t k, const char *why)
{
	assert(kaas_topics_holds_admin(t));
	assert(k >= 0 && k < tp->npart);
	struct kaas_partition *p = &tp->parts[k];
	/* Take the log away once no request uses the topic. */
	kaas_topics_lock(t);
	kaas_topic_wait_exclusive(tp, 1);
	struct kaas_log *old = p->log;
	struct kaas_hw_token *tok = p->token;
	p->log = NULL;
	if (!why)
		p->open_err = KAAS_PART_NOT_LEADER; /* meanwhile: "ask the leader" */
	__atomic_store_n(&p->failed, 0, __ATOMIC_RELEASE);
	kaas_topics_unlock(t);
	if (old) {
		if (why)
			kaas_warn("topic %s partition %d: %s; re-opening it", tp->name, k, why);
		int rc = kaas_log_close(old);
		if (why && rc < 0)
			kaas_warn("topic %s partition %d: close of the failed log: %s", tp->name, k,
				  kaas_strerror(rc));
		else if (!why)
			kaas_info("topic %s partition %d: closed (epoch %u)%s%s", tp->name, k,
				  p->epoch, rc < 0 ? ": " : "", rc < 0 ? kaas_strerror(rc) : "");
	}
	struct kaas_partition fresh;
	open_one(t, tp, k, &fresh, tok);
	if (fresh.log && why)
		kaas_info("topic %s partition %d: re-opened", tp->name, k);
	else if (fresh.log)
		kaas_info("topic %s partition %d: leading with epoch %u", tp->name, k, fresh.epoch);
	kaas_topics_lock(t);
	fresh.lane = p->lane; /* the partition's produce lane outlives its logs */
	*p = fresh;
	kaas_topics_unlock(t);
	return fresh.log != NULL;
}

size_t kaas_topics_reopen_many(struct kaas_topics *t, struct kaas_topic *tp, const int32_t *ks,
			       size_t n, uint64_t deadline, int *late)
{
	assert(kaas_topics_holds_admin(t));
	if (n == 0)
		return 0;
	struct kaas_log **old = calloc(n, sizeof(*old));
	struct kaas_hw_token **toks = calloc(n, sizeof(*toks));
	struct kaas_partition *fresh = calloc(n, sizeof(*fresh));
	if (!old || !toks || !fresh) {
		free(old);
		free(toks);
		free(fresh);
		size_t led = 0; /* short of memory: one at a time */
		for (size_t i = 0; i < n; i++) {
			if (deadline && kaas_mono_ms() >= deadline) {
				*late = 1;
				break;
			}
			led += (size_t)kaas_topics_reopen(t, tp, ks[i], NULL);
		}
		return led;
	}
	/* Take the logs away once no request uses the topic: one wait for
	 * the whole batch. */
	kaas_topics_lock(t);
	kaas_topic_wait_exclusive(tp, 1);
	for (size_t i = 0; i < n; i++) {
		assert(ks[i] >= 0 && ks[i] < tp->npart);
		struct kaas_partition *p = &tp->parts[ks[i]];
		old[i] = p->log;
		toks[i] = p->token;
		p->log = NULL;
		p->open_err = KAAS_PART_NOT_LEADER; /* meanwhile: "ask the leader" */
		__atomic_store_n(&p->failed, 0, __ATOMIC_RELEASE);
	}
	kaas_topics_unlock(t);
	for (size_t i = 0; i < n; i++)
		if (old[i]) {
			int rc = kaas_log_close(old[i]);
			kaas_info("topic %s partition %d: closed (epoch %u)%s%s", tp->name, ks[i],
				  tp->parts[ks[i]].epoch, rc < 0 ? ": " : "",
				  rc < 0 ? kaas_strerror(rc) : "");
		}
	struct open_batch b = { .t = t, .tp = tp, .idx = ks, .out = fresh, .toks = toks,
				.deadline = deadline };
	(void)kaas_parallel_for(n, KAAS_TOPICS_OPEN_THREADS, open_batch_one, &b);
	if (b.late)
		*late = 1;
	size_t led = 0;
	kaas_topics_lock(t);
	for (size_t i = 0; i < n; i++) {
		struct kaas_partition *p = &tp->parts[ks[i]];
		fresh[i].lane = p->lane; /* the partition's produce lane outlives its logs */
		*p = fresh[i];
		led += fresh[i].log != NULL;
	}
	kaas_topics_unlock(t);
	for (size_t i = 0; i < n; i++)
		if (fresh[i].log)
			kaas_info("topic %s partition %d: leading with epoch %u", tp->name, ks[i],
				  fresh[i].epoch);
	free(old);
	free(toks);
	free(fresh);
	return led;
}

/* Open errors a retry cannot fix: a damaged or inconsistent directory (an
 * operator must look), or a newer leader. */
static int open_err_final(int err)
{
	return err == -EBADMSG || err == -EUCLEAN || err == KAAS_LOG_EFENCED || err == -EPROTO ||
	       err == KAAS_PART_NOT_LEADER;
}

static int needs_reopen(struct kaas_partition *p)
{
	if (!p->log)
		return !open_err_final(p->open_err);
	if (__atomic_load_n(&p->failed, __ATOMIC_ACQUIRE))
		return 1;
	/* Only a real fence (a newer epoch on the volume) is final; any other
	 * failure, a transient -ESTALE included, is re-driven by a re-open. */
	int st = kaas_log_status(p->log);
	return st != 0 && st != KAAS_LOG_EFENCED;
}

size_t kaas_topics_reopen_failed(struct kaas_topics *t)
{
	assert(kaas_topics_holds_admin(t));
	kaas_topics_lock(t);
	int n = 0;
	struct kaas_topic **v = malloc(sizeof(*v) * (size_t)(t->n + 1));
	for (int i = 0; v && i < t->n; i++) {
		struct kaas_topic *tp = t->v[i];
		if (tp->offline || tp->deleting)
			continue;
		for (int32_t k = 0; k < tp->npart; k++)
			if (needs_reopen(&tp->parts[k])) {
				tp->refs++;
				v[n++] = tp;
				break;
			}
	}
	kaas_topics_unlock(t);
	size_t still = 0;
	for (int i = 0; i < n; i++) {
		struct kaas_topic *tp = v[i];
		for (int32_t k = 0; k < tp->npart; k++)
			if (needs_reopen(&tp->parts[k]) && !kaas_topics_reopen(t, tp, k, "log failed"))
				still++;
		kaas_topic_put(tp);
	}
	free(v);
	return still;
}
