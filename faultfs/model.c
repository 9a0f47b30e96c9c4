/* model.c — the fault model's operations: hosts, handles, caches, faults. */
#include "faultfs/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOCK(m) pthread_mutex_lock(&(m)->mu)
#define UNLOCK(m) pthread_mutex_unlock(&(m)->mu)

static _Thread_local pid_t caller_pid;

void kaas_fault_set_caller(pid_t pid)
{
	caller_pid = pid;
}

static pid_t caller(void)
{
	return caller_pid > 0 ? caller_pid : getpid();
}

static int bad_host(int host)
{
	return host < 0 || host >= KAAS_FAULT_MAX_HOSTS;
}

/* ---- extents ---- */

static void ext_free(struct fm_extents *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->v[i].data);
	free(x->v);
	memset(x, 0, sizeof *x);
}

/* Append bytes at off; a write continuing the last extent extends it. */
static int ext_add(struct fm_extents *x, const void *buf, size_t len, uint64_t off)
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
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 8;
		struct fm_extent *v = realloc(x->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		x->v = v;
		x->cap = cap;
	}
	char *d = malloc(len ? len : 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, buf, len);
	x->v[x->n++] = (struct fm_extent){ off, len, len, d };
	x->bytes += len;
	return 0;
}

static void ext_overlay(const struct fm_extent *e, char *buf, size_t len, uint64_t off)
{
	uint64_t a = e->off > off ? e->off : off;
	uint64_t b = e->off + e->len < off + len ? e->off + e->len : off + len;
	if (a < b)
		memcpy(buf + (a - off), e->data + (a - e->off), (size_t)(b - a));
}

static uint64_t ext_end(const struct fm_extents *x)
{
	uint64_t end = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i].off + x->v[i].len > end)
			end = x->v[i].off + x->v[i].len;
	return end;
}

/* ---- nodes, attributes ---- */

static struct fm_node *node_find(struct kaas_fault_model *m, uint64_t ino)
{
	for (struct fm_node *n = m->nodes; n; n = n->next)
		if (n->ino == ino)
			return n;
	return NULL;
}

static void node_release_if_unused(struct kaas_fault_model *m, struct fm_node *node)
{
	if (node->nopen > 0)
		return;
	for (struct fm_node **pp = &m->nodes; *pp; pp = &(*pp)->next)
		if (*pp == node) {
			*pp = node->next;
			break;
		}
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		ext_free(&node->view[i].dirty);
		ext_free(&node->view[i].undo);
		free(node->view[i].silly);
	}
	free(node);
}

static void attr_forget_all(struct fm_host *hs)
{
	while (hs->attrs) {
		struct fm_attr *a = hs->attrs;
		hs->attrs = a->next;
		free(a->path);
		free(a);
	}
}

static void attr_forget(struct fm_host *hs, const char *path)
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

static void attr_store(struct kaas_fault_model *m, int host, const char *path, const struct kaas_stat *st)
{
	struct fm_host *hs = &m->hosts[host];
	attr_forget(hs, path);
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

static const struct fm_attr *attr_fresh(struct kaas_fault_model *m, int host, const char *path)
{
	int64_t now = fm_now_ns();
	for (struct fm_attr *a = m->hosts[host].attrs; a; a = a->next)
		if (!strcmp(a->path, path))
			return now - a->at_ns < (int64_t)m->attr_timeout_ms * 1000000 ? a : NULL;
	return NULL;
}

/* A silly-renamed name some host still holds. */
static int silly_held(struct kaas_fault_model *m, const char *path)
{
	for (struct fm_node *n = m->nodes; n; n = n->next)
		for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++)
			if (n->view[i].silly && !strcmp(n->view[i].silly, path))
				return 1;
	return 0;
}

/* Rename lower `path` (file node, held open by `host`) to its .nfs name. */
static int silly_rename(struct kaas_fault_model *m, int host, struct fm_node *node, const char *path)
{
	char *dir = kaas_path_dirname(path);
	char name[64];
	snprintf(name, sizeof name, ".nfs%016llx%08x", (unsigned long long)node->ino,
		 (unsigned)(++m->silly_counter & 0xffffffffu));
	char *silly = dir ? kaas_path_join(dir, name) : NULL;
	free(dir);
	if (!silly)
		return -ENOMEM;
	int rc = kaas_sub_rename(m->lower, path, silly);
	if (rc < 0) {
		free(silly);
		return rc;
	}
	if (node->view[host].silly) {
		/* already silly-renamed once (renamed back, then removed again) */
		free(node->view[host].silly);
	}
	node->view[host].silly = silly;
	fm_event(m, host, "unlink", path, "silly-rename");
	return 0;
}

