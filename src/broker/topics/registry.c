/* topics/registry.c — the in-memory registry: the list of topics, lookup,
 * references, and waiting for exclusive use of a topic (see internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/lanes.h"
#include "util/lock_rank.h"
#include "util/logger.h"
#include "broker/topics/internal.h"

/* The registry whose mu / admin_mu this thread holds, if any. */
static _Thread_local const struct kaas_topics *held_mu, *held_admin;

/* The registry's own reference on every listed topic. */
#define REGISTRY_REF 1

/* Lock m of t, recording it in *held (this thread's). */
static void lock_held(pthread_mutex_t *m, int rank, const struct kaas_topics **held,
		      const struct kaas_topics *t)
{
	kaas_lock(m, rank);
	assert(!*held);
	*held = t;
}

static void unlock_held(pthread_mutex_t *m, const struct kaas_topics **held,
			const struct kaas_topics *t)
{
	assert(*held == t);
	*held = NULL;
	kaas_unlock(m);
}

void kaas_topics_lock(struct kaas_topics *t)
{
	lock_held(&t->mu, KAAS_RANK_TOPICS, &held_mu, t);
}

void kaas_topics_unlock(struct kaas_topics *t)
{
	unlock_held(&t->mu, &held_mu, t);
}

void kaas_topics_admin_lock(struct kaas_topics *t)
{
	assert(held_mu != t); /* order: admin_mu before mu */
	lock_held(&t->admin_mu, KAAS_RANK_TOPICS_ADMIN, &held_admin, t);
}

void kaas_topics_admin_unlock(struct kaas_topics *t)
{
	unlock_held(&t->admin_mu, &held_admin, t);
}

int kaas_topics_holds(const struct kaas_topics *t)
{
	return held_mu == t;
}

int kaas_topics_holds_admin(const struct kaas_topics *t)
{
	return held_admin == t;
}

struct kaas_topic *kaas_topics_find_locked(struct kaas_topics *t, const char *name, int len)
{
	assert(kaas_topics_holds(t));
	for (int i = 0; i < t->n; i++)
		if ((int)strlen(t->v[i]->name) == len && memcmp(t->v[i]->name, name, (size_t)len) == 0)
			return t->v[i];
	return NULL;
}

int kaas_topics_add_locked(struct kaas_topics *t, struct kaas_topic *tp)
{
	assert(kaas_topics_holds(t));
	assert(!tp->reg && !tp->refs);
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		struct kaas_topic **v = realloc(t->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	tp->reg = t;
	tp->refs = REGISTRY_REF;
	t->v[t->n++] = tp;
	return 0;
}

void kaas_topic_hold(struct kaas_topic *tp)
{
	struct kaas_topics *t = tp->reg;
	assert(kaas_topics_holds_admin(t));
	kaas_topics_lock(t);
	assert(tp->refs >= REGISTRY_REF && !tp->deleting);
	tp->refs++;
	kaas_topics_unlock(t);
}

struct kaas_topic *kaas_topic_new(const char *name)
{
	struct kaas_topic *tp = calloc(1, sizeof(*tp));
	if (tp && !(tp->name = strdup(name))) {
		free(tp);
		tp = NULL;
	}
	if (tp) { /* the built-in defaults until kaas_topics_set_config */
		kaas_topic_settings_resolve(NULL, NULL, &tp->settings);
		tp->replication_factor = 1;
	}
	return tp;
}

/* A topic whose document or directory cannot be trusted stays listed as
 * offline (no partitions): its name cannot be re-created or deleted through
 * the API, so a damaged document is never silently replaced by a new
 * incarnation that would reclaim the old data.  An operator repairs it. */
int kaas_topics_add_offline(struct kaas_topics *t, const char *name)
{
	struct kaas_topic *tp = kaas_topic_new(name);
	if (!tp)
		return -ENOMEM;
	tp->offline = 1;
	kaas_topics_lock(t);
	int rc = kaas_topics_add_locked(t, tp);
	kaas_topics_unlock(t);
	if (rc < 0)
		kaas_topic_free(tp);
	return rc;
}

void kaas_topic_free(struct kaas_topic *tp)
{
	if (!tp)
		return;
	assert(tp->refs <= REGISTRY_REF);
	for (int32_t i = 0; tp->parts && i < tp->npart; i++) {
		if (tp->parts[i].log) {
			int rc = kaas_log_close(tp->parts[i].log);
			if (rc < 0)
				kaas_error("topic %s partition %d: close failed: %s", tp->name, i,
					   kaas_strerror(rc));
		}
		kaas_hw_token_put(tp->parts[i].token);
		kaas_lane_release(tp->parts[i].lane); /* no request holds the topic */
	}
	free(tp->parts);
	kaas_kvlist_clear(&tp->config);
	free(tp->name);
	free(tp);
}

void kaas_topic_wait_exclusive(struct kaas_topic *tp, int held)
{
	struct kaas_topics *t = tp->reg;
	assert(held == 0 || held == 1);
	assert(kaas_topics_holds(t) && kaas_topics_holds_admin(t));
	assert(tp->refs >= REGISTRY_REF + held);
	while (tp->refs > REGISTRY_REF + held)
		pthread_cond_wait(&t->cv, &t->mu);
}

void kaas_topics_detach(struct kaas_topics *t, struct kaas_topic *tp)
{
	assert(kaas_topics_holds_admin(t));
	kaas_topics_lock(t);
	tp->deleting = 1;
	kaas_topic_wait_exclusive(tp, 0);
	int found = 0;
	for (int i = 0; i < t->n && !found; i++)
		if (t->v[i] == tp) {
			t->v[i] = t->v[--t->n];
			found = 1;
		}
	assert(found);
	kaas_topics_unlock(t);
}

void kaas_topics_unlist(struct kaas_topics *t, struct kaas_topic *tp)
{
	kaas_topics_detach(t, tp);
	kaas_info("topic %s: deleted or replaced elsewhere; closed here", tp->name);
	kaas_topic_free(tp);
}

struct kaas_topic *kaas_topics_get(struct kaas_topics *t, const char *name, int len)
{
	kaas_topics_lock(t);
	struct kaas_topic *tp = kaas_topics_find_locked(t, name, len);
	if (tp && !tp->deleting)
		tp->refs++;
	else
		tp = NULL;
	kaas_topics_unlock(t);
	return tp;
}

void kaas_topic_put(struct kaas_topic *tp)
{
	if (!tp)
		return;
	struct kaas_topics *t = tp->reg;
	kaas_topics_lock(t);
	assert(tp->refs > REGISTRY_REF);
	tp->refs--;
	/* Exclusive waiters wait for the registry's reference and at most
	 * one of their own. */
	if (tp->refs <= REGISTRY_REF + 1)
		pthread_cond_broadcast(&t->cv);
	kaas_topics_unlock(t);
}

struct kaas_topic **kaas_topics_list(struct kaas_topics *t, int *n)
{
	kaas_topics_lock(t);
	struct kaas_topic **v = malloc(sizeof(*v) * (size_t)(t->n + 1));
	int k = 0;
	for (int i = 0; v && i < t->n; i++)
		if (!t->v[i]->deleting) {
			t->v[i]->refs++;
			v[k++] = t->v[i];
		}
	kaas_topics_unlock(t);
	*n = k;
	return v;
}
