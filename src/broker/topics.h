/*
 * topics.h — the broker's topics and their partition logs.
 *
 * Desired state lives in <cluster>/topics/<name>.json (kaas_doc_write,
 * kind "topic": name, id, partitions, config, deleting).  Each topic
 * directory <data>/<name>/ carries the identity stamp .topic-id.json of its
 * incarnation (a random 16-byte id); partition logs live in
 * <data>/<name>/<partition>/ (src/log).
 *
 * Names are validated before any path is built (kaas_topic_name_valid).
 * A stamp of another incarnation is reclaimed: the directory is renamed
 * aside to <data>/.trash/<name>.<old id> and removed convergently; an
 * unstamped directory is adopted.  Deleting a topic: the document is marked
 * deleting, the partitions are closed, the directory is renamed aside and
 * removed convergently (unfinished removals are kept in a kaas_pending and
 * re-driven by kaas_topics_housekeep), then the document is removed.
 *
 * Leader epoch: each registry (each start of kaasd) claims the next number
 * in <cluster>/leader-epochs/ by exclusive create and opens every partition
 * log with it, so a previous incarnation that is somehow still writing is
 * fenced by the logs (until the cluster assignment hands out per-partition
 * epochs).
 *
 * Threads: every function may be called from any thread (one registry
 * mutex); calls that touch the volume block, so the event loop calls them
 * only from its work queue.  kaas_topics_get/find are memory-only.
 */
#ifndef KAAS_BROKER_TOPICS_H
#define KAAS_BROKER_TOPICS_H

#include <stdint.h>

#include "log/log.h"
#include "substrate/substrate.h"

struct kaas_topics;

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
};

/* Record that a partition's log failed (any thread): the next housekeeping
 * closes it and opens it again (its tail recovered by CRC), so a full or
 * flaky volume costs produce errors for a while, not the partition. */
void kaas_partition_mark_failed(struct kaas_partition *p);

struct kaas_topic {
	char *name;
	uint8_t id[16];
	int32_t npart;
	struct kaas_partition *parts;
	int refs;                 /* under the registry mutex */
	int deleting;
	int offline;              /* its document or directory is damaged: no
	                             partitions, never re-created over */
	struct kaas_topics *reg;
};

/* Is `name` a legal topic name: 1..249 chars of [a-zA-Z0-9._-], not "." or
 * "..", and not one of kaas's reserved names ("__cluster", ".trash")? */
int kaas_topic_name_valid(const char *name, int len);

/* Open the registry: claim a leader epoch, load every topic document, finish deletes that were
 * under way, check stamps, open every partition log.  notify/arg are set on
 * every log (kaas_log_set_notify) opened now or later.  Returns 0 and *out,
 * or -errno (the detail is logged). */
int kaas_topics_open(struct kaas_substrate *data, struct kaas_substrate *cluster,
		     kaas_log_notify_cb notify, void *arg, struct kaas_topics **out);
/* Close every log (cleanly: manifests written) and free the registry. */
void kaas_topics_close(struct kaas_topics *t);

/* Look a topic up by name; returns it with a reference (release with
 * kaas_topic_put), or NULL if unknown or being deleted. */
struct kaas_topic *kaas_topics_get(struct kaas_topics *t, const char *name, int len);
void kaas_topic_put(struct kaas_topic *topic);

/* Snapshot of every live topic (each referenced): a malloc'd array of *n
 * pointers; release each with kaas_topic_put and free the array. */
struct kaas_topic **kaas_topics_list(struct kaas_topics *t, int *n);

/* Create a topic with `npart` partitions.  Returns a Kafka error code:
 * 0, INVALID_TOPIC_EXCEPTION (name), TOPIC_ALREADY_EXISTS,
 * INVALID_PARTITIONS (npart < 1 or > 100000), KAFKA_STORAGE_ERROR (volume).
 * validate_only: check, change nothing.  Blocks (volume). */
int kaas_topics_create(struct kaas_topics *t, const char *name, int32_t npart,
		       int validate_only, const char **why);

/* Delete a topic: 0, UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION,
 * KAFKA_STORAGE_ERROR.  Blocks until the partitions are closed. */
int kaas_topics_delete(struct kaas_topics *t, const char *name);

/* Grow a topic to `count` partitions: 0, UNKNOWN_TOPIC_OR_PARTITION,
 * INVALID_PARTITIONS (count not above the current count), KAFKA_STORAGE_ERROR. */
int kaas_topics_add_partitions(struct kaas_topics *t, const char *name, int32_t count,
			       int validate_only, const char **why);

/* Re-drive unfinished convergent work: removals, and partitions whose log
 * failed or could not be opened for a retryable reason (closed and opened
 * again once no request uses the topic).  Returns how much is still
 * pending.  Blocks (volume). */
size_t kaas_topics_housekeep(struct kaas_topics *t);

#endif