/* ---- applying rule decisions ---- */

struct decided {
	int torn;
	int torn_delay_ms;
};

/* Decide and apply the fault for op.  0 to go on, or -errno.  Called and
 * returns with m->mu held (unlocked while delaying). */
static int apply(struct kaas_fault_model *m, int host, enum fm_op op, const char *path,
		 struct decided *d)
{
	struct fm_rule *r = fm_decide(m, host, op, path);
	if (!r)
		return 0;
	switch (r->kind) {
	case FK_ERRNO:
		return kaas_sub_fail(r->err, "faultfs: injected %s on %s %s (host %d)",
				     fm_rule_fault_name(r), fm_op_names[op], path, host);
	case FK_DELAY: {
		int ms = r->delay_ms;
		UNLOCK(m);
		fm_sleep_ms(ms);
		LOCK(m);
		return 0;
	}
	case FK_TORN:
		if (d) {
			d->torn = 1;
			d->torn_delay_ms = r->delay_ms;
		}
		return 0;
	case FK_KILL: {
		pid_t pid = caller();
		if (m->log)
			fflush(m->log);
		if (pid == getpid()) {
			UNLOCK(m);
			raise(SIGKILL);
			LOCK(m);
		} else {
			kill(pid, SIGKILL);
		}
		return kaas_sub_fail(EIO, "faultfs: killed the caller of %s %s", fm_op_names[op], path);
	}
	}
	return 0;
}

static int handle_check(struct kaas_fault_handle *h)
{
	if (h->dead)
		return kaas_sub_fail(EIO, "faultfs: %s: host %d crashed since this handle was opened",
				     h->path, h->host);
	if (h->node && h->node->removed)
		return kaas_sub_fail(ESTALE, "faultfs: %s: removed by another host (stale file handle)",
				     h->path);
	return 0;
}

/* ---- publication ---- */

/* Save, for every other host with the file open, the bytes [off, off+len)
 * it has not yet seen replaced (clipped to its size). */
static int save_undo(struct kaas_fault_model *m, struct fm_node *node, int host,
		     struct kaas_file *lower, uint64_t off, size_t len)
{
	for (int g = 0; g < KAAS_FAULT_MAX_HOSTS; g++) {
		struct fm_view *v = &node->view[g];
		if (g == host || v->nopen == 0 || off >= v->size)
			continue;
		size_t n = len;
		if (off + n > v->size)
			n = (size_t)(v->size - off);
		char *old = calloc(1, n ? n : 1);
		if (!old)
			return -ENOMEM;
		ssize_t got = kaas_sub_pread_full(lower, old, n, off);
		if (got < 0) {
			free(old);
			return (int)got;
		}
		int rc = ext_add(&v->undo, old, n, off);
		free(old);
		if (rc < 0)
			return rc;
		/* the newest undo must not extend a neighbour: keep extents separate */
		(void)m;
	}
	return 0;
}

/* Truncate the lower file to size, first saving for other hosts the bytes
 * they still see beyond it. */
static int truncate_lower(struct kaas_fault_model *m, struct fm_node *node, int host,
			  struct kaas_file *lower, uint64_t size)
{
	uint64_t top = 0;
	for (int g = 0; g < KAAS_FAULT_MAX_HOSTS; g++)
		if (g != host && node->view[g].nopen > 0 && node->view[g].size > top)
			top = node->view[g].size;
	if (top > size) {
		int rc = save_undo(m, node, host, lower, size, (size_t)(top - size));
		if (rc < 0)
			return rc;
	}
	return kaas_sub_ftruncate(lower, size);
}

/* Write bytes [from, to) of the extents' concatenation to the lower. */
static int write_range(struct kaas_fault_model *m, struct fm_node *node, int host,
		       struct kaas_file *lower, const struct fm_extents *d, size_t from, size_t to)
{
	size_t pos = 0;
	for (size_t i = 0; i < d->n && pos < to; i++) {
		const struct fm_extent *e = &d->v[i];
		size_t a = from > pos ? from - pos : 0;
		size_t b = to - pos < e->len ? to - pos : e->len;
		if (a < b) {
			int rc = save_undo(m, node, host, lower, e->off + a, b - a);
			if (rc < 0)
				return rc;
			rc = kaas_sub_pwrite_full(lower, e->data + a, b - a, e->off + a);
			if (rc < 0)
				return rc;
		}
		pos += e->len;
	}
	return 0;
}

