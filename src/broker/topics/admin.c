/* topics/admin.c — the topic operations a client asks for: create (one
 * creator per incarnation, decided by exclusive create), delete (mark,
 * close, remove convergently) and grow (see broker/topics.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/logger.h"
#include "broker/topics/internal.h"
#include "util/status.h"
#include "util/step.h"

/* Create incarnation `inc` of `tp->name` as its claimed creator: document
 * (desired state), directory stamp, logs.  0 or -errno. */
static int create_claimed(struct kaas_topics *t, struct kaas_topic *tp, uint64_t inc)
{
	/* A creator that waited for us in vain may have abandoned our claim
	 * (marked it over): then we must not write. */
	int rc = kaas_topic_inc_over(t->cluster, tp->name, inc);
	if (rc != 0)
		return rc < 0 ? rc : kaas_sub_fail(KAAS_EFENCED, "topic %s: incarnation %llu was "
						   "abandoned by another creator", tp->name,
						   (unsigned long long)inc);
	struct kaas_topic_doc d = { .np = tp->npart, .inc = inc, .rf = tp->replication_factor };
	memcpy(d.id, tp->id, 16);
	rc = kaas_topic_doc_write(t->cluster, tp->name, &d, &tp->config);
	if (rc < 0)
		kaas_error("topic %s: writing its document failed: %s (%s)", tp->name,
			   kaas_strerror(rc), kaas_sub_errdetail());
	if (rc >= 0 && kaas_topic_inc_over(t->cluster, tp->name, inc) == 1) {
		/* Abandoned while we wrote (a pause of CREATE_WAIT_MS between the
		 * check above and the rename): our document may stand over the
		 * next incarnation's.  Not listed here; its directory is never
		 * reclaimed for us (a newer stamp), an operator looks. */
		kaas_error("topic %s: incarnation %llu was abandoned while its document was "
			   "written; the next incarnation's document may be overwritten", tp->name,
			   (unsigned long long)inc);
		return kaas_sub_fail(KAAS_EFENCED, "topic %s: incarnation abandoned", tp->name);
	}
	if (rc >= 0) {
		rc = kaas_topics_stamp_dir(t, tp->name, tp->id, inc, 1);
		if (rc < 0)
			kaas_error("topic %s: stamping its directory failed: %s (%s)", tp->name,
				   kaas_strerror(rc), kaas_sub_errdetail());
	}
	if (rc >= 0)
		rc = kaas_topics_open_partitions(t, tp);
	return rc;
}

/* One round of the creation protocol for `name` under admin_mu: 1 when
 * *tp is created (claimed, written, stamped, opened: ready to list), 0
 * when the round abandoned a dead creator's claim (go round again), or a
 * status (*why set): KAAS_EEXISTS, or -errno. */
static int create_round(struct kaas_topics *t, const char *name, int32_t npart, int32_t rf,
			const struct kaas_kvlist *config, int validate_only,
			struct kaas_topic **tp, const char **why)
{
	/* The latest incarnation claimed, read BEFORE the document: a creator
	 * that wins between the two reads then shows up as a lost claim
	 * below, never as a free name. */
	uint64_t latest = 0;
	int rc = kaas_topic_inc_latest(t->cluster, name, &latest);
	struct kaas_topic_doc d;
	int drc = rc < 0 ? rc : kaas_topic_doc_read(t->cluster, name, &d);
	if (drc != -ENOENT) {
		/* Another broker may have created it (or be deleting it) before
		 * our reconcile listed it: the document is the truth, never
		 * replaced. */
		*why = drc < 0 ? "the topic document is unreadable"
		       : d.deleting ? "the topic is being deleted"
				    : "topic already exists";
		return drc < 0 && drc != -EBADMSG ? drc : KAAS_EEXISTS;
	}
	if (validate_only)
		return 1;
	kaas_step("topics.create.before-doc-write");
	if (!*tp) {
		if (!(*tp = kaas_topic_new(name)))
			return -ENOMEM;
		if (getrandom((*tp)->id, sizeof((*tp)->id), 0) != (ssize_t)sizeof((*tp)->id))
			return -ENOMEM; /* no id: answered like an allocation failure */
		if (kaas_topics_set_config(t, *tp, config) < 0)
			return -ENOMEM;
	}
	(*tp)->npart = npart;
	(*tp)->replication_factor = rf;
	/* Incarnation latest+1 is free to claim once `latest` is over
	 * (deleted, abandoned, or none); exactly one creator wins it. */
	int over = kaas_topic_inc_over(t->cluster, name, latest);
	uint64_t theirs = over == 1 ? latest + 1 : latest;
	rc = over < 0 ? over : over ? kaas_topic_inc_claim(t->cluster, name, latest + 1, (*tp)->id)
				    : -EEXIST;
	if (rc == 0) {
		(*tp)->incarnation = latest + 1;
		rc = create_claimed(t, *tp, (*tp)->incarnation);
		if (rc < 0) {
			*why = "storage error creating the topic";
			return rc;
		}
		return 1;
	}
	if (rc != -EEXIST) {
		*why = "storage error creating the topic";
		return rc;
	}
	/* Another creator owns incarnation `theirs`: its id is the topic's.
	 * List it now (an auto-create then simply uses it). */
	rc = kaas_topic_doc_await(t->cluster, name, theirs, KAAS_TOPICS_CREATE_WAIT_MS, &d);
	if (rc == 0) {
		if (!d.deleting)
			kaas_topics_adopt(t, name, &d);
		*why = d.deleting ? "the topic is being deleted"
				  : "topic already exists (created concurrently elsewhere)";
		return KAAS_EEXISTS;
	}
	if (rc != -ETIMEDOUT) {
		*why = "the topic document is unreadable";
		return rc;
	}
	kaas_warn("topic %s: incarnation %llu was claimed but its document did not appear "
		  "within %d ms; abandoning it", name, (unsigned long long)theirs,
		  KAAS_TOPICS_CREATE_WAIT_MS);
	rc = kaas_topic_inc_mark_over(t->cluster, name, theirs);
	if (rc < 0) {
		*why = "storage error creating the topic";
		return rc;
	}
	return 0;
}

