/*
 * kvlist.c — the sorted string map of kvlist.h.
 */
#include "util/kvlist.h"
#include "util/grow.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Index of `key`, or of where it would be inserted (*found 0). */
static size_t find(const struct kaas_kvlist *l, const char *key, int *found)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->v[mid].key, key);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

const char *kaas_kvlist_get(const struct kaas_kvlist *l, const char *key)
{
	int found;
	size_t i = find(l, key, &found);
	return found ? l->v[i].value : NULL;
}

int kaas_kvlist_set(struct kaas_kvlist *l, const char *key, const char *value)
{
	int found;
	size_t i = find(l, key, &found);
	char *val = strdup(value);
	if (!val)
		return -ENOMEM;
	if (found) {
		free(l->v[i].value);
		l->v[i].value = val;
		return 0;
	}
	char *k = strdup(key);
	struct kaas_kv *nv = k ? kaas_grow(l->v, &l->cap, l->n, sizeof *l->v, 8) : NULL;
	if (!nv) {
		free(k);
		free(val);
		return -ENOMEM;
	}
	l->v = nv;
	memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof *l->v);
	l->v[i] = (struct kaas_kv){ k, val };
	l->n++;
	assert(l->n <= l->cap);
	return 0;
}

int kaas_kvlist_del(struct kaas_kvlist *l, const char *key)
{
	int found;
	size_t i = find(l, key, &found);
	if (!found)
		return 0;
	free(l->v[i].key);
	free(l->v[i].value);
	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
	l->n--;
	return 1;
}

int kaas_kvlist_copy(struct kaas_kvlist *dst, const struct kaas_kvlist *src)
{
	struct kaas_kvlist t = { 0 };
	for (size_t i = 0; i < src->n; i++) {
		if (kaas_kvlist_set(&t, src->v[i].key, src->v[i].value) < 0) {
			kaas_kvlist_clear(&t);
			return -ENOMEM;
		}
	}
	kaas_kvlist_clear(dst);
	*dst = t;
	return 0;
}

int kaas_kvlist_equal(const struct kaas_kvlist *a, const struct kaas_kvlist *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].key, b->v[i].key) || strcmp(a->v[i].value, b->v[i].value))
			return 0;
	return 1;
}

void kaas_kvlist_clear(struct kaas_kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}