/* fsync_lies: this handle's private writes join the host's cache (at close). */
static int unlie(struct kaas_fault_handle *h)
{
	if (!h->lied.n)
		return 0;
	struct fm_view *v = &h->node->view[h->host];
	for (size_t i = 0; i < h->lied.n; i++) {
		int rc = ext_add(&v->dirty, h->lied.v[i].data, h->lied.v[i].len, h->lied.v[i].off);
		if (rc < 0)
			return rc;
	}
	uint64_t end = ext_end(&h->lied);
	if (end > v->size)
		v->size = end;
	ext_free(&h->lied);
	return 0;
}

/* A lower handle of `host` on `node` that can write (the caller's first). */
static struct kaas_file *writer_for(struct kaas_fault_model *m, struct kaas_fault_handle *h)
{
	if (h->flags & KAAS_O_WRITE)
		return h->lower;
	for (struct kaas_fault_handle *o = m->handles; o; o = o->next)
		if (o->node == h->node && o->host == h->host && (o->flags & KAAS_O_WRITE) && !o->dead)
			return o->lower;
	return NULL;
}

/* Publish the host's unpublished writes to the file.  A torn publication
 * writes a PRNG-chosen prefix, then (delay_ms > 0) sleeps and writes the
 * rest, or (delay_ms == 0) loses the rest and fails with -EIO. */
static int publish(struct kaas_fault_model *m, struct kaas_fault_handle *h, const struct decided *d)
{
	struct fm_node *node = h->node;
	struct fm_view *v = &node->view[h->host];
	if (v->dirty.n == 0)
		return 0;
	struct kaas_file *lower = writer_for(m, h);
	if (!lower)
		return kaas_sub_fail(EIO, "faultfs: %s: unpublished data but no writable handle", h->path);
	struct fm_extents dirty = v->dirty;
	memset(&v->dirty, 0, sizeof v->dirty);
	ext_free(&v->undo); /* this host now sees what it wrote */
	size_t total = dirty.bytes, cut = total;
	if (d && d->torn && total > 1)
		cut = 1 + (size_t)(fm_rand(m) % (total - 1));
	int rc = write_range(m, node, h->host, lower, &dirty, 0, cut);
	if (rc == 0 && cut < total) {
		if (d->torn_delay_ms > 0) {
			uint64_t gen = m->hosts[h->host].gen;
			UNLOCK(m);
			fm_sleep_ms(d->torn_delay_ms);
			LOCK(m);
			if (m->hosts[h->host].gen != gen || h->dead)
				rc = kaas_sub_fail(EIO, "faultfs: %s: host crashed during a torn flush", h->path);
			else
				rc = write_range(m, node, h->host, lower, &dirty, cut, total);
		} else {
			rc = kaas_sub_fail(EIO, "faultfs: %s: torn flush: %zu of %zu bytes published, the rest lost",
					   h->path, cut, total);
		}
	}
	ext_free(&dirty);
	return rc;
}

/* ---- model lifetime ---- */

void kaas_fault_model_free(struct kaas_fault_model *m)
{
	if (!m)
		return;
	while (m->nodes) {
		struct fm_node *n = m->nodes;
		n->nopen = 0;
		node_release_if_unused(m, n);
	}
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		attr_forget_all(&m->hosts[i]);
		for (size_t j = 0; j < m->hosts[i].nleftovers; j++)
			free(m->hosts[i].leftovers[j]);
		free(m->hosts[i].leftovers);
	}
	while (m->recent) {
		struct fm_recent *r = m->recent;
		m->recent = r->next;
		free(r->path);
		free(r);
	}
	fm_rules_free(m);
	for (size_t i = 0; i < m->nevents; i++)
		free(m->events[i]);
	free(m->events);
	if (m->log)
		fclose(m->log);
	kaas_substrate_close(m->lower);
	free(m->lower_url);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

int kaas_fault_model_new(const char *lower_url, const char *config_json, uint64_t seed,
			 const char *log_path, struct kaas_fault_model **out)
{
	*out = NULL;
	struct kaas_fault_model *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->mu, NULL);
	m->rng = seed;
	m->attr_timeout_ms = 1000;
	m->writeback_bytes = 8u << 20;
	m->race_window_ms = 200;
	m->lower_url = strdup(lower_url);
	int rc = kaas_substrate_open(lower_url, &m->lower);
	if (rc < 0) {
		kaas_fault_model_free(m);
		return rc;
	}
	if (config_json && (rc = kaas_fault_configure(m, config_json)) < 0) {
		kaas_fault_model_free(m);
		return rc;
	}
	if (log_path && *log_path) {
		m->log = fopen(log_path, "w");
		if (!m->log) {
			rc = kaas_sub_fail(errno, "cannot write the event log %s: %s", log_path,
					   strerror(errno));
			kaas_fault_model_free(m);
			return rc;
		}
	}
	*out = m;
	return 0;
}

