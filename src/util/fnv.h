/*
 * fnv.h — FNV-1a 64, the one hash the tree uses for names (hash tables,
 * short stable names of long keys).  Not for anything an adversary may
 * choose to collide at scale; callers that need a better spread mix the
 * result further.
 */
#ifndef KAAS_UTIL_FNV_H
#define KAAS_UTIL_FNV_H

#include <stddef.h>
#include <stdint.h>

#define KAAS_FNV64_INIT 1469598103934665603ull

/* h extended by the n bytes at p (start from KAAS_FNV64_INIT). */
static inline uint64_t kaas_fnv64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

#endif
