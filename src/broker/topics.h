/*
 * topics.h — the broker's topics and their partition logs: the service the
 * Kafka handlers call for topics.  Speaks kaas statuses (util/status.h),
 * never Kafka error codes.
 *
 * Desired state lives in <cluster>/topics/<name>.json; each topic
 * directory <data>/<name>/ carries the identity stamp .topic-id.json of
 * its incarnation; incarnations of a name are numbered and decided by
 * exclusive create in <cluster>/topic-incarnations/<name>/ (formats:
 * cluster/topic_store.h).  Partition logs live in <data>/<name>/<partition>/
 * (src/log), opened only under a directory stamped with the listed id (an
 * open never creates the topic directory).
 *
 * A creator claims incarnation N+1 only once N is over; the loser of a
 * claim waits for the winner's document, lists that id and answers
 * KAAS_EEXISTS (a claim whose document does not come within 10 s is
 * abandoned: marked over).  A stamp of an older incarnation is reclaimed
 * by the new incarnation's creator (or, after 30 s, by any broker), while
 * the re-read document still names the new one: the directory is renamed
 * aside to <data>/.trash/<name>.<old id> and removed convergently; an
 * unstamped directory is adopted.  Deleting a topic: the document is
 * re-read and, still naming the listed incarnation, marked deleting; the
 * partitions are closed, the directory is renamed aside and removed
 * convergently (unfinished removals are re-driven by
 * kaas_topics_housekeep), the incarnation is marked over, then the
 * document is removed.  Growing re-reads the document the same way.  A
 * topic whose document (or stamp) cannot be read is listed offline and
 * read again at every reconcile.
 *
 * Leader epoch: with a lease function (kaas_topics_open_leased, what kaasd
 * uses: the cluster agent, broker/agent.h) a partition's log is opened
 * only when the lease says this broker leads it, with the leader epoch of
 * the cluster assignment; kaas_topics_reconcile opens, re-opens (new epoch)
 * and closes logs as the assignment moves, and picks up topics other
 * brokers created, grew or deleted.  A partition not led here has no log and
 * open_err KAAS_PART_NOT_LEADER.  Without a lease function (tools, tests)
 * each registry claims the next number in <cluster>/leader-epochs/ by
 * exclusive create and opens every partition log with it.
 *
 * The implementation is src/broker/topics/ (internal.h lists its parts).
 *
 * Threads: every function may be called from any thread (one registry
 * mutex, and one more serialising the calls that change topics); calls
 * that touch the volume block, so the event loop calls them only from its
 * work queue.  kaas_topics_get/list and kaas_topic_put are memory-only.
 */
#ifndef KAAS_BROKER_TOPICS_H
#define KAAS_BROKER_TOPICS_H

#include <errno.h>
#include <stdint.h>

#include "broker/topic_config.h"
#include "cluster/topic_store.h" /* kaas_topic_name_valid */
#include "log/log.h"

struct kaas_lane;
#include "substrate/substrate.h"
#include "util/status.h"

struct kaas_topics;

/* open_err of a partition this broker does not lead (the assignment names
 * another broker, or none yet). */
#define KAAS_PART_NOT_LEADER KAAS_ENOTLEADER

/* Does this broker lead (topic, partition)?  1 and *epoch (the leader epoch
 * to open its log with), or 0.  Called from any thread, must not block on
 * the volume. */
typedef int (*kaas_lease_fn)(void *arg, const char *topic, int32_t partition, uint32_t *epoch);

/* A partition's data-arrival token: the high watermark its log last
 * announced (kaas_log_set_notify), shared by reference with parked fetches
 * so the loop can tell whether their partitions moved without touching a
 * log that may be closed meanwhile.  Kept across re-opens of the log. */
