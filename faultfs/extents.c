/* extents.c — byte ranges held in memory (unpublished writes, undo). */
#include "faultfs/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"

void fm_ext_free(struct fm_extents *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->v[i].data);
	free(x->v);
	memset(x, 0, sizeof *x);
}

/* Append bytes at off; a write continuing the last extent extends it. */
int fm_ext_add(struct fm_extents *x, const void *buf, size_t len, uint64_t off)
{
	if (x->n) {
		struct fm_extent *e = &x->v[x->n - 1];
		if (e->off + e->len == off) {
			if (e->len + len > e->cap) {
				size_t cap = e->cap * 2;
				if (cap < e->len + len)
					cap = e->len + len;
				char *d = realloc(e->data, cap);
				if (!d)
					return -ENOMEM;
				e->data = d;
				e->cap = cap;
			}
			memcpy(e->data + e->len, buf, len);
			e->len += len;
			x->bytes += len;
			return 0;
		}
	}
	struct fm_extent *nv = kaas_grow(x->v, &x->cap, x->n, sizeof *x->v, 8);
	if (!nv)
		return -ENOMEM;
	x->v = nv;
	char *d = malloc(len ? len : 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, buf, len);
	x->v[x->n++] = (struct fm_extent){ off, len, len, d };
	x->bytes += len;
	return 0;
}

void fm_ext_overlay(const struct fm_extent *e, char *buf, size_t len, uint64_t off)
{
	uint64_t a = e->off > off ? e->off : off;
	uint64_t b = e->off + e->len < off + len ? e->off + e->len : off + len;
	if (a < b)
		memcpy(buf + (a - off), e->data + (a - e->off), (size_t)(b - a));
}

uint64_t fm_ext_end(const struct fm_extents *x)
{
	uint64_t end = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i].off + x->v[i].len > end)
			end = x->v[i].off + x->v[i].len;
	return end;
}