int kaas_fault_model_hosts(struct kaas_fault_model *m)
{
	LOCK(m);
	int n = 0;
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++)
		if (m->hosts[i].used)
			n = i + 1;
	UNLOCK(m);
	return n;
}

void fm_crash_locked(struct kaas_fault_model *m, int host)
{
	struct fm_host *hs = &m->hosts[host];
	hs->gen++;
	hs->crashes++;
	for (struct kaas_fault_handle *h = m->handles; h; h = h->next)
		if (h->host == host) {
			h->dead = 1;
			ext_free(&h->lied);
		}
	for (struct fm_node *n = m->nodes; n; n = n->next) {
		ext_free(&n->view[host].dirty);
		ext_free(&n->view[host].undo);
	}
	attr_forget_all(hs);
	fm_event(m, host, "crash", "", "crash");
}

int kaas_fault_crash(struct kaas_fault_model *m, int host)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	fm_crash_locked(m, host);
	UNLOCK(m);
	return 0;
}

int fm_heal_locked(struct kaas_fault_model *m, int host)
{
	int removed = 0;
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		if (host >= 0 && i != host)
			continue;
		struct fm_host *hs = &m->hosts[i];
		for (size_t j = 0; j < hs->nleftovers; j++) {
			if (kaas_sub_unlink(m->lower, hs->leftovers[j]) == 0)
				removed++;
			fm_event(m, i, "heal", hs->leftovers[j], "heal");
			free(hs->leftovers[j]);
		}
		free(hs->leftovers);
		hs->leftovers = NULL;
		hs->nleftovers = 0;
	}
	return removed;
}

int kaas_fault_heal(struct kaas_fault_model *m, int host)
{
	if (host < -1 || host >= KAAS_FAULT_MAX_HOSTS)
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	int rc = fm_heal_locked(m, host);
	UNLOCK(m);
	return rc;
}

/* ---- handle operations ---- */

/* excl_race: exclusive create done as check-then-create.  The check also
 * misses a name another process created by exclusive create within the
 * race window (its create had "not landed yet" when we looked), and a
 * pause sits between check and create, so racers can all win. */
static int racy_create(struct kaas_fault_model *m, const char *path, int flags, uint32_t mode,
		       struct kaas_file **lower)
{
	struct kaas_stat st;
	int exists = kaas_sub_stat(m->lower, path, &st) == 0;
	int64_t now = fm_now_ns();
	pid_t me = caller();
	struct fm_recent **pp = &m->recent;
	while (*pp) {
		struct fm_recent *r = *pp;
		if (now - r->at_ns > (int64_t)m->race_window_ms * 1000000) {
			*pp = r->next;
			free(r->path);
			free(r);
			continue;
		}
		if (exists && !strcmp(r->path, path) && r->pid != me)
			exists = 0; /* our check "ran before" that create */
		pp = &r->next;
	}
	if (exists)
		return kaas_sub_fail(EEXIST, "faultfs: %s exists", path);
	struct fm_recent *r = calloc(1, sizeof *r);
	if (r && (r->path = strdup(path))) {
		r->pid = me;
		r->at_ns = now;
		r->next = m->recent;
		m->recent = r;
	} else {
		free(r);
	}
	UNLOCK(m);
	fm_sleep_ms(20);
	LOCK(m);
	return kaas_sub_open(m->lower, path, flags & ~KAAS_O_EXCL, mode, lower);
}

/* excl_race: a stat by another process inside the race window misses it. */
static int racy_hidden(struct kaas_fault_model *m, const char *path)
{
	int64_t now = fm_now_ns();
	for (struct fm_recent *r = m->recent; r; r = r->next)
		if (!strcmp(r->path, path) && r->pid != caller() &&
		    now - r->at_ns <= (int64_t)m->race_window_ms * 1000000)
			return 1;
	return 0;
}

