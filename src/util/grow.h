/*
 * grow.h — room for one more element in a growable array (doubling, first
 * size given): the one copy of the realloc-and-double step.
 */
#ifndef KAAS_UTIL_GROW_H
#define KAAS_UTIL_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* Buffer v (*cap bytes of room) with room for at least `need` bytes,
 * doubling from `first` but never beyond `max` (need <= max): v itself,
 * a larger one (v then gone, *cap updated), or NULL when out of memory (v
 * and *cap unchanged). */
static inline void *kaas_reserve(void *v, size_t *cap, size_t need, size_t first, size_t max)
{
	if (need <= *cap)
		return v;
	size_t nc = *cap ? *cap : first;
	while (nc < need)
		nc *= 2;
	if (nc > max)
		nc = max;
	void *nv = realloc(v, nc);
	if (nv)
		*cap = nc;
	return nv;
}

/* Array v holds n elements of elem bytes with room for *cap.  Returns an
 * array with room for at least n + 1: v itself, or a larger one (v is
 * then gone, *cap updated), or NULL when out of memory (v and *cap
 * unchanged). */
static inline void *kaas_grow(void *v, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return v;
	size_t nc = *cap ? *cap * 2 : first;
	void *nv = realloc(v, nc * elem);
	if (nv)
		*cap = nc;
	return nv;
}

#endif
