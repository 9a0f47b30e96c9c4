/* topics/reconcile.c — cluster mode: bring the registry in line with the
 * topic documents every broker writes (topics created, grown, deleted or
 * re-created elsewhere; deletes left half done by a dead broker) and the
 * open logs in line with the lease (see kaas_topics_reconcile). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/logger.h"
#include "util/step.h"
#include "broker/topics/internal.h"
#include "cluster/membership.h"

/* Grow a listed topic to `count` partitions (another broker grew it). */
static void grow_listed(struct kaas_topics *t, struct kaas_topic *tp, int32_t count)
{
	kaas_topic_hold(tp);
	int rc = kaas_topics_grow(t, tp, count);
	kaas_topic_put(tp);
	if (rc == 0)
		kaas_info("topic %s: grown to %d partitions elsewhere", tp->name, count);
}

/* The entry for (name, id, kind) in t->stuck, created (since now) if new,
 * and marked seen this round; NULL when out of memory. */
static struct kaas_topics_stuck *stuck_note(struct kaas_topics *t, const char *name,
					    const uint8_t id[16], int foreign)
{
	struct kaas_topics_stuck *s = NULL;
	for (size_t i = 0; i < t->nstuck && !s; i++)
		if (strcmp(t->stuck[i].name, name) == 0 && memcmp(t->stuck[i].id, id, 16) == 0 &&
		    t->stuck[i].foreign == foreign)
			s = &t->stuck[i];
	if (!s) {
		struct kaas_topics_stuck *v = realloc(t->stuck, sizeof(*v) * (t->nstuck + 1));
		if (!v)
			return NULL;
		t->stuck = v;
		s = &t->stuck[t->nstuck++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", name);
		memcpy(s->id, id, 16);
		s->foreign = foreign;
		s->since = kaas_mono_ms();
	}
	s->seen = 1;
	return s;
}

/* Forget entries not seen this round. */
static void stuck_sweep(struct kaas_topics *t)
{
	size_t k = 0;
	for (size_t i = 0; i < t->nstuck; i++)
		if (t->stuck[i].seen) {
			t->stuck[i].seen = 0;
			t->stuck[k++] = t->stuck[i];
		}
	t->nstuck = k;
}

void kaas_topics_adopt(struct kaas_topics *t, const char *name, const struct kaas_topic_doc *d)
{
	assert(kaas_topics_holds_admin(t));
	int st = kaas_topic_stamp_state(t->data, name, d->id);
	if (st < 0)
		return; /* retried at the next reconcile */
	if (st != 1) {
		/* Unstamped, or stamped by another incarnation: an earlier one,
		 * unless our reading of the document is the old one.  Re-read it:
		 * a newer incarnation writes its document before its stamp. */
		struct kaas_topic_doc again;
		if (kaas_topic_doc_read(t->cluster, name, &again) < 0 || again.deleting ||
		    memcmp(again.id, d->id, 16) != 0)
			return;
	}
	/* Another incarnation's stamp is its creator's to reclaim (two
	 * reclaimers would race: one could rename aside the directory the
	 * other just stamped).  Only when it stays that way for
	 * KAAS_TOPICS_STUCK_MS (the creator died before stamping) is it taken
	 * over here. */
	int may_reclaim = 0;
	if (st == 2) {
		struct kaas_topics_stuck *s = stuck_note(t, name, d->id, 1);
		if (!s || kaas_mono_ms() - s->since < KAAS_TOPICS_STUCK_MS)
			return;
		kaas_warn("topic %s: its directory is still stamped by another incarnation after "
			  "%d s; reclaiming it here", name, KAAS_TOPICS_STUCK_MS / 1000);
		may_reclaim = 1;
	}
	int rc = st == 1 ? 0 : kaas_topics_stamp_dir(t, name, d->id, d->inc, may_reclaim);
	if (rc < 0) {
		kaas_warn("topic %s: stamping its directory failed: %s (%s); retrying", name,
			  kaas_strerror(rc), kaas_sub_errdetail());
		return;
	}
	/* Its config overrides, from the document as it is now (still this
	 * incarnation's, else the next round sees the new one). */
	struct kaas_topic_doc now;
	struct kaas_kvlist config = { 0 };
	if (kaas_topic_doc_read_config(t->cluster, name, &now, &config) < 0 || now.deleting ||
	    memcmp(now.id, d->id, 16) != 0) {
		kaas_kvlist_clear(&config);
		return;
	}
	struct kaas_topic *tp = kaas_topic_new(name);
	rc = tp ? kaas_topics_set_config(t, tp, &config) : -ENOMEM;
	kaas_kvlist_clear(&config);
	if (rc < 0) {
		kaas_topic_free(tp);
		return;
	}
	memcpy(tp->id, d->id, 16);
	tp->incarnation = d->inc;
	tp->npart = (int32_t)d->np;
	tp->replication_factor = now.rf;
	if (kaas_topics_open_partitions(t, tp) < 0) {
		kaas_topic_free(tp);
		return;
	}
	kaas_topics_lock(t);
	rc = kaas_topics_add_locked(t, tp);
	kaas_topics_unlock(t);
	if (rc < 0)
		kaas_topic_free(tp);
	else
		kaas_info("topic %s: listed (created elsewhere, %d partition(s))", name, tp->npart);
}

/* Re-drive a delete left half done by a broker that died: a document
 * marked deleting for KAAS_TOPICS_STUCK_MS is removed here (reclaim_dir is
 * idempotent, and removes the document only if it still names that
 * incarnation). */
static void note_deleting(struct kaas_topics *t, const char *name, const struct kaas_topic_doc *d)
{
	struct kaas_topics_stuck *s = stuck_note(t, name, d->id, 0);
	if (!s || s->driven || kaas_mono_ms() - s->since < KAAS_TOPICS_STUCK_MS)
		return;
	s->driven = 1;
	kaas_warn("topic %s: its delete has not finished for %d s; finishing it here", name,
		  KAAS_TOPICS_STUCK_MS / 1000);
	(void)kaas_topics_reclaim_dir(t, name, d->id, d->inc, 1);
}

static struct kaas_topic *find(struct kaas_topics *t, const char *name)
{
	kaas_topics_lock(t);
	struct kaas_topic *tp = kaas_topics_find_locked(t, name, (int)strlen(name));
	kaas_topics_unlock(t);
	return tp;
}

/* Apply the document's config overrides to listed tp when another broker
 * changed them. */
static void follow_config(struct kaas_topics *t, struct kaas_topic *tp,
			  const struct kaas_kvlist *config)
{
	kaas_topics_lock(t);
	int same = kaas_kvlist_equal(&tp->config, config);
	kaas_topics_unlock(t);
	if (same)
		return;
	char msg[KAAS_CONFIG_MSG];
	if (kaas_topic_config_check(config, msg) < 0) {
		/* Written by a newer kaas, or by hand: keep what we have. */
		kaas_warn("topic %s: its document's config is not one this broker takes (%s); "
			  "keeping the settings it had", tp->name, msg);
		return;
	}
	if (kaas_topics_set_config(t, tp, config) == 0)
		kaas_info("topic %s: config changed elsewhere; applied", tp->name);
}

/* Follow one topic document: returns the topic listed under `name` after
 * it (no reference: admin_mu keeps it listed), or NULL. */
static struct kaas_topic *sync_one(struct kaas_topics *t, const char *name)
{
	struct kaas_topic *tp = find(t, name);
	struct kaas_topic_doc d;
	struct kaas_kvlist config = { 0 };
	if (kaas_topic_doc_read_config(t->cluster, name, &d, &config) < 0)
		return tp; /* kept as it is; read again next round */
	if (tp && tp->offline) {
		/* Offline because its document or stamp could not be read or
		 * written earlier: it reads now, so it is listed afresh. */
		kaas_info("topic %s: its document reads again; bringing it online", name);
		kaas_topics_detach(t, tp);
		kaas_topic_free(tp);
		tp = NULL;
	}
	if (tp && (d.deleting || memcmp(tp->id, d.id, 16) != 0)) {
		kaas_topics_unlist(t, tp);
		tp = NULL;
	}
	if (d.deleting) {
		kaas_kvlist_clear(&config);
		note_deleting(t, name, &d);
		return NULL;
	}
	if (tp) {
		if (d.np > tp->npart)
			grow_listed(t, tp, (int32_t)d.np);
		follow_config(t, tp, &config);
		kaas_kvlist_clear(&config);
		return tp;
	}
	kaas_kvlist_clear(&config);
	kaas_topics_adopt(t, name, &d);
	return find(t, name);
}

static int sync_docs(struct kaas_topics *t)
{
	struct kaas_dirlist l = { 0 };
	int rc = kaas_sub_list(t->cluster, KAAS_TOPIC_DOC_DIR, &l);
	if (rc < 0)
		return rc;
	const struct kaas_topic **seen = calloc(l.n + 1, sizeof(*seen));
	size_t nseen = 0;
	for (size_t i = 0; seen && i < l.n; i++) {
		char name[256];
		if (kaas_topic_doc_entry(l.names[i], name) != 1)
			continue;
		const struct kaas_topic *tp = sync_one(t, name);
		if (tp)
			seen[nseen++] = tp;
	}
	/* Listed here but without a document any more: deleted elsewhere. */
	for (;;) {
		struct kaas_topic *gone = NULL;
		kaas_topics_lock(t);
		for (int i = 0; seen && i < t->n && !gone; i++) {
			int found = 0;
			for (size_t k = 0; k < nseen && !found; k++)
				found = seen[k] == t->v[i];
			if (!found)
				gone = t->v[i]; /* offline ones too: their document is gone */
		}
		kaas_topics_unlock(t);
		if (!gone)
			break;
		kaas_topics_unlist(t, gone);
	}
	free(seen);
	kaas_dirlist_free(&l);
	stuck_sweep(t);
	return 0;
}

/* How many partitions one kaas_topics_reopen_many call takes: the budget
 * is checked between batches. */
#define RECONCILE_BATCH 64

/* Bring one topic's open logs in line with the lease, in batches, until
 * kaas_mono_ms() passes `deadline` once *progress says this round opened
 * or closed something (the rest are left for the next round:
 * t->reconcile_left is set); returns how many partitions of it this
 * broker leads.  Caller holds one reference. */
static int lease_topic(struct kaas_topics *t, struct kaas_topic *tp, uint64_t deadline,
		       int *progress)
{
	int led = 0;
	int32_t *ks = malloc(sizeof(*ks) * RECONCILE_BATCH);
	size_t n = 0;
	for (int32_t k = 0; k < tp->npart; k++) {
		uint32_t ep = 0;
		int want = t->lease(t->lease_arg, tp->name, k, &ep);
		const struct kaas_partition *p = &tp->parts[k];
		int ok;
		if (want)
			/* A failed open is retried by housekeeping if the error
			 * is transient, else every 20th round here (a stale
			 * view of a newer leader's manifest, say). */
			ok = p->epoch == ep && p->open_err != KAAS_PART_NOT_LEADER &&
			     (p->log || (p->open_err && t->reconciles % 20 != 0));
		else
			ok = !p->log && p->open_err == KAAS_PART_NOT_LEADER;
		led += want;
		if (ok)
			continue;
		/* The budget counts once this round opened something: every
		 * round makes progress, however slow the listing before it. */
		if (t->reconcile_left || (*progress && kaas_mono_ms() >= deadline)) {
			t->reconcile_left = 1;
			continue;
		}
		if (!ks) {
			(void)kaas_topics_reopen(t, tp, k, NULL);
			*progress = 1;
			continue;
		}
		ks[n++] = k;
		if (n == RECONCILE_BATCH) {
			(void)kaas_topics_reopen_many(t, tp, ks, n, deadline, &t->reconcile_left);
			n = 0;
			*progress = 1;
		}
	}
	(void)kaas_topics_reopen_many(t, tp, ks, n, deadline, &t->reconcile_left);
	if (n)
		*progress = 1;
	free(ks);
	return led;
}

int kaas_topics_reconcile_left(struct kaas_topics *t)
{
	kaas_topics_admin_lock(t);
	int left = t->reconcile_left;
	kaas_topics_admin_unlock(t);
	return left;
}

int kaas_topics_reconcile(struct kaas_topics *t)
{
	if (!t->lease)
		return -EINVAL;
	kaas_step("topics.reconcile.before-admin-lock");
	kaas_topics_admin_lock(t);
	t->reconciles++;
	t->reconcile_left = 0;
	int rc = sync_docs(t);
	uint64_t deadline = kaas_mono_ms() + t->reconcile_budget_ms;
	int progress = 0;
	int n = 0;
	struct kaas_topic **v = kaas_topics_list(t, &n);
	int led = 0;
	for (int i = 0; v && i < n; i++) {
		if (!v[i]->offline)
			led += lease_topic(t, v[i], deadline, &progress);
		kaas_topic_put(v[i]);
	}
	free(v);
	kaas_topics_admin_unlock(t);
	return rc < 0 ? rc : led;
}
