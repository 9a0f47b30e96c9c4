/*
 * topic_config.c — the table of topic configuration keys, their checks,
 * broker defaults and resolution (topic_config.h).
 */
#include "broker/topic_config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/logger.h"
#include "util/status.h"

#define NO_LIMIT "9223372036854775807"

/* One broker key that sets a topic key's default, its value times `mult`
 * (log.retention.hours sets retention.ms in hours). */
struct broker_key {
	const char *name;
	int64_t mult;
};

struct topic_key {
	const char *name;
	enum kaas_config_type type;
	int64_t min, max;         /* numbers: the legal range */
	const char *const *only;  /* strings/lists: the values kaas takes, or NULL */
	const char *refused;      /* why other values of the key are refused */
	const char *def;          /* the built-in default */
	int applied;
	struct broker_key broker[3]; /* most specific first */
	int (*valid)(const char *value); /* strings: a check of their own, or NULL */
	const char *ignored;      /* deprecated in Kafka 3.x, accepted and ignored:
	                             why (logged when set), or NULL */
};

static int valid_format_version(const char *v);

static const char *const cleanup_ok[] = { "delete", "compact", "compact,delete", "delete,compact",
					   NULL };
static const char *const tstype_ok[] = { "CreateTime", NULL };
/* In the order of the batch attribute's codec (0 none .. 4 zstd), then
 * Kafka's "producer" (keep the producer's). */
static const char *const compression_ok[] = { "uncompressed", "gzip", "snappy", "lz4", "zstd",
					       "producer", NULL };
static const char *const bool_false[] = { "false", NULL };

