/*
 * topic_config.h — topic configuration: which keys a topic may set (Kafka's
 * names), how a value is checked, the broker-wide defaults given in
 * kaasd's --config file under Kafka's broker names (log.retention.hours,
 * log.segment.bytes, ...), and what each topic's settings resolve to.
 *
 * A topic stores only its overrides (a kaas_kvlist, in its document: see
 * cluster/topic_store.h); every effective value is resolved from them,
 * then the broker defaults, then the static default, and each answer says
 * which of the three it came from (DescribeConfigs' "source" and
 * "synonyms").  Keys are "applied" (the log or the produce path honours
 * them) or "accepted" (checked and stored, with no effect on kaas: the
 * volume's durability makes min.insync.replicas moot; flush.* are kaas's
 * own group commit; message.format.version, deprecated in Kafka 3.x, is
 * accepted and ignored as there).  message.timestamp.type=LogAppendTime
 * is refused until the produce path rewrites batch timestamps.
 * compression.type other than producer makes the produce path recompress
 * a batch sent in another codec (kafka/recompress.c).
 *
 * Pure functions over their arguments: no locks, no volume, any thread
 * (kaas_topic_config_warn_ignored logs).
 * Statuses: 0, KAAS_EBADCONFIG (util/status.h) with a message naming the
 * key, or -ENOMEM.
 */
#ifndef KAAS_BROKER_TOPIC_CONFIG_H
#define KAAS_BROKER_TOPIC_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "util/kvlist.h"

/* Where an effective value came from. */
enum kaas_config_source {
	KAAS_CONFIG_FROM_TOPIC = 1,   /* the topic's own override */
	KAAS_CONFIG_FROM_BROKER = 2,  /* kaasd's --config file (a broker default) */
	KAAS_CONFIG_FROM_DEFAULT = 3, /* the built-in default */
};

/* The kind of a value (for describing it). */
enum kaas_config_type {
	KAAS_CONFIG_BOOLEAN = 1,
	KAAS_CONFIG_STRING,
	KAAS_CONFIG_INT,
	KAAS_CONFIG_LONG,
	KAAS_CONFIG_DOUBLE,
	KAAS_CONFIG_LIST,
};

/* What a topic's settings resolve to (the applied keys). */
struct kaas_topic_settings {
	int64_t retention_ms;         /* -1: keep forever */
	int64_t retention_bytes;      /* -1: no limit */
	int64_t segment_bytes;
	int64_t segment_ms;
	int64_t max_message_bytes;    /* largest batch a produce may append */
	int64_t index_interval_bytes;
	int64_t compression;          /* compression.type: the batch codec to store
	                                 (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd),
	                                 -1 producer (as sent) */
	/* cleanup.policy and compaction (issue 21) */
	int64_t cleanup_compact;      /* 1: the policy has "compact" */
	int64_t cleanup_delete;       /* 1: the policy has "delete" */
	int64_t delete_retention_ms;
	int64_t min_compaction_lag_ms;
	int64_t max_compaction_lag_ms; /* INT64_MAX: none */
	int64_t min_cleanable_dirty_ppm; /* min.cleanable.dirty.ratio × 10^6 */
};

#define KAAS_CONFIG_MAX_SYNONYMS 4
#define KAAS_CONFIG_MSG 200

/* One synonym of a described value (DescribeConfigs' synonyms). */
struct kaas_config_synonym {
	const char *name;
	const char *value;
	enum kaas_config_source source;
};

/* One described value.  Strings point into the table, the lists given, or
 * the entry's own buffers: valid while those are. */
struct kaas_config_entry {
	const char *name;
	const char *value;
	enum kaas_config_source source;
	enum kaas_config_type type;
	int applied;              /* 1: honoured by kaas; 0: accepted only */
	size_t nsyn;
	struct kaas_config_synonym syn[KAAS_CONFIG_MAX_SYNONYMS];
	char buf[32];             /* a broker value converted into the key's unit */
};

/* Check a set of topic overrides: every key known and every value legal.
 * 0, or KAAS_EBADCONFIG and msg[KAAS_CONFIG_MSG] naming the key and why. */
int kaas_topic_config_check(const struct kaas_kvlist *overrides, char msg[KAAS_CONFIG_MSG]);

/* Is `key` a broker default of a topic setting (e.g. "log.retention.hours")?
 * Checks the value too: 1 it is and the value is legal, 0 not such a key,
 * KAAS_EBADCONFIG with msg (a bad value). */
int kaas_topic_config_broker_key(const char *key, const char *value, char msg[KAAS_CONFIG_MSG]);

/* Resolve the applied settings from a topic's overrides and the broker
 * defaults (both already checked).  Never fails. */
void kaas_topic_settings_resolve(const struct kaas_kvlist *broker, const struct kaas_kvlist *topic,
				 struct kaas_topic_settings *out);

/* Why topic key `name` is accepted and ignored (Kafka 3.x deprecated it:
 * message.format.version), for a warning when a topic sets it; NULL for
 * every other key. */
const char *kaas_topic_config_ignored(const char *name);
/* Log a warning for each such key a topic's new overrides set (a create, a
 * change), as Kafka logs one: the only function here that logs. */
void kaas_topic_config_warn_ignored(const char *topic, const struct kaas_kvlist *overrides);

/* IncrementalAlterConfigs' APPEND (append 1) and SUBTRACT (0) of list key
 * `name`, as Kafka does them: the list is the topic's override `cur`, or
 * the key's default when it has none (APPEND compact to a topic without a
 * cleanup.policy gives "delete,compact"); `value` is itself a list, each
 * item appended unless present, or its first occurrence removed.  The
 * result, comma-separated without empty items, in out[size] ("" for an
 * empty list).  0, or -1 if it does not fit. */
int kaas_topic_config_list_edit(const char *name, const char *cur, const char *value, int append,
				char *out, size_t size);

/* The type of topic key `name`, or 0 when it is not one. */
enum kaas_config_type kaas_topic_config_type(const char *name);

/* The topic keys, in a fixed order: how many there are, and the i-th's
 * name. */
size_t kaas_topic_config_count(void);
const char *kaas_topic_config_name(size_t i);

/* Describe topic key i (0 <= i < count) for a topic with these overrides
 * and broker defaults: value, source, and synonyms (the topic's override,
 * the broker keys that are set, the default; most specific first). */
void kaas_topic_config_describe(size_t i, const struct kaas_kvlist *broker,
				const struct kaas_kvlist *topic, struct kaas_config_entry *out);

#endif