struct kaas_hw_token {
	int refs;                 /* atomic */
	int64_t hw;               /* atomic: the last announced high watermark */
	kaas_log_notify_cb fn;    /* the registry's notify callback, then called */
	void *arg;
};
/* Take / drop a reference (any thread; NULL is a no-op). */
struct kaas_hw_token *kaas_hw_token_get(struct kaas_hw_token *tok);
void kaas_hw_token_put(struct kaas_hw_token *tok);
static inline int64_t kaas_hw_token_hw(const struct kaas_hw_token *tok)
{
	return __atomic_load_n(&tok->hw, __ATOMIC_ACQUIRE);
}

struct kaas_partition {
	int32_t index;
	struct kaas_hw_token *token; /* never NULL once the topic is listed */
	struct kaas_log *log;     /* NULL when it failed to open (open_err) */
	int open_err;             /* -errno of the failed open, or 0 */
	int failed;               /* the log failed (a write or fsync error):
	                             kaas_topics_housekeep re-opens it */
	uint32_t epoch;           /* leader epoch it was opened (or tried) with */
	struct kaas_lane *lane;   /* its produce lane (broker/lanes.h), made by
	                             the first Produce (loop thread); released
	                             with the topic */
};

/* Is the partition without a log because another broker leads it (answer
 * NOT_LEADER_OR_FOLLOWER), rather than because its log failed? */
static inline int kaas_partition_not_led(const struct kaas_partition *p)
{
	return !p->log && p->open_err == KAAS_PART_NOT_LEADER;
}

/* Record that a partition's log failed (any thread): the next housekeeping
 * closes it and opens it again (its tail recovered by CRC), so a full or
 * flaky volume costs produce errors for a while, not the partition. */
void kaas_partition_mark_failed(struct kaas_partition *p);

struct kaas_topic {
	char *name;
	uint8_t id[16];
	uint64_t incarnation;     /* its number (topic-incarnations claims);
	                             0 for a document written before them */
	int32_t npart;
	struct kaas_partition *parts;
	int refs;                 /* under the registry mutex */
	int deleting;
	int offline;              /* its document or directory is damaged: no
	                             partitions, never re-created over */
	int32_t replication_factor; /* as its creator asked (recorded, never
	                             acted on: the volume is the one copy) */
	struct kaas_kvlist config; /* its config overrides, as its document
	                             says (under the registry mutex) */
	struct kaas_topic_settings settings; /* what they resolve to with the
	                             broker defaults: each field read and
	                             written atomically (kaas_topic_setting) */
	struct kaas_topics *reg;
};

/* A field of a topic's resolved settings, read atomically (any thread,
 * with a reference): kaas_topic_setting(tp, max_message_bytes). */
#define kaas_topic_setting(tp, field) __atomic_load_n(&(tp)->settings.field, __ATOMIC_RELAXED)

/* kaas_topic_name_valid (cluster/topic_store.h) says whether a name is legal. */

/* Open the registry: claim a leader epoch, load every topic document, finish deletes that were
 * under way, check stamps, open every partition log.  notify/arg are set on
 * every log (kaas_log_set_notify) opened now or later.  Returns 0 and *out,
 * or -errno (the detail is logged). */
int kaas_topics_open(struct kaas_substrate *data, struct kaas_substrate *cluster,
		     kaas_log_notify_cb notify, void *arg, struct kaas_topics **out);
/* The same, opening only the partitions `lease` grants (and with its
 * epochs); lease NULL is kaas_topics_open. */
int kaas_topics_open_leased(struct kaas_substrate *data, struct kaas_substrate *cluster,
			    kaas_lease_fn lease, void *lease_arg, kaas_log_notify_cb notify,
			    void *arg, struct kaas_topics **out);

/* Everything a registry is opened with; kaas_topics_open_leased is this
 * with defaults NULL. */
struct kaas_topics_opts {
	struct kaas_substrate *data, *cluster;
	kaas_lease_fn lease;      /* NULL: every partition, claimed epochs */
	void *lease_arg;
	kaas_log_notify_cb notify;
	void *notify_arg;
	const struct kaas_kvlist *defaults; /* broker defaults of topic settings
	                             (checked; copied), or NULL */
	unsigned reconcile_budget_ms; /* how long one kaas_topics_reconcile may
	                             spend opening and closing logs; 0: the
	                             default, KAAS_TOPICS_RECONCILE_BUDGET_MS */
};
int kaas_topics_open_opts(const struct kaas_topics_opts *o, struct kaas_topics **out);

