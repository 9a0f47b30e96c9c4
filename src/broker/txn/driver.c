/*
 * driver.c — driving decided transactions to their end, timeouts, and the
 * service's thread (txn.h).
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
#include "util/logger.h"
#include "util/status.h"
#include "util/step.h"
#include "util/thread_name.h"
#include "util/lock_rank.h"

#define DRIVER_TICK_MS 100
#define DISCOVER_EVERY_MS 1000
/* txn-markers/ is listed every tick while it holds requests; while it holds
 * none, the gap doubles up to MARKERS_IDLE_MAX_MS (a request then waits at
 * most that long for its leader's first look). */
#define MARKERS_IDLE_MAX_MS 1000
/* Replies left behind are swept this often. */
#define MARKERS_SWEEP_EVERY_MS 5000

int kaas_txn_complete(struct kaas_txns *t, struct txn_entry *e)
{
	struct kaas_txn_doc *d = &e->doc;
	if (d->state != KAAS_TXN_PREPARE_COMMIT && d->state != KAAS_TXN_PREPARE_ABORT)
		return 0;
	int commit = d->state == KAAS_TXN_PREPARE_COMMIT;
	kaas_step("txn.complete.before-markers");
	size_t outstanding = 0;
	uint64_t now = kaas_now_ms();
	int warn = now - e->warned_ms >= 5000;
	int fresh = 0; /* one fence check per pass, before its first direct append */
	for (size_t i = 0; i < d->nparts; i++) {
		int rc = kaas_txn_marker(t, d, &d->parts[i], commit, &fresh);
		if (rc == KAAS_ETXN_COORD_FENCED) {
			/* Another coordinator took the id over: what is in memory
			 * is stale, reload before serving again (the takeover's
			 * open at our epoch is then refused: NOT_COORDINATOR). */
			kaas_warn("transactional id %s: transaction %" PRIu64 " not driven further: %s"
				  " (%s)", e->id, d->seq, kaas_strerror(rc), kaas_sub_errdetail());
			kaas_txn_doc_free(d);
			e->epoch = 0;
			return KAAS_ENOT_COORDINATOR;
		}
		if (rc == 1)
			kaas_step("txn.complete.after-marker");
		else
			outstanding++;
		if (rc < 0 && warn)
			kaas_warn("transactional id %s: %s marker on %s/%d not written yet: %s (%s)",
				  e->id, commit ? "commit" : "abort", d->parts[i].topic,
				  d->parts[i].partition, kaas_strerror(rc), kaas_sub_errdetail());
	}
	for (size_t i = 0; i < d->ngroups; i++) {
		int rc = kaas_txn_group_decide(t->b->cluster, d->groups[i], d->producer_id, d->seq,
					       commit);
		if (rc < 0) {
			outstanding++;
			if (warn)
				kaas_warn("transactional id %s: outcome for group %s not written yet: %s (%s)",
				  e->id, d->groups[i], kaas_strerror(rc), kaas_sub_errdetail());
		}
	}
	if (outstanding) {
		if (warn)
			e->warned_ms = now;
		return KAAS_ETXN_CONCURRENT;
	}
	kaas_step("txn.complete.before-complete");
	d->state = commit ? KAAS_TXN_COMPLETE_COMMIT : KAAS_TXN_COMPLETE_ABORT;
	int rc = kaas_txn_commit_doc(t, e);
	if (rc < 0)
		return rc;
	kaas_info("transactional id %s: transaction %" PRIu64 " %s", e->id, d->seq,
		  kaas_txn_state_name(d->state));
	kaas_txn_markers_forget(t, d);
	return 0;
}

/* One id: re-drive a decision, abort a transaction past its timeout. */
static void drive_one(struct kaas_txns *t, const char *id)
{
	struct txn_entry *e;
	if (kaas_txn_acquire(t, id, &e) < 0)
		return;
	struct kaas_txn_doc *d = &e->doc;
	if (d->state == KAAS_TXN_PREPARE_COMMIT || d->state == KAAS_TXN_PREPARE_ABORT) {
		(void)kaas_txn_complete(t, e);
	} else if (d->state == KAAS_TXN_ONGOING &&
		   kaas_txn_wall_ms() - d->start_ms > (int64_t)d->timeout_ms) {
		kaas_info("transactional id %s: transaction %" PRIu64 " older than its timeout (%d ms):"
			  " aborting", id, d->seq, d->timeout_ms);
		d->timed_out_epoch = d->producer_epoch; /* written with PrepareAbort */
		(void)kaas_txn_decide(t, e, 0, 1);
	}
	kaas_txn_release(e);
}