static const struct topic_key keys[] = {
	{ "cleanup.policy", KAAS_CONFIG_LIST, 0, 0, cleanup_ok,
	  "cleanup.policy is delete, compact, or both (compact,delete)", "delete", 1,
	  { { "log.cleanup.policy", 1 } }, NULL, NULL },
	{ "compression.type", KAAS_CONFIG_STRING, 0, 0, compression_ok,
	  "compression.type is producer, uncompressed, gzip, snappy, lz4 or zstd",
	  "producer", 1, { { "compression.type", 1 } }, NULL, NULL },
	{ "delete.retention.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, "86400000", 1,
	  { { "log.cleaner.delete.retention.ms", 1 } }, NULL, NULL },
	{ "file.delete.delay.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, "60000", 0,
	  { { "log.segment.delete.delay.ms", 1 } }, NULL, NULL },
	{ "flush.messages", KAAS_CONFIG_LONG, 1, INT64_MAX, NULL, NULL, NO_LIMIT, 0,
	  { { "log.flush.interval.messages", 1 } }, NULL, NULL },
	{ "flush.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, NO_LIMIT, 0,
	  { { "log.flush.interval.ms", 1 } }, NULL, NULL },
	{ "follower.replication.throttled.replicas", KAAS_CONFIG_LIST, 0, 0, NULL, NULL, "", 0,
	  { { NULL, 0 } }, NULL, NULL },
	{ "index.interval.bytes", KAAS_CONFIG_INT, 0, INT32_MAX, NULL, NULL, "4096", 1,
	  { { "log.index.interval.bytes", 1 } }, NULL, NULL },
	{ "leader.replication.throttled.replicas", KAAS_CONFIG_LIST, 0, 0, NULL, NULL, "", 0,
	  { { NULL, 0 } }, NULL, NULL },
	{ "local.retention.bytes", KAAS_CONFIG_LONG, -2, INT64_MAX, NULL, NULL, "-2", 0,
	  { { "log.local.retention.bytes", 1 } }, NULL, NULL },
	{ "local.retention.ms", KAAS_CONFIG_LONG, -2, INT64_MAX, NULL, NULL, "-2", 0,
	  { { "log.local.retention.ms", 1 } }, NULL, NULL },
	{ "max.compaction.lag.ms", KAAS_CONFIG_LONG, 1, INT64_MAX, NULL, NULL, NO_LIMIT, 1,
	  { { "log.cleaner.max.compaction.lag.ms", 1 } }, NULL, NULL },
	{ "max.message.bytes", KAAS_CONFIG_INT, 0, INT32_MAX, NULL, NULL, "1048588", 1,
	  { { "message.max.bytes", 1 } }, NULL, NULL },
	{ "message.downconversion.enable", KAAS_CONFIG_BOOLEAN, 0, 0, NULL, NULL, "true", 0,
	  { { "log.message.downconversion.enable", 1 } }, NULL, NULL },
	/* Deprecated since Kafka 3.0, which takes it as 3.0 whatever it is
	 * (inter.broker.protocol.version 3.0 or later): every batch is record
	 * format v2.  A value must still be a Kafka version. */
	{ "message.format.version", KAAS_CONFIG_STRING, 0, 0, NULL,
	  "not a Kafka version (0.10.0, 2.8, 3.0-IV1, ...)", "3.0-IV1", 0,
	  { { "log.message.format.version", 1 } }, valid_format_version,
	  "is deprecated since Kafka 3.0 and ignored: every batch is stored in record format v2 "
	  "(message format 3.0)" },
	{ "message.timestamp.after.max.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, NO_LIMIT, 0,
	  { { "log.message.timestamp.after.max.ms", 1 } }, NULL, NULL },
	{ "message.timestamp.before.max.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, NO_LIMIT, 0,
	  { { "log.message.timestamp.before.max.ms", 1 } }, NULL, NULL },
	{ "message.timestamp.difference.max.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL,
	  NO_LIMIT, 0, { { "log.message.timestamp.difference.max.ms", 1 } }, NULL, NULL },
	{ "message.timestamp.type", KAAS_CONFIG_STRING, 0, 0, tstype_ok,
	  "kaas keeps the producer's timestamps: message.timestamp.type=CreateTime only",
	  "CreateTime", 1, { { "log.message.timestamp.type", 1 } }, NULL, NULL },
	{ "min.cleanable.dirty.ratio", KAAS_CONFIG_DOUBLE, 0, 1, NULL, NULL, "0.5", 1,
	  { { "log.cleaner.min.cleanable.ratio", 1 } }, NULL, NULL },
	{ "min.compaction.lag.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, "0", 1,
	  { { "log.cleaner.min.compaction.lag.ms", 1 } }, NULL, NULL },
	{ "min.insync.replicas", KAAS_CONFIG_INT, 1, INT32_MAX, NULL, NULL, "1", 0,
	  { { "min.insync.replicas", 1 } }, NULL, NULL },
	{ "preallocate", KAAS_CONFIG_BOOLEAN, 0, 0, NULL, NULL, "false", 0,
	  { { "log.preallocate", 1 } }, NULL, NULL },
	{ "remote.storage.enable", KAAS_CONFIG_BOOLEAN, 0, 0, bool_false,
	  "kaas has no tiered storage: the volume is the storage", "false", 0, { { NULL, 0 } }, NULL, NULL },
	{ "retention.bytes", KAAS_CONFIG_LONG, -1, INT64_MAX, NULL, NULL, "-1", 1,
	  { { "log.retention.bytes", 1 } }, NULL, NULL },
	{ "retention.ms", KAAS_CONFIG_LONG, -1, INT64_MAX, NULL, NULL, "604800000", 1,
	  { { "log.retention.ms", 1 }, { "log.retention.minutes", 60000 },
	    { "log.retention.hours", 3600000 } }, NULL, NULL },
	{ "segment.bytes", KAAS_CONFIG_INT, 14, INT32_MAX, NULL, NULL, "1073741824", 1,
	  { { "log.segment.bytes", 1 } }, NULL, NULL },
	{ "segment.index.bytes", KAAS_CONFIG_INT, 4, INT32_MAX, NULL, NULL, "10485760", 0,
	  { { "log.index.size.max.bytes", 1 } }, NULL, NULL },
	{ "segment.jitter.ms", KAAS_CONFIG_LONG, 0, INT64_MAX, NULL, NULL, "0", 0,
	  { { "log.roll.jitter.ms", 1 }, { "log.roll.jitter.hours", 3600000 } }, NULL, NULL },
	{ "segment.ms", KAAS_CONFIG_LONG, 1, INT64_MAX, NULL, NULL, "604800000", 1,
	  { { "log.roll.ms", 1 }, { "log.roll.hours", 3600000 } }, NULL, NULL },
	{ "unclean.leader.election.enable", KAAS_CONFIG_BOOLEAN, 0, 0, NULL, NULL, "false", 0,
	  { { "unclean.leader.election.enable", 1 } }, NULL, NULL },
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const struct topic_key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* The topic key that broker key `name` sets a default of, and its
 * multiplier; NULL when none does. */
static const struct topic_key *find_broker_key(const char *name, int64_t *mult)
{
	for (size_t i = 0; i < NKEYS; i++)
		for (size_t j = 0; j < 3 && keys[i].broker[j].name; j++)
			if (strcmp(keys[i].broker[j].name, name) == 0) {
				*mult = keys[i].broker[j].mult;
				return &keys[i];
			}
	return NULL;
}

/* Is v a Kafka version as message.format.version takes one (Kafka's
 * MetadataVersion.fromVersionString): "0.8.0" to "0.11.0" (three parts),
 * "1.0" to "3.9" (two), either one with more parts after, or with an
 * "-IV<n>" suffix instead.  1 or 0. */
static int valid_format_version(const char *v)
{
	unsigned a, b, c;
	int n = 0;
	if (v[0] == '0') {
		if (sscanf(v, "0.%u.%u%n", &b, &c, &n) != 2 || b < 8 || b > 11 || c > 2)
			return 0;
	} else if (sscanf(v, "%u.%u%n", &a, &b, &n) != 2 || a < 1 || a > 3 ||
		   (a == 1 && b > 1) || (a == 2 && b > 8) || (a == 3 && b > 9)) {
		return 0;
	}
	const char *rest = v + n;
	if (rest[0] == '-') { /* -IV<n> */
		unsigned iv;
		int m = 0;
		return sscanf(rest, "-IV%u%n", &iv, &m) == 1 && rest[m] == '\0';
	}
	while (rest[0] == '.') { /* further parts are ignored, as in Kafka */
		int m = 0;
		if (sscanf(rest, ".%u%n", &a, &m) != 1)
			return 0;
		rest += m;
	}
	return rest[0] == '\0';
}

/* A whole-string integer: 0 and *out, or -1. */
static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

/* Is `value` legal for key k once multiplied by mult (a broker key in
 * other units)?  0, or KAAS_EBADCONFIG with msg naming `name`. */
static int check_value(const struct topic_key *k, const char *name, const char *value,
		       int64_t mult, char msg[KAAS_CONFIG_MSG])
{
	int64_t n;
	double d;
	char *end;
	switch (k->type) {
	case KAAS_CONFIG_INT:
	case KAAS_CONFIG_LONG:
		if (parse_i64(value, &n) < 0)
			break;
		if (mult > 1 && n > 0 && n > INT64_MAX / mult)
			break;
		n *= mult;
		if (n < k->min || n > k->max)
			break;
		return 0;
	case KAAS_CONFIG_DOUBLE:
		errno = 0;
		d = strtod(value, &end);
		if (errno || end == value || *end || d < (double)k->min || d > (double)k->max)
			break;
		return 0;
	case KAAS_CONFIG_BOOLEAN:
		if (strcasecmp(value, "true") && strcasecmp(value, "false"))
			break;
		if (k->only && strcasecmp(value, k->only[0])) {
			snprintf(msg, KAAS_CONFIG_MSG, "%s=%s: %s", name, value, k->refused);
			return KAAS_EBADCONFIG;
		}
		return 0;
	case KAAS_CONFIG_STRING:
	case KAAS_CONFIG_LIST:
		if (k->valid && !k->valid(value)) {
			snprintf(msg, KAAS_CONFIG_MSG, "%s=%.60s: %s", name, value, k->refused);
			return KAAS_EBADCONFIG;
		}
		if (!k->only)
			return 0;
		for (size_t i = 0; k->only[i]; i++)
			if (strcmp(value, k->only[i]) == 0)
				return 0;
		snprintf(msg, KAAS_CONFIG_MSG, "%s=%s: %s", name, value, k->refused);
		return KAAS_EBADCONFIG;
	}
	if (k->type == KAAS_CONFIG_BOOLEAN)
		snprintf(msg, KAAS_CONFIG_MSG, "%s=%s: not true or false", name, value);
	else
		snprintf(msg, KAAS_CONFIG_MSG, "%s=%s: not a number in [%" PRId64 ", %" PRId64 "]",
			 name, value, mult > 1 ? k->min / mult : k->min, k->max / (mult > 1 ? mult : 1));
	return KAAS_EBADCONFIG;
}

int kaas_topic_config_check(const struct kaas_kvlist *overrides, char msg[KAAS_CONFIG_MSG])
{
	for (size_t i = 0; i < overrides->n; i++) {
		const struct kaas_kv *kv = &overrides->v[i];
		const struct topic_key *k = find_key(kv->key);
		if (!k) {
			snprintf(msg, KAAS_CONFIG_MSG, "unknown topic config '%.100s'", kv->key);
			return KAAS_EBADCONFIG;
		}
		int rc = check_value(k, kv->key, kv->value, 1, msg);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int kaas_topic_config_broker_key(const char *key, const char *value, char msg[KAAS_CONFIG_MSG])
{
	int64_t mult;
	const struct topic_key *k = find_broker_key(key, &mult);
	if (!k)
		return 0;
	int rc = check_value(k, key, value, mult, msg);
	return rc < 0 ? rc : 1;
}

/* The effective value of key k: from the topic, else the most specific
 * broker key set (converted into k's unit in buf), else the default. */
static const char *effective(const struct topic_key *k, const struct kaas_kvlist *broker,
			     const struct kaas_kvlist *topic, enum kaas_config_source *src,
			     char buf[32])
{
	const char *v = topic ? kaas_kvlist_get(topic, k->name) : NULL;
	if (v) {
		*src = KAAS_CONFIG_FROM_TOPIC;
		return v;
	}
	for (size_t j = 0; j < 3 && k->broker[j].name; j++) {
		v = broker ? kaas_kvlist_get(broker, k->broker[j].name) : NULL;
		if (!v)
			continue;
		*src = KAAS_CONFIG_FROM_BROKER;
		int64_t n;
		if (k->broker[j].mult > 1 && parse_i64(v, &n) == 0) {
			snprintf(buf, 32, "%" PRId64, n * k->broker[j].mult);
			return buf;
		}
		return v;
	}
	*src = KAAS_CONFIG_FROM_DEFAULT;
	return k->def;
}

static int64_t effective_i64(const char *name, const struct kaas_kvlist *broker,
			     const struct kaas_kvlist *topic)
{
	const struct topic_key *k = find_key(name);
	assert(k && (k->type == KAAS_CONFIG_INT || k->type == KAAS_CONFIG_LONG));
	enum kaas_config_source src;
	char buf[32];
	int64_t n = 0;
	int rc = parse_i64(effective(k, broker, topic, &src, buf), &n);
	assert(rc == 0); /* the lists were checked */
	(void)rc;
	return n;
}

void kaas_topic_settings_resolve(const struct kaas_kvlist *broker, const struct kaas_kvlist *topic,
				 struct kaas_topic_settings *out)
{
	out->retention_ms = effective_i64("retention.ms", broker, topic);
	out->retention_bytes = effective_i64("retention.bytes", broker, topic);
	out->segment_bytes = effective_i64("segment.bytes", broker, topic);
	out->segment_ms = effective_i64("segment.ms", broker, topic);
	out->max_message_bytes = effective_i64("max.message.bytes", broker, topic);
	out->index_interval_bytes = effective_i64("index.interval.bytes", broker, topic);
	/* compression.type: the codec batches are stored in (issue 33). */
	const struct topic_key *ck = find_key("compression.type");
	enum kaas_config_source csrc;
	char cbuf[32];
	const char *codec = effective(ck, broker, topic, &csrc, cbuf);
	out->compression = -1;
	for (int64_t i = 0; i < 5; i++)
		if (strcmp(codec, compression_ok[i]) == 0)
			out->compression = i;
	/* Compaction (issue 21). */
	const struct topic_key *k = find_key("cleanup.policy");
	enum kaas_config_source src;
	char buf[32];
	const char *policy = effective(k, broker, topic, &src, buf);
	out->cleanup_compact = strstr(policy, "compact") ? 1 : 0;
	out->cleanup_delete = strstr(policy, "delete") ? 1 : 0;
	out->delete_retention_ms = effective_i64("delete.retention.ms", broker, topic);
	out->min_compaction_lag_ms = effective_i64("min.compaction.lag.ms", broker, topic);
	out->max_compaction_lag_ms = effective_i64("max.compaction.lag.ms", broker, topic);
	k = find_key("min.cleanable.dirty.ratio");
	out->min_cleanable_dirty_ppm = (int64_t)(strtod(effective(k, broker, topic, &src, buf), NULL) *
						 1e6);
}

const char *kaas_topic_config_ignored(const char *name)
{
	const struct topic_key *k = find_key(name);
	return k ? k->ignored : NULL;
}

void kaas_topic_config_warn_ignored(const char *topic, const struct kaas_kvlist *overrides)
{
	for (size_t i = 0; i < overrides->n; i++) {
		const char *why = kaas_topic_config_ignored(overrides->v[i].key);
		if (why)
			kaas_warn("topic %s: %s=%s %s", topic, overrides->v[i].key,
				  overrides->v[i].value, why);
	}
}

/* Append or remove the n bytes at item to or from the list out holds
 * (len bytes): the new length, or -1 if it does not fit in size. */
static int list_item(char *out, size_t len, size_t size, const char *item, size_t n, int append)
{
	size_t at = 0;
	int found = 0;
	while (at < len && !found) { /* find it */
		const char *e = memchr(out + at, ',', len - at);
		size_t l = e ? (size_t)(e - (out + at)) : len - at;
		if (l == n && memcmp(out + at, item, n) == 0)
			found = 1;
		else
			at += l + 1;
	}
	if (found && !append) { /* the first occurrence goes, with one comma */
		size_t end = at + n < len ? at + n + 1 : at + n;
		if (end == len && at > 0)
			at--; /* the last one: the comma before it */
		memmove(out + at, out + end, len - end);
		len -= end - at;
		out[len] = '\0';
	} else if (!found && append) {
		if (len + (len > 0) + n + 1 > size)
			return -1;
		if (len)
			out[len++] = ',';
		memcpy(out + len, item, n);
		len += n;
		out[len] = '\0';
	}
	return (int)len;
}

int kaas_topic_config_list_edit(const char *name, const char *cur, const char *value, int append,
				char *out, size_t size)
{
	const struct topic_key *k = find_key(name);
	assert(size > 0);
	out[0] = '\0';
	if (!cur)
		cur = k ? k->def : ""; /* Kafka edits the default when unset */
	size_t len = 0;
	for (int pass = 0; pass < 2; pass++) { /* the list as it is, then the edit */
		const char *p = pass ? value : cur;
		while (*p) {
			const char *e = strchr(p, ',');
			size_t l = e ? (size_t)(e - p) : strlen(p);
			int rc = l == 0 ? (int)len : list_item(out, len, size, p, l, pass ? append : 1);
			if (rc < 0)
				return -1;
			len = (size_t)rc;
			p = e ? e + 1 : p + l;
		}
	}
	return 0;
}

enum kaas_config_type kaas_topic_config_type(const char *name)
{
	const struct topic_key *k = find_key(name);
	return k ? k->type : 0;
}

size_t kaas_topic_config_count(void)
{
	return NKEYS;
}

const char *kaas_topic_config_name(size_t i)
{
	assert(i < NKEYS);
	return keys[i].name;
}

void kaas_topic_config_describe(size_t i, const struct kaas_kvlist *broker,
				const struct kaas_kvlist *topic, struct kaas_config_entry *out)
{
	assert(i < NKEYS);
	const struct topic_key *k = &keys[i];
	memset(out, 0, sizeof *out);
	out->name = k->name;
	out->type = k->type;
	out->applied = k->applied;
	out->value = effective(k, broker, topic, &out->source, out->buf);
	/* Synonyms, most specific first: the override, the broker keys set,
	 * the default. */
	const char *v = topic ? kaas_kvlist_get(topic, k->name) : NULL;
	if (v)
		out->syn[out->nsyn++] = (struct kaas_config_synonym){ k->name, v, KAAS_CONFIG_FROM_TOPIC };
	for (size_t j = 0; j < 3 && k->broker[j].name && out->nsyn < KAAS_CONFIG_MAX_SYNONYMS; j++) {
		v = broker ? kaas_kvlist_get(broker, k->broker[j].name) : NULL;
		if (v)
			out->syn[out->nsyn++] = (struct kaas_config_synonym){ k->broker[j].name, v,
									    KAAS_CONFIG_FROM_BROKER };
	}
	if (out->nsyn < KAAS_CONFIG_MAX_SYNONYMS)
		out->syn[out->nsyn++] = (struct kaas_config_synonym){ k->name, k->def,
								    KAAS_CONFIG_FROM_DEFAULT };
}
