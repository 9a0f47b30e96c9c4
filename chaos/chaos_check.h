/*
 * chaos_check.h — shared by the chaos checker's files: chaos_check.c (the
 * records of the stable topics, the group, commits, the main) and
 * chaos_kv.c (the key-value workload of the compacted topic).
 */
#ifndef KAAS_CHAOS_CHECK_H
#define KAAS_CHAOS_CHECK_H

#include <stddef.h>

/* The kinds of violation, in by_kind's order. */
enum {
	LOST,
	MOVED,
	DUPLICATE,
	DOUBLE_ACK,
	REORDER,
	GAP,
	NON_MONOTONIC,
	STALE_INCARNATION,
	GROUP_SKIPPED,
	COMMIT_BACKWARDS,
	HWM_BACKWARDS,
	LEFTOVER,
	CORRUPT_DOCUMENT,
	STUCK_DELETE,
	KV_LOST,      /* a key's last acknowledged value is not what a full read returns last */
	KV_STALE,     /* an older value of the key is returned last */
	KV_PHANTOM,   /* a record that was never written */
	KV_MISMATCH,  /* a record with another key, kind or offset than written */
	KV_MOVED,     /* a record in another partition than it was written to */
	KV_DUPLICATE, /* a record read twice */
	KV_ORDER,     /* a partition's offsets read not increasing */
	NKINDS
};

/* A partition of a topic, by its dense key (chaos_check_part). */
struct chaos_part {
	char *topic;
	int p;
};
extern struct chaos_part *chaos_parts;

/* The dense key of TOPIC's partition P (added when new). */
int chaos_check_part(const char *topic, int p);
/* Record one violation of KIND in partition key K (-1: none) with its
 * evidence (printed as a JSON object of the "violations" array). */
void chaos_violation(int kind, int k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* realloc / strdup that exit 2 when out of memory. */
void *chaos_xrealloc(void *p, size_t n);
char *chaos_xstrdup(const char *s);

/* The key-value check (chaos_kv.c): SENT, ACKS, READ are "TOPIC PARTITION
 * OFFSET KEY put|del ID" lines (chaos_client kv and CHAOS_KV=1 consume;
 * SENT's offsets are -1, in the order the writes were sent).  Loads them
 * (0, or -errno / -EINVAL on bad input, named on stderr), reports the
 * violations; chaos_kv_stats then prints its counts as a JSON object. */
int chaos_kv_check(const char *sent, const char *acks, const char *read);
void chaos_kv_stats(void);

#endif