/* Copies of the ids known here (NULL-terminated; free each and the array). */
static char **known_ids(struct kaas_txns *t)
{
	kaas_lock(&t->mu, KAAS_RANK_LEAF);
	size_t n = 0;
	for (struct txn_entry *e = t->list; e; e = e->next)
		n++;
	char **v = calloc(n + 1, sizeof *v);
	size_t i = 0;
	for (struct txn_entry *e = t->list; v && e; e = e->next)
		if ((v[i] = strdup(e->id)))
			i++;
	kaas_unlock(&t->mu);
	return v;
}

static int is_known(struct kaas_txns *t, const char *id)
{
	kaas_lock(&t->mu, KAAS_RANK_LEAF);
	struct txn_entry *e = t->list;
	while (e && strcmp(e->id, id))
		e = e->next;
	kaas_unlock(&t->mu);
	return e != NULL;
}

/* Ids on the volume whose slot this broker now leads (a failover) are
 * taken over: loading them is what re-drives their decisions. */
static void discover_one(void *ctx, const char *enc)
{
	struct kaas_txns *t = ctx;
	struct kaas_txn_doc d;
	if (kaas_txn_peek_dir(t->b->cluster, enc, &d) < 0)
		return;
	if (!is_known(t, d.txn_id) && kaas_groups_coordinator_epoch(t->b->groups, d.txn_id))
		drive_one(t, d.txn_id);
	kaas_txn_doc_free(&d);
}

void *kaas_txn_driver_main(void *arg)
{
	struct kaas_txns *t = arg;
	kaas_thread_name("kaas-txn");
	uint64_t last_discover = 0, next_serve = 0, last_sweep = 0, serve_gap = DRIVER_TICK_MS;
	kaas_lock(&t->mu, KAAS_RANK_LEAF);
	while (!t->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += DRIVER_TICK_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&t->cv, &t->mu, &until);
		if (t->stop)
			break;
		kaas_unlock(&t->mu);
		if (t->b->agent && !kaas_agent_fenced(t->b->agent)) {
			uint64_t now = kaas_now_ms();
			if (now >= next_serve) {
				int sweep = now - last_sweep >= MARKERS_SWEEP_EVERY_MS;
				if (sweep)
					last_sweep = now;
				if (kaas_txn_markers_serve(t, sweep) > 0)
					serve_gap = DRIVER_TICK_MS;
				else if ((serve_gap *= 2) > MARKERS_IDLE_MAX_MS)
					serve_gap = MARKERS_IDLE_MAX_MS;
				/* half a tick early: the wait is a tick, not exact */
				next_serve = now + serve_gap - DRIVER_TICK_MS / 2;
			}
			char **ids = known_ids(t);
			for (size_t i = 0; ids && ids[i]; i++) {
				drive_one(t, ids[i]);
				free(ids[i]);
			}
			free(ids);
			now = kaas_now_ms();
			if (now - last_discover >= DISCOVER_EVERY_MS) {
				last_discover = now;
				(void)kaas_txn_list_dirs(t->b->cluster, discover_one, t);
			}
		}
		kaas_lock(&t->mu, KAAS_RANK_LEAF);
	}
	kaas_unlock(&t->mu);
	return NULL;
}

int kaas_txns_start(struct kaas_broker *b, int32_t max_timeout_ms, struct kaas_txns **out)
{
	struct kaas_txns *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	*t = (struct kaas_txns){ .b = b, .max_timeout_ms = max_timeout_ms };
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	int rc = pthread_create(&t->thread, NULL, kaas_txn_driver_main, t);
	if (rc == 0) {
		t->started = 1;
		*out = t;
		return 0;
	}
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
	return -rc;
}

void kaas_txns_stop(struct kaas_txns *t)
{
	if (!t)
		return;
	if (t->started) { /* wake the thread for its last look at stop */
		kaas_lock(&t->mu, KAAS_RANK_LEAF);
		t->stop = 1;
		pthread_cond_broadcast(&t->cv);
		kaas_unlock(&t->mu);
		pthread_join(t->thread, NULL);
	}
	while (t->list) {
		struct txn_entry *e = t->list;
		t->list = e->next;
		if (e->epoch)
			kaas_txn_doc_free(&e->doc);
		pthread_mutex_destroy(&e->mu);
		free(e->id);
		free(e);
	}
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