int kaas_fault_open(struct kaas_fault_model *m, int host, const char *path, int flags,
		    uint32_t mode, struct kaas_fault_handle **out)
{
	*out = NULL;
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	struct kaas_fault_handle *h = calloc(1, sizeof *h);
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return -ENOMEM;
	}
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, (flags & KAAS_O_CREAT) ? FM_CREATE : FM_OPEN, path, NULL);
	int lflags = flags;
	if (!m->passthrough && (flags & KAAS_O_WRITE))
		lflags |= KAAS_O_READ; /* publication reads old bytes for other hosts */
	if (!m->passthrough && !(flags & KAAS_O_DIRECTORY))
		lflags &= ~KAAS_O_TRUNC; /* done below, after saving what others see */
	if (rc == 0) {
		if (m->excl_race && (flags & KAAS_O_CREAT) && (flags & KAAS_O_EXCL))
			rc = racy_create(m, path, lflags, mode, &h->lower);
		else
			rc = kaas_sub_open(m->lower, path, lflags, mode, &h->lower);
	}
	if (rc < 0)
		goto fail;
	h->m = m;
	h->host = host;
	h->flags = flags;
	if (!m->passthrough && !(flags & KAAS_O_DIRECTORY)) {
		struct kaas_stat st;
		rc = kaas_sub_fstat(h->lower, &st);
		if (rc < 0)
			goto fail;
		struct fm_node *node = node_find(m, st.ino);
		if (!node) {
			node = calloc(1, sizeof *node);
			if (!node) {
				rc = -ENOMEM;
				goto fail;
			}
			node->ino = st.ino;
			node->next = m->nodes;
			m->nodes = node;
		}
		struct fm_view *v = &node->view[host];
		v->nopen++;
		node->nopen++;
		h->node = node;
		if (flags & KAAS_O_TRUNC) {
			ext_free(&v->dirty);
			rc = truncate_lower(m, node, host, h->lower, 0);
			st.size = 0;
			if (rc < 0) {
				v->nopen--;
				node->nopen--;
				node_release_if_unused(m, node);
				goto fail;
			}
		}
		/* close-to-open: an open revalidates this host's view of the file */
		ext_free(&v->undo);
		uint64_t dend = ext_end(&v->dirty);
		v->size = st.size > dend ? st.size : dend;
		st.size = v->size;
		attr_store(m, host, path, &st);
	}
	h->next = m->handles;
	if (m->handles)
		m->handles->prev = h;
	m->handles = h;
	UNLOCK(m);
	*out = h;
	return 0;
fail:
	UNLOCK(m);
	if (h->lower)
		kaas_sub_close(h->lower);
	free(h->path);
	free(h);
	return rc;
}

int kaas_fault_close(struct kaas_fault_handle *h)
{
	struct kaas_fault_model *m = h->m;
	int rc = 0;
	LOCK(m);
	struct fm_node *node = h->node;
	if (node) {
		struct fm_view *v = &node->view[h->host];
		if (h->dead) {
			rc = kaas_sub_fail(EIO, "faultfs: %s: host %d crashed; unpublished data lost", h->path,
					   h->host);
		} else if ((v->dirty.n || h->lied.n) && (h->flags & KAAS_O_WRITE)) {
			unlie(h);
			struct decided d = { 0, 0 };
			rc = apply(m, h->host, FM_CLOSE, h->path, &d);
			if (rc < 0)
				ext_free(&v->dirty); /* a failed close-time flush loses the data */
			else if (h->dead) /* crashed during a delay */
				rc = kaas_sub_fail(EIO, "faultfs: %s: host %d crashed", h->path, h->host);
			else
				rc = publish(m, h, &d);
		}
		if (h->flags & KAAS_O_WRITE)
			attr_forget(&m->hosts[h->host], h->path);
		v->nopen--;
		node->nopen--;
		if (v->nopen == 0) {
			ext_free(&v->undo);
			ext_free(&v->dirty);
			if (v->silly) {
				if (h->dead) {
					struct fm_host *hs = &m->hosts[h->host];
					char **l = realloc(hs->leftovers, (hs->nleftovers + 1) * sizeof *l);
					if (l) {
						hs->leftovers = l;
						l[hs->nleftovers++] = v->silly;
					} else {
						free(v->silly);
					}
				} else {
					if (kaas_sub_unlink(m->lower, v->silly) == 0)
						node->removed = 1;
					free(v->silly);
				}
				v->silly = NULL;
			}
		}
		node_release_if_unused(m, node);
	}
	ext_free(&h->lied);
	if (h->prev)
		h->prev->next = h->next;
	else
		m->handles = h->next;
	if (h->next)
		h->next->prev = h->prev;
	UNLOCK(m);
	int crc = kaas_sub_close(h->lower);
	if (rc == 0 && crc < 0)
		rc = crc;
	free(h->path);
	free(h);
	return rc;
}

