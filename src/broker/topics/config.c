/* topics/config.c — a topic's configuration overrides: checked, stored in
 * its document, resolved against the broker defaults and applied to its
 * open logs (see broker/topics.h and broker/topic_config.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/topics/internal.h"
#include "util/logger.h"
#include "util/status.h"

/* The message of the last refused config on this thread (what *why points
 * to). */
static _Thread_local char config_msg[KAAS_CONFIG_MSG];

static void store_settings(struct kaas_topic *tp, const struct kaas_topic_settings *s)
{
	__atomic_store_n(&tp->settings.retention_ms, s->retention_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.retention_bytes, s->retention_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.segment_bytes, s->segment_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.segment_ms, s->segment_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.max_message_bytes, s->max_message_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.index_interval_bytes, s->index_interval_bytes,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.cleanup_compact, s->cleanup_compact, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.cleanup_delete, s->cleanup_delete, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.delete_retention_ms, s->delete_retention_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.min_compaction_lag_ms, s->min_compaction_lag_ms,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.max_compaction_lag_ms, s->max_compaction_lag_ms,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.min_cleanable_dirty_ppm, s->min_cleanable_dirty_ppm,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&tp->settings.compression, s->compression, __ATOMIC_RELAXED);
}

void kaas_topics_log_config(const struct kaas_topic *tp, struct kaas_log_config *cfg)
{
	kaas_log_config_default(cfg);
	int64_t seg = kaas_topic_setting(tp, segment_bytes);
	int64_t max = kaas_topic_setting(tp, max_message_bytes);
	/* A batch as large as the topic accepts must fit one segment (Kafka
	 * lets such a batch overrun segment.bytes; the log refuses it). */
	cfg->segment_bytes = (uint64_t)(seg > max ? seg : max);
	cfg->segment_ms = kaas_topic_setting(tp, segment_ms);
	cfg->retention_ms = kaas_topic_setting(tp, retention_ms);
	cfg->retention_bytes = kaas_topic_setting(tp, retention_bytes);
	cfg->index_interval_bytes = (uint32_t)kaas_topic_setting(tp, index_interval_bytes);
	cfg->parent_must_exist = 1;
	/* cleanup.policy=compact (issue 21): the log cleaner; without
	 * "delete" no retention by time or size. */
	cfg->compact = kaas_topic_setting(tp, cleanup_compact) != 0;
	if (!kaas_topic_setting(tp, cleanup_delete)) {
		cfg->retention_ms = -1;
		cfg->retention_bytes = -1;
	}
	cfg->delete_retention_ms = kaas_topic_setting(tp, delete_retention_ms);
	cfg->min_compaction_lag_ms = kaas_topic_setting(tp, min_compaction_lag_ms);
	int64_t max_lag = kaas_topic_setting(tp, max_compaction_lag_ms);
	cfg->max_compaction_lag_ms = max_lag == INT64_MAX ? -1 : max_lag;
	cfg->min_cleanable_dirty_ratio = (double)kaas_topic_setting(tp, min_cleanable_dirty_ppm) / 1e6;
}

int kaas_topics_set_config(struct kaas_topics *t, struct kaas_topic *tp,
			   const struct kaas_kvlist *config)
{
	assert(!tp->reg || kaas_topics_holds_admin(t));
	struct kaas_kvlist copy = { 0 };
	if (config && kaas_kvlist_copy(&copy, config) < 0)
		return -ENOMEM;
	struct kaas_topic_settings s;
	kaas_topic_settings_resolve(&t->defaults, &copy, &s);
	kaas_topics_lock(t);
	kaas_kvlist_clear(&tp->config);
	tp->config = copy;
	store_settings(tp, &s);
	kaas_topics_unlock(t);
	/* The logs: admin_mu keeps the parts array and its logs as they are
	 * (only the admin_mu holder opens, closes or grows them). */
	struct kaas_log_config cfg;
	kaas_topics_log_config(tp, &cfg);
	for (int32_t i = 0; tp->parts && i < tp->npart; i++)
		if (tp->parts[i].log)
			kaas_log_retune(tp->parts[i].log, &cfg);
	return 0;
}

const struct kaas_kvlist *kaas_topics_defaults(const struct kaas_topics *t)
{
	return &t->defaults;
}