/* The default of kaas_topics_opts.reconcile_budget_ms. */
#define KAAS_TOPICS_RECONCILE_BUDGET_MS 1000

/* Cluster reconcile (call after the lease view changed, and periodically):
 *   - topics: documents created, grown, re-configured (new settings applied
 *     to the open logs) or deleted (marked deleting, removed,
 *     or naming another incarnation) by any broker are picked up: new ones
 *     listed (their directory adopted or stamped when unstamped, or
 *     reclaimed when stamped by an earlier incarnation, after re-reading the
 *     document to be sure it is not our view that is old), gone ones closed
 *     and unlisted (their files are removed by the broker that deletes);
 *   - partitions: logs opened for partitions the lease grants, re-opened
 *     when the granted epoch changed, closed when no longer granted (each
 *     once no request uses the topic), many at once (a bounded
 *     parallel-for), and only for the registry's budget (default
 *     KAAS_TOPICS_RECONCILE_BUDGET_MS, 1 s) per call: what is left waits for the next call (see
 *     kaas_topics_reconcile_left), so a round of a broker given thousands of
 *     partitions does not outlast its lease.
 * Returns how many partitions this broker now leads (by the lease: some
 * may still be opening), or -errno when the topic documents could not be
 * listed.  Blocks (volume). */
int kaas_topics_reconcile(struct kaas_topics *t);

/* 1 when the last kaas_topics_reconcile ran out of its budget with
 * partitions still to open or close (call it again soon), else 0. */
int kaas_topics_reconcile_left(struct kaas_topics *t);

/* Called by kaas_topics_delete after the document is marked deleting and
 * this broker closed its logs, before the directory is renamed aside: the
 * cluster agent waits there until the other leaders closed theirs. */
void kaas_topics_set_before_remove(struct kaas_topics *t, void (*fn)(void *arg, const char *name),
				   void *arg);

/* Close every log (cleanly: manifests written) and free the registry. */
void kaas_topics_close(struct kaas_topics *t);

/* Look a topic up by name; returns it with a reference (release with
 * kaas_topic_put), or NULL if unknown or being deleted. */
struct kaas_topic *kaas_topics_get(struct kaas_topics *t, const char *name, int len);
void kaas_topic_put(struct kaas_topic *topic);

/* Does topic `name` exist on the volume (its document, not marked
 * deleting), listed here yet or not?  1, 0, or -errno.  One document read
 * (blocks): for a request naming a topic this broker has not listed yet. */
int kaas_topics_on_volume(struct kaas_topics *t, const char *name);

/* Snapshot of every live topic (each referenced): a malloc'd array of *n
 * pointers; release each with kaas_topic_put and free the array. */
struct kaas_topic **kaas_topics_list(struct kaas_topics *t, int *n);

/* Create a topic with `npart` partitions.  Returns 0, KAAS_EINVALNAME,
 * KAAS_EINVALCOUNT (npart < 1 or > 100000), KAAS_EEXISTS (listed, or its
 * document exists or is being deleted, or another creator won the
 * incarnation: then that one is listed here), KAAS_ECONTENDED (creators
 * that never wrote their document kept claiming the incarnations),
 * -ENOMEM, or another -errno / KAAS_EFENCED (the volume: a storage
 * error).  *why (static, may be NULL) says why, for the client.
 * validate_only: check, change nothing.  Blocks (volume). */
int kaas_topics_create(struct kaas_topics *t, const char *name, int32_t npart,
		       int validate_only, const char **why);

/* kaas_topics_create with the replication factor the client asked for (rf
 * >= 1: recorded in the document; durability is the volume's, so any is
 * accepted; KAAS_EINVALCOUNT when below 1) and config overrides `config`
 * (NULL: none): checked first (KAAS_EBADCONFIG, *why naming the key: valid
 * on this thread until its next call), stored in the document, applied to
 * the logs. */
