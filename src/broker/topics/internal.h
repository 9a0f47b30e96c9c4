/*
 * topics/internal.h — what the parts of the topic registry share (never
 * included outside src/broker/topics/).  The public contract is
 * broker/topics.h; the on-volume records are cluster/topic_store.h.
 *
 *   registry.c    the in-memory list, lookup, references, exclusive use
 *   partitions.c  opening, re-opening and growing partition logs
 *   removal.c     convergent removal (rename aside to .trash, remove),
 *                 claiming a directory for an incarnation (stamp)
 *   admin.c       create, delete, grow (the API's topic operations)
 *   reconcile.c   following the documents and the lease (cluster mode)
 *   load.c        open (claim an epoch, load documents), close, housekeep
 *
 * Locks: `mu` guards the list and every topic's refs/deleting and its
 * parts array (pointer, npart, the entries' log pointers); `admin_mu`
 * serialises all volume work that changes topics (create, delete, grow,
 * reconcile, housekeeping), so at most one thread ever waits for
 * exclusive use of a topic.  Order: admin_mu before mu.  The fields below
 * `admin_mu` are the admin_mu holder's.
 */
#ifndef KAAS_BROKER_TOPICS_INTERNAL_H
#define KAAS_BROKER_TOPICS_INTERNAL_H

#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "broker/topics.h"
#include "cluster/topic_store.h"
#include "contract/contract.h"

/* A name whose document (or directory) stays in one odd state, first seen
 * by reconcile at `since` (kaas_mono_ms); `driven` once this broker took
 * the work over. */
struct kaas_topics_stuck {
	char name[256];
	uint8_t id[16];
	uint64_t since;
	int driven, seen;
	int foreign;              /* 0: a document marked deleting; 1: a
	                             directory stamped by another incarnation
	                             than the document's */
};

/* A delete (or a foreign stamp's creator) that died midway is taken over
 * by whoever sees the same state this long. */
#define KAAS_TOPICS_STUCK_MS 30000

/* How many partition logs are opened at once (a bounded parallel-for of
 * short-lived threads, util/parallel.h). */
#define KAAS_TOPICS_OPEN_THREADS 16

/* How long a creator that lost the claim of an incarnation waits for the
 * winner's document before it takes the winner for dead and abandons it. */
#define KAAS_TOPICS_CREATE_WAIT_MS 10000

struct kaas_topics {
	struct kaas_substrate *data, *cluster;
	kaas_log_notify_cb notify;
	void *notify_arg;
	kaas_lease_fn lease;      /* cluster mode: which partitions we lead */
	void *lease_arg;
	uint32_t epoch;           /* leader epoch of this incarnation (no lease) */
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* broadcast when a topic's refs drop */
	struct kaas_topic **v;    /* under mu */
	int n, cap;
	pthread_mutex_t admin_mu;
	struct kaas_pending pending;  /* unfinished removals */
	void (*before_remove)(void *arg, const char *name);
	void *before_remove_arg;
	struct kaas_topics_stuck *stuck; /* reconcile's observations */
	size_t nstuck;
	unsigned reconciles;      /* reconcile rounds so far */
	int reconcile_left;       /* the last round ran out of its budget */
	unsigned reconcile_budget_ms; /* see kaas_topics_opts */
	struct kaas_kvlist defaults; /* broker defaults of topic settings */
};

/* ------------------------------------------------------------ config.c */

/* Make `config` (checked; copied) tp's overrides and resolve its settings;
 * the open logs of tp are retuned.  Caller holds admin_mu (or tp is not
 * listed yet).  0 or -ENOMEM. */
int kaas_topics_set_config(struct kaas_topics *t, struct kaas_topic *tp,
			   const struct kaas_kvlist *config);

/* kaas_topic_doc_rewrite for listed topic tp (np < 0: keep the count;
 * config NULL: keep the overrides), with its failures logged; 1 (written,
 * but found over right after) is logged and answered 0. */
int kaas_topics_rewrite_doc(struct kaas_topics *t, const struct kaas_topic *tp, int32_t np,
			    int deleting, const struct kaas_kvlist *config);