int kaas_topics_create(struct kaas_topics *t, const char *name, int32_t npart, int validate_only,
		       const char **why)
{
	return kaas_topics_create_config(t, name, npart, 1, NULL, validate_only, why);
}

int kaas_topics_create_checked(struct kaas_topics *t, const char *name, int32_t npart,
			       int32_t rf, const struct kaas_kvlist *config, int validate_only,
			       const char **why)
{
	int len = (int)strlen(name);
	if (!kaas_topic_name_valid(name, len)) {
		*why = "topic names are 1-249 characters of [a-zA-Z0-9._-], not '.' or '..'";
		return KAAS_EINVALNAME;
	}
	if (npart < 1 || npart > KAAS_TOPIC_MAX_PARTITIONS) {
		*why = "number of partitions must be between 1 and 100000";
		return KAAS_EINVALCOUNT;
	}
	kaas_topics_admin_lock(t);
	kaas_topics_lock(t);
	int exists = kaas_topics_find_locked(t, name, len) != NULL;
	kaas_topics_unlock(t);
	if (exists) {
		kaas_topics_admin_unlock(t);
		*why = "topic already exists";
		return KAAS_EEXISTS;
	}
	struct kaas_topic *tp = NULL;
	/* At most three rounds: a lost claim whose winner never wrote its
	 * document is abandoned, then the next incarnation is claimed. */
	int rc = 0;
	for (int round = 0; round < 3 && rc == 0; round++)
		rc = create_round(t, name, npart, rf, config, validate_only, &tp, why);
	if (rc == 0) {
		*why = "another broker keeps claiming the topic's incarnations";
		rc = KAAS_ECONTENDED;
	}
	if (rc < 0 || validate_only) {
		kaas_topic_free(tp);
		kaas_topics_admin_unlock(t);
		return rc < 0 ? rc : 0;
	}
	assert(tp && tp->parts);
	kaas_topics_lock(t);
	rc = kaas_topics_add_locked(t, tp);
	kaas_topics_unlock(t);
	kaas_topics_admin_unlock(t);
	if (rc < 0) {
		kaas_topic_free(tp);
		return rc;
	}
	kaas_info("topic %s: created with %d partition(s), incarnation %llu", name, npart,
		  (unsigned long long)tp->incarnation);
	return 0;
}

int kaas_topics_rewrite_doc(struct kaas_topics *t, const struct kaas_topic *tp, int32_t np,
			    int deleting, const struct kaas_kvlist *config)
{
	int rc = kaas_topic_doc_rewrite(t->cluster, tp->name, tp->id, np, deleting, config);
	if (rc == 1) {
		kaas_error("topic %s: incarnation %llu was deleted elsewhere while this broker "
			   "rewrote its document; a newer incarnation's document may be overwritten",
			   tp->name, (unsigned long long)tp->incarnation);
		rc = 0;
	} else if (rc < 0 && rc != KAAS_EFENCED) {
		kaas_error("topic %s: rewriting its document failed: %s (%s)", tp->name,
			   kaas_strerror(rc), kaas_sub_errdetail());
	}
	return rc;
}