int kaas_topics_create_config(struct kaas_topics *t, const char *name, int32_t npart,
			      int32_t rf, const struct kaas_kvlist *config, int validate_only,
			      const char **why);

/* A copy of listed topic `name`'s config overrides into *out (replaced):
 * 0, KAAS_EUNKNOWN, KAAS_EOFFLINE, or -ENOMEM.  Memory only. */
int kaas_topics_config_get(struct kaas_topics *t, const char *name, struct kaas_kvlist *out);

/* The broker defaults the registry resolves settings with (never NULL;
 * fixed after open). */
const struct kaas_kvlist *kaas_topics_defaults(const struct kaas_topics *t);

/* Replace topic `name`'s config overrides by `config`: kaas_topics_edit_config
 * with an edit that ignores the current overrides. */
int kaas_topics_alter_config(struct kaas_topics *t, const char *name,
			     const struct kaas_kvlist *config, int validate_only, const char **why);

/* A change to a topic's config overrides: *next (empty) from `cur`, the
 * overrides the topic's document holds right now.  0, or a status with
 * *why set (valid on this thread until its next call) that refuses it.  May
 * be called more than once for one change (once per attempt, each on a
 * fresh read): a pure function of its input and arg. */
typedef int (*kaas_topics_config_edit_fn)(void *arg, const struct kaas_kvlist *cur,
					  struct kaas_kvlist *next, const char **why);

/* Change topic `name`'s config overrides (AlterConfigs,
 * IncrementalAlterConfigs): `edit` is applied to the overrides of the
 * document as re-read under a claim of its next revision
 * (cluster/topic_store.h: kaas_topic_doc_update), never to this broker's
 * copy, so a change made through another broker a moment earlier is kept;
 * the result checked (KAAS_EBADCONFIG, *why as for create), written while
 * the document names the listed incarnation, applied to the open logs here
 * (and by the next reconcile on every other broker).  validate_only: the
 * edit and the check on the document as read, nothing written.  0,
 * KAAS_EINVALNAME, KAAS_EUNKNOWN (not listed, or deleted or re-created
 * elsewhere), KAAS_EOFFLINE, KAAS_EBADCONFIG or the edit's status,
 * KAAS_ECONTENDED (other admins kept changing the document: retry), or
 * -errno (the document).  Blocks. */
int kaas_topics_edit_config(struct kaas_topics *t, const char *name,
			    kaas_topics_config_edit_fn edit, void *arg, int validate_only,
			    const char **why);

/* Delete a topic: 0 (its removal may finish later: housekeeping and the
 * next start re-drive it), KAAS_EINVALNAME, KAAS_EUNKNOWN (not listed, or
 * deleted or re-created elsewhere: then unlisted here), KAAS_EOFFLINE (a
 * damaged document: an operator repairs it), or -errno (marking the
 * document deleting failed).  Blocks until the partitions are closed. */
int kaas_topics_delete(struct kaas_topics *t, const char *name);

/* Grow a topic to `count` partitions: 0, KAAS_EINVALNAME, KAAS_EUNKNOWN
 * (not listed, or deleted or re-created elsewhere), KAAS_EOFFLINE,
 * KAAS_EINVALCOUNT (count not above the current count, here or in the
 * document as re-read under a claim of its next revision: a grow made
 * through another broker counts; or above 100000), KAAS_ECONTENDED (other
 * admins kept changing the document: retry), -ENOMEM, or -errno (the
 * document).  *why as for create. */
int kaas_topics_add_partitions(struct kaas_topics *t, const char *name, int32_t count,
			       int validate_only, const char **why);

/* Re-drive unfinished convergent work: removals, and partitions whose log
 * failed or could not be opened for a retryable reason (closed and opened
 * again once no request uses the topic).  Returns how much is still
 * pending.  Blocks (volume). */
size_t kaas_topics_housekeep(struct kaas_topics *t);

#endif
