/* negcache.c — each host's negative lookup cache.
 *
 * The Linux NFS client keeps a "no such name" answer (a negative dentry)
 * and trusts it without asking the server until the directory's cached
 * attributes time out (acdirmin, 30 s by default) or the client itself
 * sees the directory change: by opening it (close-to-open GETATTR) or
 * listing it.  Creating the name (O_CREAT, O_EXCL, mkdir, rename onto it)
 * always asks the server.  The lab measured another host's new name
 * staying invisible to open() and stat() for about 30 s (faultfs/README.md,
 * "Fidelity").  Here: an entry per missing path, per host, fresh for
 * neg_timeout_ms; a fresh entry for a path or one of its ancestors makes
 * that host's lookups of the path fail with ENOENT.  All functions are
 * called with m->mu held. */
#include "faultfs/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NEG_MAX_ENTRIES 4096

static void neg_free(struct fm_neg *n)
{
	free(n->path);
	free(n);
}

void fm_neg_forget_all(struct fm_host *hs)
{
	while (hs->negs) {
		struct fm_neg *n = hs->negs;
		hs->negs = n->next;
		neg_free(n);
	}
}

static int is_root(const char *p)
{
	return !*p || !strcmp(p, ".") || !strcmp(p, "/");
}

/* 1 if `anc` is a proper ancestor directory of `path`. */
static int is_under(const char *path, const char *anc)
{
	if (is_root(anc))
		return !is_root(path);
	size_t n = strlen(anc);
	return !strncmp(path, anc, n) && path[n] == '/';
}

/* 1 if `path` is directly in directory `dir`. */
static int is_child(const char *path, const char *dir)
{
	if (!is_under(path, dir))
		return 0;
	const char *rest = is_root(dir) ? path : path + strlen(dir) + 1;
	return !strchr(rest, '/');
}

void fm_neg_forget(struct fm_host *hs, const char *path)
{
	for (struct fm_neg **pp = &hs->negs; *pp;) {
		struct fm_neg *n = *pp;
		if (!strcmp(n->path, path) || is_under(n->path, path)) {
			*pp = n->next;
			neg_free(n);
		} else {
			pp = &n->next;
		}
	}
}

void fm_neg_forget_children(struct fm_host *hs, const char *dir)
{
	for (struct fm_neg **pp = &hs->negs; *pp;) {
		struct fm_neg *n = *pp;
		if (is_child(n->path, dir)) {
			*pp = n->next;
			neg_free(n);
		} else {
			pp = &n->next;
		}
	}
}

static int fresh(const struct kaas_fault_model *m, const struct fm_neg *n, int64_t now)
{
	return now - n->at_ns < (int64_t)m->neg_timeout_ms * 1000000;
}

void fm_neg_store(struct kaas_fault_model *m, int host, const char *path)
{
	if (m->passthrough || m->neg_timeout_ms <= 0 || is_root(path))
		return;
	struct fm_host *hs = &m->hosts[host];
	/* The kernel caches the first component that is missing: walk up
	 * while the parent is missing too. */
	char *p = strdup(path);
	if (!p)
		return;
	for (;;) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
		struct kaas_stat st;
		if (kaas_sub_stat(m->lower, p, &st) != -ENOENT) {
			*slash = '/';
			break;
		}
	}
	fm_attr_forget(hs, p);
	fm_neg_forget(hs, p);
	struct fm_neg *n = calloc(1, sizeof *n);
	if (!n) {
		free(p);
		return;
	}
	int64_t now = fm_now_ns();
	n->path = p;
	n->at_ns = now;
	n->next = hs->negs;
	hs->negs = n;
	/* Drop stale entries, and bound the cache. */
	size_t count = 0;
	for (struct fm_neg **pp = &hs->negs; *pp;) {
		struct fm_neg *x = *pp;
		if (!fresh(m, x, now) || count >= NEG_MAX_ENTRIES) {
			*pp = x->next;
			neg_free(x);
		} else {
			count++;
			pp = &x->next;
		}
	}
}

int fm_neg_hides(struct kaas_fault_model *m, int host, const char *path, int self)
{
	if (m->passthrough || m->neg_timeout_ms <= 0)
		return 0;
	int64_t now = fm_now_ns();
	for (const struct fm_neg *n = m->hosts[host].negs; n; n = n->next)
		if (((self && !strcmp(n->path, path)) || is_under(path, n->path)) && fresh(m, n, now)) {
			m->neg_hits++;
			return 1;
		}
	return 0;
}