ssize_t kaas_fault_pread(struct kaas_fault_handle *h, void *buf, size_t len, uint64_t off)
{
	struct kaas_fault_model *m = h->m;
	LOCK(m);
	int rc = handle_check(h);
	if (rc == 0)
		rc = apply(m, h->host, FM_READ, h->path, NULL);
	if (rc == 0)
		rc = handle_check(h); /* a delay may have let a crash or removal in */
	if (rc < 0) {
		UNLOCK(m);
		return rc;
	}
	if (!h->node) {
		UNLOCK(m);
		return kaas_sub_pread(h->lower, buf, len, off);
	}
	struct fm_view *v = &h->node->view[h->host];
	uint64_t size = v->size, lend = ext_end(&h->lied);
	if (lend > size)
		size = lend;
	if (off >= size) {
		UNLOCK(m);
		return 0;
	}
	size_t n = len;
	if (off + n > size)
		n = (size_t)(size - off);
	ssize_t got = kaas_sub_pread_full(h->lower, buf, n, off);
	if (got < 0) {
		UNLOCK(m);
		return got;
	}
	if ((size_t)got < n)
		memset((char *)buf + got, 0, n - (size_t)got);
	for (size_t i = v->undo.n; i-- > 0;)
		ext_overlay(&v->undo.v[i], buf, n, off);
	for (size_t i = 0; i < v->dirty.n; i++)
		ext_overlay(&v->dirty.v[i], buf, n, off);
	for (size_t i = 0; i < h->lied.n; i++)
		ext_overlay(&h->lied.v[i], buf, n, off);
	UNLOCK(m);
	return (ssize_t)n;
}

ssize_t kaas_fault_pwrite(struct kaas_fault_handle *h, const void *buf, size_t len, uint64_t off)
{
	struct kaas_fault_model *m = h->m;
	if (!(h->flags & KAAS_O_WRITE))
		return kaas_sub_fail(EBADF, "faultfs: %s: not open for writing", h->path);
	LOCK(m);
	int rc = handle_check(h);
	if (rc == 0)
		rc = apply(m, h->host, FM_WRITE, h->path, NULL);
	if (rc == 0)
		rc = handle_check(h); /* a delay may have let a crash or removal in */
	if (rc < 0) {
		UNLOCK(m);
		return rc;
	}
	if (!h->node) {
		UNLOCK(m);
		return kaas_sub_pwrite(h->lower, buf, len, off);
	}
	struct fm_view *v = &h->node->view[h->host];
	if (m->fsync_lies) {
		/* the lying substrate buffers per handle: nobody else sees it */
		rc = ext_add(&h->lied, buf, len, off);
		if (rc == 0 && h->lied.bytes >= 8 * m->writeback_bytes) {
			/* bounded memory: past 8x the write-back limit even the liar
			 * writes back */
			rc = unlie(h);
			if (rc == 0)
				rc = publish(m, h, NULL);
		}
		UNLOCK(m);
		return rc < 0 ? rc : (ssize_t)len;
	}
	rc = ext_add(&v->dirty, buf, len, off);
	if (rc == 0 && off + len > v->size)
		v->size = off + len;
	if (rc == 0 && v->dirty.bytes >= m->writeback_bytes && !m->fsync_lies)
		rc = publish(m, h, NULL); /* write-back under memory pressure */
	UNLOCK(m);
	return rc < 0 ? rc : (ssize_t)len;
}

static int flush_common(struct kaas_fault_handle *h, enum fm_op op)
{
	struct kaas_fault_model *m = h->m;
	LOCK(m);
	int rc = handle_check(h);
	struct decided d = { 0, 0 };
	if (rc == 0) {
		rc = apply(m, h->host, op, h->path, &d);
		if (rc < 0 && op == FM_CLOSE && h->node) {
			/* a failed close-time flush loses the data, as in close */
			ext_free(&h->node->view[h->host].dirty);
			ext_free(&h->lied);
		}
		if (rc == 0)
			rc = handle_check(h); /* a delay may have let a crash in */
	}
	if (rc < 0) {
		UNLOCK(m);
		return rc;
	}
	if (!h->node) {
		UNLOCK(m);
		return op == FM_FSYNC ? kaas_sub_fsync(h->lower) : 0;
	}
	if (op == FM_FSYNC && m->fsync_lies) {
		/* the lie: success, data stays in this host's cache until close */
		UNLOCK(m);
		return 0;
	}
	if (op == FM_CLOSE)
		rc = unlie(h);
	if (rc == 0)
		rc = publish(m, h, &d);
	UNLOCK(m);
	/* the lower fsync runs unlocked so hosts do not queue behind each
	 * other's disk flushes; this handle is used by one thread at a time
	 * and stays open until its close */
	if (rc == 0 && op == FM_FSYNC && (h->flags & KAAS_O_WRITE))
		rc = kaas_sub_fsync(h->lower);
	return rc;
}