int kaas_topics_delete(struct kaas_topics *t, const char *name)
{
	int len = (int)strlen(name);
	if (!kaas_topic_name_valid(name, len))
		return KAAS_EINVALNAME;
	kaas_topics_admin_lock(t);
	kaas_topics_lock(t);
	struct kaas_topic *tp = kaas_topics_find_locked(t, name, len);
	int rc = !tp || tp->deleting ? KAAS_EUNKNOWN : tp->offline ? KAAS_EOFFLINE : 0;
	kaas_topics_unlock(t);
	if (rc == KAAS_EOFFLINE)
		kaas_warn("topic %s: offline (damaged document); not deleting through the API", name);
	if (rc == 0) {
		rc = kaas_topics_rewrite_doc(t, tp, tp->npart, 1, NULL);
		if (rc == KAAS_EFENCED) {
			/* Our view was stale: that incarnation is gone (or going)
			 * elsewhere.  Unlist it here; never touch the name's new
			 * owner. */
			kaas_warn("topic %s: not deleting: %s", name, kaas_sub_errdetail());
			kaas_topics_unlist(t, tp);
			rc = KAAS_EUNKNOWN;
		}
	}
	if (rc < 0) {
		kaas_topics_admin_unlock(t);
		return rc;
	}
	/* Unlist it, wait for in-flight users, close its logs. */
	kaas_topics_detach(t, tp);
	uint8_t id[16];
	memcpy(id, tp->id, 16);
	uint64_t inc = tp->incarnation;
	kaas_topic_free(tp);
	/* Other brokers leading its partitions close them first.  The wait
	 * runs without admin_mu: it waits for an assignment without the topic,
	 * which this broker's own agent round writes and applies, and that
	 * round's reconcile takes admin_mu.  Holding it here made the two wait
	 * for each other until before_remove's bound (the liveness timeout),
	 * long enough for this broker's lease to lapse.  Unlocked, nothing can
	 * bring the topic back: it is unlisted, and its document is marked
	 * deleting, which reconcile does not list and creation refuses. */
	kaas_topics_admin_unlock(t);
	if (t->before_remove)
		t->before_remove(t->before_remove_arg, name);
	kaas_topics_admin_lock(t);
	rc = kaas_topics_reclaim_dir(t, name, id, inc, 1);
	kaas_topics_admin_unlock(t);
	if (rc < 0)
		kaas_error("topic %s: deletion incomplete (%s); it resumes at the next start", name,
			   kaas_strerror(rc));
	else
		kaas_info("topic %s: deleted", name);
	return 0;
}

struct kaas_topic *kaas_topics_admin_get(struct kaas_topics *t, const char *name,
					 const char **why, int *rc)
{
	kaas_topics_admin_lock(t);
	struct kaas_topic *tp = kaas_topics_get(t, name, (int)strlen(name));
	*rc = 0;
	if (!tp) {
		*rc = KAAS_EUNKNOWN;
	} else if (tp->offline) {
		*why = "the topic is offline (damaged document)";
		*rc = KAAS_EOFFLINE;
		kaas_topic_put(tp);
		tp = NULL;
	}
	return tp;
}

int kaas_topics_update_doc(struct kaas_topics *t, const struct kaas_topic *tp,
			   kaas_topic_edit_fn edit, void *arg, struct kaas_kvlist *out_config,
			   const char **why)
{
	assert(kaas_topics_holds_admin(t));
	int rc = kaas_topic_doc_update(t->cluster, tp->name, tp->id, edit, arg, NULL, out_config);
	if (rc == 1) {
		kaas_error("topic %s: incarnation %llu was deleted elsewhere while this broker "
			   "rewrote its document; a newer incarnation's document may be overwritten",
			   tp->name, (unsigned long long)tp->incarnation);
		rc = 0;
	} else if (rc == KAAS_EFENCED) {
		*why = "the topic was deleted or re-created elsewhere";
		rc = KAAS_EUNKNOWN;
	} else if (rc == KAAS_ECONTENDED) {
		*why = "other admins kept changing the topic at the same time; retry";
		kaas_warn("topic %s: %s", tp->name, kaas_sub_errdetail());
	} else if (rc < 0 && rc > -KAAS_STATUS_BASE) {
		kaas_error("topic %s: rewriting its document failed: %s (%s)", tp->name,
			   kaas_strerror(rc), kaas_sub_errdetail());
	}
	return rc;
}

/* CreatePartitions' change: at least `count` partitions, above the
 * document's own count. */
struct grow_edit {
	int32_t count;
	const char **why;
};

static int grow_doc(void *arg, struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	(void)config;
	struct grow_edit *g = arg;
	if (g->count <= d->np) {
		static _Thread_local char msg[120];
		snprintf(msg, sizeof msg, "the topic has %lld partitions (grown elsewhere), which is "
			 "not below the requested %d", (long long)d->np, (int)g->count);
		*g->why = msg;
		return KAAS_EINVALCOUNT;
	}
	d->np = g->count;
	return 0;
}

int kaas_topics_add_partitions(struct kaas_topics *t, const char *name, int32_t count,
			       int validate_only, const char **why)
{
	const char *dummy;
	int rc = kaas_topics_begin(name, &why, &dummy);
	if (rc < 0)
		return rc;
	struct kaas_topic *tp = kaas_topics_admin_get(t, name, why, &rc);
	if (!tp) {
		/* rc says why */
	} else if (count <= tp->npart || count > KAAS_TOPIC_MAX_PARTITIONS) {
		*why = "the new partition count must be above the current one";
		rc = KAAS_EINVALCOUNT;
	} else if (!validate_only) {
		/* The document first (desired state), then the new logs. */
		struct grow_edit g = { count, why };
		rc = kaas_topics_update_doc(t, tp, grow_doc, &g, NULL, why);
		if (rc == 0) {
			rc = kaas_topics_grow(t, tp, count);
			if (rc == 0)
				kaas_info("topic %s: grown to %d partitions", name, count);
		}
	}
	kaas_topic_put(tp);
	kaas_topics_admin_unlock(t);
	return rc;
}