/* The start of an admin call that answers *why: *why pointed at `dummy`
 * when the caller passed none, and cleared.  KAAS_EINVALNAME when `name`
 * is not a legal topic name, else 0. */
static inline int kaas_topics_begin(const char *name, const char ***why, const char **dummy)
{
	if (!*why)
		*why = dummy;
	**why = NULL;
	return kaas_topic_name_valid(name, (int)strlen(name)) ? 0 : KAAS_EINVALNAME;
}

/* Take admin_mu and a reference to listed, online topic `name`: it, or
 * NULL with *rc KAAS_EUNKNOWN or KAAS_EOFFLINE (*why set).  admin_mu is
 * held either way. */
struct kaas_topic *kaas_topics_admin_get(struct kaas_topics *t, const char *name,
					 const char **why, int *rc);

/* Change listed tp's document for a client (kaas_topic_doc_update with
 * `edit`; *out_config, may be NULL, the overrides written): 0 (1, written
 * but the incarnation found over right after, is logged and answered 0),
 * KAAS_EUNKNOWN with *why when the incarnation is gone elsewhere,
 * KAAS_ECONTENDED with *why, the edit's status, or -errno (logged).
 * Caller holds admin_mu. */
int kaas_topics_update_doc(struct kaas_topics *t, const struct kaas_topic *tp,
			   kaas_topic_edit_fn edit, void *arg, struct kaas_kvlist *out_config,
			   const char **why);

/* kaas_topics_create after the overrides were checked (admin.c). */
int kaas_topics_create_checked(struct kaas_topics *t, const char *name, int32_t npart,
			       int32_t rf, const struct kaas_kvlist *config, int validate_only,
			       const char **why);

/* The log configuration a partition of tp is opened with. */
void kaas_topics_log_config(const struct kaas_topic *tp, struct kaas_log_config *cfg);

/* ------------------------------------------------------------ registry.c */

/* Lock / unlock a registry's mutexes, recording the holder so the
 * functions below can assert it (per thread: a thread holds at most one
 * registry's). */
void kaas_topics_lock(struct kaas_topics *t);
void kaas_topics_unlock(struct kaas_topics *t);
void kaas_topics_admin_lock(struct kaas_topics *t);
void kaas_topics_admin_unlock(struct kaas_topics *t);
int kaas_topics_holds(const struct kaas_topics *t);       /* this thread holds mu */
int kaas_topics_holds_admin(const struct kaas_topics *t); /* this thread holds admin_mu */

/* The listed topic `name` (deleting ones too), no reference taken, or
 * NULL.  Caller holds mu. */
struct kaas_topic *kaas_topics_find_locked(struct kaas_topics *t, const char *name, int len);

/* List tp (refs becomes 1: the registry's own).  0 or -ENOMEM.  Caller
 * holds mu. */
int kaas_topics_add_locked(struct kaas_topics *t, struct kaas_topic *tp);

/* Take one more reference to listed topic tp (release with
 * kaas_topic_put).  Caller holds admin_mu (so tp stays listed). */
void kaas_topic_hold(struct kaas_topic *tp);

/* A new topic record (name copied, nothing opened), or NULL. */
struct kaas_topic *kaas_topic_new(const char *name);

/* List `name` offline (no partitions): its document or directory cannot be
 * trusted now; reconcile reads it again every round.  0 or -ENOMEM. */
int kaas_topics_add_offline(struct kaas_topics *t, const char *name);

/* Close every open log of tp (cleanly) and free it.  tp is unlisted or
 * was never listed.  NULL is a no-op. */
void kaas_topic_free(struct kaas_topic *tp);

/* Wait until the only references to tp are the registry's own and the
 * `held` (0 or 1) the caller holds: then no request uses the topic and the
 * caller may change its partitions until it unlocks mu.  Caller holds mu
 * (released while waiting) and admin_mu (so it is the only waiter). */
void kaas_topic_wait_exclusive(struct kaas_topic *tp, int held);

/* Mark tp deleting (no new references), wait until no request uses it,
 * and unlist it; the caller then owns it (kaas_topic_free).  Caller holds
 * admin_mu and no reference. */
void kaas_topics_detach(struct kaas_topics *t, struct kaas_topic *tp);