int kaas_fault_flush(struct kaas_fault_handle *h)
{
	return flush_common(h, FM_CLOSE);
}

int kaas_fault_fsync(struct kaas_fault_handle *h)
{
	return flush_common(h, FM_FSYNC);
}

int kaas_fault_ftruncate(struct kaas_fault_handle *h, uint64_t size)
{
	struct kaas_fault_model *m = h->m;
	LOCK(m);
	int rc = handle_check(h);
	if (rc == 0)
		rc = apply(m, h->host, FM_TRUNCATE, h->path, NULL);
	if (rc == 0)
		rc = handle_check(h); /* a delay may have let a crash or removal in */
	if (rc == 0 && h->node)
		rc = unlie(h);
	if (rc == 0 && h->node)
		rc = publish(m, h, NULL);
	if (rc == 0)
		rc = h->node ? truncate_lower(m, h->node, h->host, h->lower, size)
			     : kaas_sub_ftruncate(h->lower, size);
	if (rc == 0 && h->node)
		h->node->view[h->host].size = size;
	UNLOCK(m);
	return rc;
}

int kaas_fault_fstat(struct kaas_fault_handle *h, struct kaas_stat *st)
{
	struct kaas_fault_model *m = h->m;
	LOCK(m);
	int rc = handle_check(h);
	if (rc == 0)
		rc = apply(m, h->host, FM_STAT, h->path, NULL);
	if (rc == 0)
		rc = handle_check(h); /* a delay may have let a crash or removal in */
	if (rc == 0)
		rc = kaas_sub_fstat(h->lower, st);
	if (rc == 0 && h->node) {
		uint64_t lend = ext_end(&h->lied);
		st->size = h->node->view[h->host].size;
		if (lend > st->size)
			st->size = lend;
	}
	UNLOCK(m);
	return rc;
}

/* ---- name operations ---- */

int kaas_fault_stat(struct kaas_fault_model *m, int host, const char *path, struct kaas_stat *st)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, FM_STAT, path, NULL);
	if (rc < 0 || m->passthrough) {
		UNLOCK(m);
		return rc < 0 ? rc : kaas_sub_stat(m->lower, path, st);
	}
	if (m->excl_race && racy_hidden(m, path)) {
		UNLOCK(m);
		return kaas_sub_fail(ENOENT, "faultfs: %s: not there yet (racy exclusive create)", path);
	}
	const struct fm_attr *a = attr_fresh(m, host, path);
	if (a) {
		*st = a->st;
	} else {
		rc = kaas_sub_stat(m->lower, path, st);
		if (rc == 0)
			attr_store(m, host, path, st);
	}
	if (rc == 0 && st->type == KAAS_FT_FILE) {
		struct fm_node *n = node_find(m, st->ino);
		if (n && n->view[host].nopen > 0)
			st->size = n->view[host].size;
	}
	UNLOCK(m);
	return rc;
}

/* Copy `from` over `to`, then delete `from`: the disqualified rename.  A
 * reader can see `to` empty or half-written, and both names at once. */
static int copy_rename(struct kaas_fault_model *m, const char *from, const char *to)
{
	struct kaas_file *src = NULL, *dst = NULL;
	int rc = kaas_sub_open(m->lower, from, KAAS_O_READ, 0, &src);
	if (rc < 0)
		return rc;
	rc = kaas_sub_open(m->lower, to, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &dst);
	if (rc < 0) {
		kaas_sub_close(src);
		return rc;
	}
	char buf[65536];
	uint64_t off = 0;
	fm_sleep_ms(1); /* the target sits empty for a moment */
	for (;;) {
		ssize_t n = kaas_sub_pread(src, buf, sizeof buf, off);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		size_t half = (size_t)n / 2;
		rc = kaas_sub_pwrite_full(dst, buf, half, off);
		if (rc == 0) {
			fm_sleep_ms(1); /* ... then half-written */
			rc = kaas_sub_pwrite_full(dst, buf + half, (size_t)n - half, off + half);
		}
		if (rc < 0)
			break;
		off += (uint64_t)n;
	}
	kaas_sub_close(src);
	int crc = kaas_sub_close(dst);
	if (rc == 0)
		rc = crc;
	if (rc == 0)
		rc = kaas_sub_unlink(m->lower, from);
	return rc;
}

