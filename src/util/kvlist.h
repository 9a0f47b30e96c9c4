/*
 * kvlist.h — a small ordered map of strings to strings (configuration
 * overrides: a topic's settings, broker defaults given by Kafka name).
 * Keys are unique and kept sorted, so two lists with the same content
 * compare equal and print the same.  Not thread-safe: the owner guards it.
 */
#ifndef KAAS_UTIL_KVLIST_H
#define KAAS_UTIL_KVLIST_H

#include <stddef.h>

struct kaas_kv {
	char *key;
	char *value;
};

struct kaas_kvlist {
	struct kaas_kv *v;        /* sorted by key (strcmp) */
	size_t n, cap;
};

/* The value of `key`, or NULL. */
const char *kaas_kvlist_get(const struct kaas_kvlist *l, const char *key);

/* Set `key` to `value` (both copied), replacing an earlier value.
 * 0 or -ENOMEM (the list unchanged). */
int kaas_kvlist_set(struct kaas_kvlist *l, const char *key, const char *value);

/* Remove `key`: 1 removed, 0 it was not there. */
int kaas_kvlist_del(struct kaas_kvlist *l, const char *key);

/* Replace *dst by a copy of src: 0 or -ENOMEM (*dst unchanged). */
int kaas_kvlist_copy(struct kaas_kvlist *dst, const struct kaas_kvlist *src);

/* Same keys with the same values? */
int kaas_kvlist_equal(const struct kaas_kvlist *a, const struct kaas_kvlist *b);

/* Free what the list owns and empty it (the struct itself is the caller's). */
void kaas_kvlist_clear(struct kaas_kvlist *l);

#endif
