/* topics/load.c — a registry's life: open (claim a leader epoch, load every
 * topic document, finish deletes under way, stamp, open the logs, re-drive
 * the trash), housekeeping, close (see broker/topics.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/logger.h"
#include "broker/topics/internal.h"
#include "contract/epoch_fence.h"

#define EPOCH_DIR "leader-epochs"

/* Claim this incarnation's leader epoch: the next one above every claimed
 * <cluster>/leader-epochs/epoch-<n>, through the one fencing primitive
 * (contract/epoch_fence.h), so every start of any broker writes with an
 * epoch above every earlier one and an older incarnation still running is
 * fenced by the logs. */
static int claim_epoch(struct kaas_topics *t)
{
	uint64_t won = 0;
	int rc = kaas_fence_claim_next(t->cluster, EPOCH_DIR, "kaasd", &won);
	if (rc < 0)
		return rc;
	if (won > UINT32_MAX)
		return -EOVERFLOW;
	t->epoch = (uint32_t)won;
	kaas_info("leader epoch %u claimed", t->epoch);
	return 0;
}

/* Load the topic document listed as `file`.  0 or -ENOMEM: a document
 * that cannot be read, or a directory that cannot be stamped, lists the
 * topic offline. */
static int load_one(struct kaas_topics *t, const char *file)
{
	char name[256];
	int rc = kaas_topic_doc_entry(file, name);
	if (rc == -EINVAL)
		kaas_warn("ignoring topic document %s: not a valid topic name", file);
	if (rc != 1)
		return 0;
	struct kaas_topic_doc d;
	struct kaas_kvlist config = { 0 };
	rc = kaas_topic_doc_read_config(t->cluster, name, &d, &config);
	if (rc == -ENOENT)
		return 0; /* deleted since the listing */
	if (rc < 0) {
		/* Offline until a later reconcile reads it (it retries every
		 * round): nothing transient is permanent. */
		kaas_error("topic %s: document unreadable or malformed: %s (%s); topic offline "
			   "until it reads", name, kaas_strerror(rc), kaas_sub_errdetail());
		return kaas_topics_add_offline(t, name);
	}
	if (d.deleting) {
		kaas_info("topic %s: finishing its deletion", name);
		return kaas_topics_reclaim_dir(t, name, d.id, d.inc, 1);
	}
	/* Without a lease (tools, tests) this registry is alone and may
	 * reclaim; a cluster broker leaves a foreign stamp to the creator
	 * (kaas_topics_adopt re-drives it). */
	rc = kaas_topics_stamp_dir(t, name, d.id, d.inc, !t->lease);
	if (rc < 0) {
		kaas_error("topic %s: stamping its directory failed: %s (%s); topic offline "
			   "until it succeeds", name, kaas_strerror(rc), kaas_sub_errdetail());
		return kaas_topics_add_offline(t, name);
	}
	struct kaas_topic *tp = kaas_topic_new(name);
	rc = tp ? kaas_topics_set_config(t, tp, &config) : -ENOMEM;
	kaas_kvlist_clear(&config);
	if (rc < 0) {
		kaas_topic_free(tp);
		return rc;
	}
	memcpy(tp->id, d.id, 16);
	tp->incarnation = d.inc;
	tp->npart = (int32_t)d.np;
	tp->replication_factor = d.rf;
	if ((rc = kaas_topics_open_partitions(t, tp)) == 0) {
		kaas_topics_lock(t);
		rc = kaas_topics_add_locked(t, tp);
		kaas_topics_unlock(t);
	}
	if (rc < 0) {
		kaas_topic_free(tp);
		return rc;
	}
	kaas_info("topic %s: opened %d partition(s)", name, tp->npart);
	return 0;
}

/* Claim the epoch (without a lease), load every document, re-drive the
 * trash.  0 or -errno.  Caller holds admin_mu. */
static int load(struct kaas_topics *t)
{
	int rc = t->lease ? 0 : claim_epoch(t);
	if (rc >= 0)
		rc = kaas_sub_mkdirs(t->cluster, KAAS_TOPIC_DOC_DIR, 0755);
	struct kaas_dirlist l = { 0 };
	if (rc >= 0)
		rc = kaas_sub_list(t->cluster, KAAS_TOPIC_DOC_DIR, &l);
	if (rc >= 0)
		(void)kaas_sweep_temps(t->cluster, KAAS_TOPIC_DOC_DIR, KAAS_SWEEP_DEAD_LOCAL);
	for (size_t i = 0; rc >= 0 && i < l.n; i++)
		rc = load_one(t, l.names[i]);
	kaas_dirlist_free(&l);
	if (rc >= 0)
		rc = kaas_topics_redrive_trash(t);
	return rc;
}

int kaas_topics_open(struct kaas_substrate *data, struct kaas_substrate *cluster,
		     kaas_log_notify_cb notify, void *arg, struct kaas_topics **out)
{
	return kaas_topics_open_leased(data, cluster, NULL, NULL, notify, arg, out);
}

int kaas_topics_open_leased(struct kaas_substrate *data, struct kaas_substrate *cluster,
			    kaas_lease_fn lease, void *lease_arg, kaas_log_notify_cb notify,
			    void *arg, struct kaas_topics **out)
{
	struct kaas_topics_opts o = { .data = data, .cluster = cluster, .lease = lease,
				      .lease_arg = lease_arg, .notify = notify, .notify_arg = arg };
	return kaas_topics_open_opts(&o, out);
}

int kaas_topics_open_opts(const struct kaas_topics_opts *o, struct kaas_topics **out)
{
	struct kaas_topics *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct kaas_topics){ .data = o->data, .cluster = o->cluster, .notify = o->notify,
				   .notify_arg = o->notify_arg, .lease = o->lease,
				   .lease_arg = o->lease_arg,
				   .reconcile_budget_ms = o->reconcile_budget_ms
								  ? o->reconcile_budget_ms
								  : KAAS_TOPICS_RECONCILE_BUDGET_MS };
	if (o->defaults && kaas_kvlist_copy(&t->defaults, o->defaults) < 0) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	pthread_mutex_init(&t->admin_mu, NULL);
	kaas_topics_admin_lock(t);
	int rc = load(t);
	kaas_topics_admin_unlock(t);
	if (rc < 0) {
		kaas_error("loading topics failed: %s (%s)", kaas_strerror(rc), kaas_sub_errdetail());
		kaas_topics_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

void kaas_topics_set_before_remove(struct kaas_topics *t, void (*fn)(void *arg, const char *name),
				   void *arg)
{
	t->before_remove = fn;
	t->before_remove_arg = arg;
}

void kaas_topics_close(struct kaas_topics *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		kaas_topic_free(t->v[i]); /* asserts no request holds it any more */
	free(t->v);
	if (t->pending.count)
		kaas_warn("%zu removal(s) unfinished at shutdown; the next start re-drives them",
			  t->pending.count);
	kaas_pending_clear(&t->pending);
	free(t->stuck);
	kaas_kvlist_clear(&t->defaults);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->admin_mu);
	free(t);
}

int kaas_topics_on_volume(struct kaas_topics *t, const char *name)
{
	struct kaas_topic_doc d;
	int rc = kaas_topic_doc_read(t->cluster, name, &d);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : !d.deleting;
}

size_t kaas_topics_housekeep(struct kaas_topics *t)
{
	kaas_topics_admin_lock(t);
	size_t n = t->pending.count ? kaas_pending_drive(&t->pending) : 0;
	n += kaas_topics_reopen_failed(t);
	kaas_topics_admin_unlock(t);
	return n;
}
