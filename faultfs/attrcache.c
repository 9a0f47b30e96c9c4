/* attrcache.c — each host's attribute cache (stale stat by name). */
#include "faultfs/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fm_attr_forget_all(struct fm_host *hs)
{
	while (hs->attrs) {
		struct fm_attr *a = hs->attrs;
		hs->attrs = a->next;
		free(a->path);
		free(a);
	}
}

void fm_attr_forget(struct fm_host *hs, const char *path)
{
	for (struct fm_attr **pp = &hs->attrs; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->path, path)) {
			struct fm_attr *a = *pp;
			*pp = a->next;
			free(a->path);
			free(a);
			return;
		}
}

void fm_attr_store(struct kaas_fault_model *m, int host, const char *path, const struct kaas_stat *st)
{
	struct fm_host *hs = &m->hosts[host];
	fm_attr_forget(hs, path);
	if (m->attr_timeout_ms <= 0)
		return;
	struct fm_attr *a = calloc(1, sizeof *a);
	if (!a)
		return;
	a->path = strdup(path);
	if (!a->path) {
		free(a);
		return;
	}
	a->st = *st;
	a->at_ns = fm_now_ns();
	a->next = hs->attrs;
	hs->attrs = a;
	/* bound the cache: drop entries past 4096 */
	size_t n = 0;
	for (struct fm_attr **pp = &hs->attrs; *pp; pp = &(*pp)->next)
		if (++n == 4096) {
			struct fm_attr *rest = (*pp)->next;
			(*pp)->next = NULL;
			while (rest) {
				struct fm_attr *x = rest;
				rest = x->next;
				free(x->path);
				free(x);
			}
			break;
		}
}

const struct fm_attr *fm_attr_fresh(struct kaas_fault_model *m, int host, const char *path)
{
	int64_t now = fm_now_ns();
	for (struct fm_attr *a = m->hosts[host].attrs; a; a = a->next)
		if (!strcmp(a->path, path))
			return now - a->at_ns < (int64_t)m->attr_timeout_ms * 1000000 ? a : NULL;
	return NULL;
}