int kaas_fault_rename(struct kaas_fault_model *m, int host, const char *from, const char *to)
{
	return kaas_fault_rename_silly(m, host, from, to, NULL);
}

int kaas_fault_rename_silly(struct kaas_fault_model *m, int host, const char *from, const char *to,
			    char **silly)
{
	if (silly)
		*silly = NULL;
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, FM_RENAME, from, NULL);
	if (rc < 0 || m->passthrough) {
		UNLOCK(m);
		return rc < 0 ? rc : kaas_sub_rename(m->lower, from, to);
	}
	attr_forget_all(&m->hosts[host]);
	struct kaas_stat fst, tst;
	if (m->rename_copy && kaas_sub_stat(m->lower, from, &fst) == 0 && fst.type == KAAS_FT_FILE) {
		UNLOCK(m);
		return copy_rename(m, from, to);
	}
	struct fm_node *victim = NULL;
	if (kaas_sub_stat(m->lower, to, &tst) == 0 && tst.type == KAAS_FT_FILE &&
	    (kaas_sub_stat(m->lower, from, &fst) != 0 || fst.ino != tst.ino)) {
		victim = node_find(m, tst.ino);
		if (victim && victim->view[host].nopen > 0) {
			rc = silly_rename(m, host, victim, to);
			if (rc == 0 && silly)
				*silly = strdup(victim->view[host].silly);
			victim = NULL;
		}
	}
	if (rc == 0)
		rc = kaas_sub_rename(m->lower, from, to);
	if (rc == 0 && victim)
		victim->removed = 1;
	UNLOCK(m);
	return rc;
}

int kaas_fault_unlink(struct kaas_fault_model *m, int host, const char *path)
{
	return kaas_fault_unlink_silly(m, host, path, NULL);
}

int kaas_fault_unlink_silly(struct kaas_fault_model *m, int host, const char *path, char **silly)
{
	if (silly)
		*silly = NULL;
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, FM_UNLINK, path, NULL);
	if (rc < 0 || m->passthrough) {
		UNLOCK(m);
		return rc < 0 ? rc : kaas_sub_unlink(m->lower, path);
	}
	attr_forget(&m->hosts[host], path);
	if (silly_held(m, path)) {
		UNLOCK(m);
		return kaas_sub_fail(EBUSY, "faultfs: %s: silly-renamed file still open", path);
	}
	struct kaas_stat st;
	struct fm_node *node = NULL;
	if (kaas_sub_stat(m->lower, path, &st) == 0 && st.type == KAAS_FT_FILE)
		node = node_find(m, st.ino);
	if (node && node->view[host].nopen > 0) {
		rc = silly_rename(m, host, node, path);
		if (rc == 0 && silly)
			*silly = strdup(node->view[host].silly);
	} else {
		rc = kaas_sub_unlink(m->lower, path);
		if (rc == 0 && node)
			node->removed = 1;
	}
	UNLOCK(m);
	return rc;
}

int kaas_fault_mkdir(struct kaas_fault_model *m, int host, const char *path, uint32_t mode)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, FM_MKDIR, path, NULL);
	if (rc == 0)
		attr_forget(&m->hosts[host], path);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_mkdir(m->lower, path, mode);
}

int kaas_fault_rmdir(struct kaas_fault_model *m, int host, const char *path)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, FM_RMDIR, path, NULL);
	if (rc == 0)
		attr_forget(&m->hosts[host], path);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_rmdir(m->lower, path);
}

int kaas_fault_readdir(struct kaas_fault_model *m, int host, const char *path, kaas_dirent_cb cb,
		       void *arg)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = apply(m, host, FM_READDIR, path, NULL);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_readdir(m->lower, path, cb, arg);
}

int kaas_fault_fsync_dir(struct kaas_fault_model *m, int host, const char *path)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	int rc = apply(m, host, FM_FSYNCDIR, path, NULL);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_fsync_dir(m->lower, path);
}

int kaas_fault_statfs(struct kaas_fault_model *m, int host, const char *path,
		      struct kaas_statfs *out)
{
	if (bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	int rc = apply(m, host, FM_STATFS, path, NULL);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_statfs(m->lower, path, out);
}