/* Detach and free a topic deleted or replaced elsewhere.  Caller holds
 * admin_mu and no reference. */
void kaas_topics_unlist(struct kaas_topics *t, struct kaas_topic *tp);

/* ------------------------------------------------------------ partitions.c */

/* Open every partition of a topic no one else can see yet (tp->npart
 * entries).  0 or -ENOMEM; a partition that fails to open records its
 * open_err. */
int kaas_topics_open_partitions(struct kaas_topics *t, struct kaas_topic *tp);

/* Grow listed topic tp to `count` (> tp->npart) partitions: the new logs
 * are opened first, then the array is swapped in under exclusive use.
 * 0 or -ENOMEM (nothing changed).  Caller holds admin_mu and one
 * reference. */
int kaas_topics_grow(struct kaas_topics *t, struct kaas_topic *tp, int32_t count);

/* Close partition k's log (if open) under exclusive use and open it again
 * as the lease now says, keeping its data-arrival token.  `why` names the
 * reason in the log (NULL: the lease moved).  Returns 1 when the partition
 * now has a log, else 0.  Caller holds admin_mu and one reference. */
int kaas_topics_reopen(struct kaas_topics *t, struct kaas_topic *tp, int32_t k, const char *why);

/* kaas_topics_reopen (why NULL: the lease moved) for the n distinct
 * partitions ks[] of tp: one wait for exclusive use, the old logs closed,
 * the new ones opened KAAS_TOPICS_OPEN_THREADS at a time (they are
 * independent: each a few syncs on the volume), then all installed.  An
 * open, but the first of ks[], not started by `deadline` (kaas_mono_ms; 0:
 * none) is not started:
 * that partition is left without a log as KAAS_PART_NOT_LEADER (the next
 * reconcile opens it) and *late is set to 1.  Returns how many now have a
 * log.  Caller holds admin_mu and one reference. */
size_t kaas_topics_reopen_many(struct kaas_topics *t, struct kaas_topic *tp, const int32_t *ks,
			       size_t n, uint64_t deadline, int *late);

/* Re-open every partition whose log failed or could not be opened for a
 * retryable reason; returns how many are still without a log.  Caller
 * holds admin_mu and no reference. */
size_t kaas_topics_reopen_failed(struct kaas_topics *t);

/* ------------------------------------------------------------ removal.c */

/* Rename <data>/<name> aside (if present and stamped with `id`) and remove
 * it convergently; with remove_doc, then mark incarnation `inc` over and
 * remove the topic document, while it still names `id`.  Unfinished work,
 * the rename aside included, is recorded in t->pending and re-driven by
 * housekeeping: 0, or -errno (-EAGAIN: without remove_doc, the directory
 * could not be renamed aside, nothing recorded).  Caller holds admin_mu. */
int kaas_topics_reclaim_dir(struct kaas_topics *t, const char *name, const uint8_t id[16],
			    uint64_t inc, int remove_doc);

/* Entries left in <data>/.trash by an interrupted removal: remove them
 * again (re-driven by housekeeping when unfinished).  0 or -errno.
 * Called at open. */
int kaas_topics_redrive_trash(struct kaas_topics *t);

/* Make <data>/<name>/ incarnation (id, inc)'s: adopt an unstamped
 * directory, write the stamp.  A directory stamped by another incarnation
 * is reclaimed (renamed aside) only with may_reclaim, only when that
 * incarnation is older (by number, where both are numbered) and only while
 * the topic document still names ours, re-read here (our view may be the
 * stale one); otherwise KAAS_EFENCED and nothing is touched.  0 or -errno.
 * Caller holds admin_mu. */
int kaas_topics_stamp_dir(struct kaas_topics *t, const char *name, const uint8_t id[16],
			  uint64_t inc, int may_reclaim);

/* ------------------------------------------------------------ reconcile.c */

/* List the topic another broker created (incarnation *d), its directory
 * adopted or, when it stays stamped by another incarnation for
 * KAAS_TOPICS_STUCK_MS, reclaimed.  Nothing listed when that is not (yet)
 * possible: a later reconcile retries.  Caller holds admin_mu. */
void kaas_topics_adopt(struct kaas_topics *t, const char *name, const struct kaas_topic_doc *d);

#endif