int kaas_topics_config_get(struct kaas_topics *t, const char *name, struct kaas_kvlist *out)
{
	kaas_topics_lock(t);
	struct kaas_topic *tp = kaas_topics_find_locked(t, name, (int)strlen(name));
	int rc = !tp || tp->deleting ? KAAS_EUNKNOWN : tp->offline ? KAAS_EOFFLINE : 0;
	if (rc == 0)
		rc = kaas_kvlist_copy(out, &tp->config);
	kaas_topics_unlock(t);
	return rc;
}

/* Check overrides for a create or an alter: 0, or KAAS_EBADCONFIG with
 * *why set. */
static int check(const struct kaas_kvlist *config, const char **why)
{
	if (!config)
		return 0;
	int rc = kaas_topic_config_check(config, config_msg);
	if (rc < 0)
		*why = config_msg;
	return rc;
}

int kaas_topics_create_config(struct kaas_topics *t, const char *name, int32_t npart,
			      int32_t rf, const struct kaas_kvlist *config, int validate_only,
			      const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	if (rf < 1 || rf > INT16_MAX) {
		*why = "the replication factor must be at least 1";
		return KAAS_EINVALCOUNT;
	}
	int rc = check(config, why);
	if (rc < 0)
		return rc;
	rc = kaas_topics_create_checked(t, name, npart, rf, config, validate_only, why);
	if (rc == 0 && config && !validate_only)
		kaas_topic_config_warn_ignored(name, config);
	return rc;
}

/* kaas_topics_edit_config's change as a document edit: the caller's edit,
 * then the check, on the overrides read. */
struct config_edit {
	kaas_topics_config_edit_fn edit;
	void *arg;
	const char **why;
};

static int doc_config_edit(void *arg, struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	(void)d;
	struct config_edit *e = arg;
	struct kaas_kvlist next = { 0 };
	int rc = e->edit(e->arg, config, &next, e->why);
	if (rc == 0)
		rc = check(&next, e->why);
	if (rc < 0) {
		kaas_kvlist_clear(&next);
		return rc;
	}
	kaas_kvlist_clear(config);
	*config = next;
	return 0;
}

int kaas_topics_edit_config(struct kaas_topics *t, const char *name,
			    kaas_topics_config_edit_fn edit, void *arg, int validate_only,
			    const char **why)
{
	const char *dummy;
	int rc = kaas_topics_begin(name, &why, &dummy);
	if (rc < 0)
		return rc;
	struct kaas_topic *tp = kaas_topics_admin_get(t, name, why, &rc);
	struct config_edit e = { edit, arg, why };
	struct kaas_kvlist written = { 0 };
	if (tp && validate_only) {
		struct kaas_topic_doc d;
		rc = kaas_topic_doc_read_config(t->cluster, name, &d, &written);
		if (rc == -ENOENT || (rc == 0 && (memcmp(d.id, tp->id, 16) != 0 || d.deleting))) {
			*why = "the topic was deleted or re-created elsewhere";
			rc = KAAS_EUNKNOWN;
		}
		if (rc == 0)
			rc = doc_config_edit(&e, &d, &written);
	} else if (tp) {
		/* The document first (desired state: every broker follows it),
		 * then this broker's logs, with what was written. */
		rc = kaas_topics_update_doc(t, tp, doc_config_edit, &e, &written, why);
		if (rc == 0) {
			rc = kaas_topics_set_config(t, tp, &written);
			if (rc == 0)
				kaas_topic_config_warn_ignored(name, &written);
			if (rc == 0)
				kaas_info("topic %s: config changed (%zu override(s))", name,
					  written.n);
		}
	}
	kaas_kvlist_clear(&written);
	kaas_topic_put(tp);
	kaas_topics_admin_unlock(t);
	return rc;
}

/* kaas_topics_alter_config's edit: the overrides given, whatever is there. */
static int replace_all(void *arg, const struct kaas_kvlist *cur, struct kaas_kvlist *next,
		       const char **why)
{
	(void)cur;
	(void)why;
	return kaas_kvlist_copy(next, arg);
}

int kaas_topics_alter_config(struct kaas_topics *t, const char *name,
			     const struct kaas_kvlist *config, int validate_only, const char **why)
{
	return kaas_topics_edit_config(t, name, replace_all, (void *)config, validate_only, why);
}
