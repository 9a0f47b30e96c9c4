/* handles.c — open handles: close-to-open publication, torn flushes,
 * ESTALE, the lying fsync and the racy exclusive create. */
#include "faultfs/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
		int rc = fm_ext_add(&v->undo, old, n, off);
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
		int rc = fm_ext_add(&v->dirty, h->lied.v[i].data, h->lied.v[i].len, h->lied.v[i].off);
		if (rc < 0)
			return rc;
	}
	uint64_t end = fm_ext_end(&h->lied);
	if (end > v->size)
		v->size = end;
	fm_ext_free(&h->lied);
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
static int publish(struct kaas_fault_model *m, struct kaas_fault_handle *h, const struct fm_decided *d)
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
	fm_ext_free(&v->undo); /* this host now sees what it wrote */
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
	fm_ext_free(&dirty);
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
	pid_t me = fm_caller();
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
int fm_racy_hidden(struct kaas_fault_model *m, const char *path)
{
	int64_t now = fm_now_ns();
	for (struct fm_recent *r = m->recent; r; r = r->next)
		if (!strcmp(r->path, path) && r->pid != fm_caller() &&
		    now - r->at_ns <= (int64_t)m->race_window_ms * 1000000)
			return 1;
	return 0;
}

int kaas_fault_open(struct kaas_fault_model *m, int host, const char *path, int flags,
		    uint32_t mode, struct kaas_fault_handle **out)
{
	*out = NULL;
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	struct kaas_fault_handle *h = calloc(1, sizeof *h);
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return -ENOMEM;
	}
	LOCK(m);
	m->hosts[host].used = 1;
	struct fm_decided d = { 0 };
	int rc = fm_apply(m, host, (flags & KAAS_O_CREAT) ? FM_CREATE : FM_OPEN, path, &d);
	int lflags = flags;
	if (!m->passthrough && (flags & KAAS_O_WRITE))
		lflags |= KAAS_O_READ; /* publication reads old bytes for other hosts */
	if (!m->passthrough && !(flags & KAAS_O_DIRECTORY))
		lflags &= ~KAAS_O_TRUNC; /* done below, after saving what others see */
	/* A cached "missing": a plain open trusts it for the name and its
	 * parents; a create asks the server for the name itself. */
	if (rc == 0 && fm_neg_hides(m, host, path, !(flags & KAAS_O_CREAT)))
		rc = kaas_sub_fail(ENOENT, "faultfs: %s: missing to host %d (negative lookup cache)",
				   path, host);
	else if (rc == 0) {
		if (m->excl_race && (flags & KAAS_O_CREAT) && (flags & KAAS_O_EXCL))
			rc = racy_create(m, path, lflags, mode, &h->lower);
		else
			rc = kaas_sub_open(m->lower, path, lflags, mode, &h->lower);
		if (rc == -ENOENT && !(flags & KAAS_O_CREAT))
			fm_neg_store(m, host, path);
		else if (rc == 0 || rc == -EEXIST)
			fm_neg_forget(&m->hosts[host], path);
		/* An open of a directory revalidates it with the server. */
		if (rc == 0 && (flags & KAAS_O_DIRECTORY))
			fm_neg_forget_children(&m->hosts[host], path);
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
		struct fm_node *node = fm_node_find(m, st.ino);
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
			fm_ext_free(&v->dirty);
			rc = truncate_lower(m, node, host, h->lower, 0);
			st.size = 0;
			if (rc < 0) {
				v->nopen--;
				node->nopen--;
				fm_node_release(m, node);
				goto fail;
			}
		}
		/* close-to-open: an open revalidates this host's view of the file */
		fm_ext_free(&v->undo);
		uint64_t dend = fm_ext_end(&v->dirty);
		v->size = st.size > dend ? st.size : dend;
		st.size = v->size;
		fm_attr_store(m, host, path, &st);
	}
	if (d.lost) {
		/* Created (and truncated) on the server; the reply with the
		 * handle never came back. */
		if (h->node) {
			h->node->view[host].nopen--;
			h->node->nopen--;
			fm_node_release(m, h->node);
		}
		rc = fm_lost_reply(&d, 0, FM_CREATE, !!(flags & KAAS_O_EXCL), path, host);
		goto fail;
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
			struct fm_decided d = { 0 };
			rc = fm_apply(m, h->host, FM_CLOSE, h->path, &d);
			if (rc < 0)
				fm_ext_free(&v->dirty); /* a failed close-time flush loses the data */
			else if (h->dead) /* crashed during a delay */
				rc = kaas_sub_fail(EIO, "faultfs: %s: host %d crashed", h->path, h->host);
			else
				rc = publish(m, h, &d);
		}
		if (h->flags & KAAS_O_WRITE)
			fm_attr_forget(&m->hosts[h->host], h->path);
		v->nopen--;
		node->nopen--;
		if (v->nopen == 0) {
			fm_ext_free(&v->undo);
			fm_ext_free(&v->dirty);
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
		fm_node_release(m, node);
	}
	fm_ext_free(&h->lied);
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
	int rc = fm_handle_check(h);
	if (rc == 0)
		rc = fm_apply(m, h->host, FM_READ, h->path, NULL);
	if (rc == 0)
		rc = fm_handle_check(h); /* a delay may have let a crash or removal in */
	if (rc < 0) {
		UNLOCK(m);
		return rc;
	}
	if (!h->node) {
		UNLOCK(m);
		return kaas_sub_pread(h->lower, buf, len, off);
	}
	struct fm_view *v = &h->node->view[h->host];
	uint64_t size = v->size, lend = fm_ext_end(&h->lied);
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
		fm_ext_overlay(&v->undo.v[i], buf, n, off);
	for (size_t i = 0; i < v->dirty.n; i++)
		fm_ext_overlay(&v->dirty.v[i], buf, n, off);
	for (size_t i = 0; i < h->lied.n; i++)
		fm_ext_overlay(&h->lied.v[i], buf, n, off);
	UNLOCK(m);
	return (ssize_t)n;
}

ssize_t kaas_fault_pwrite(struct kaas_fault_handle *h, const void *buf, size_t len, uint64_t off)
{
	struct kaas_fault_model *m = h->m;
	if (!(h->flags & KAAS_O_WRITE))
		return kaas_sub_fail(EBADF, "faultfs: %s: not open for writing", h->path);
	LOCK(m);
	int rc = fm_handle_check(h);
	if (rc == 0)
		rc = fm_apply(m, h->host, FM_WRITE, h->path, NULL);
	if (rc == 0)
		rc = fm_handle_check(h); /* a delay may have let a crash or removal in */
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
		rc = fm_ext_add(&h->lied, buf, len, off);
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
	rc = fm_ext_add(&v->dirty, buf, len, off);
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
	int rc = fm_handle_check(h);
	struct fm_decided d = { 0 };
	if (rc == 0) {
		rc = fm_apply(m, h->host, op, h->path, &d);
		if (rc < 0 && op == FM_CLOSE && h->node) {
			/* a failed close-time flush loses the data, as in close */
			fm_ext_free(&h->node->view[h->host].dirty);
			fm_ext_free(&h->lied);
		}
		if (rc == 0)
			rc = fm_handle_check(h); /* a delay may have let a crash in */
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
	if (op == FM_CLOSE && !(h->flags & KAAS_O_WRITE)) {
		/* closing a read-only handle flushes nothing (as NFS) */
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
	int rc = fm_handle_check(h);
	if (rc == 0)
		rc = fm_apply(m, h->host, FM_TRUNCATE, h->path, NULL);
	if (rc == 0)
		rc = fm_handle_check(h); /* a delay may have let a crash or removal in */
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
	int rc = fm_handle_check(h);
	if (rc == 0)
		rc = fm_apply(m, h->host, FM_STAT, h->path, NULL);
	if (rc == 0)
		rc = fm_handle_check(h); /* a delay may have let a crash or removal in */
	if (rc == 0)
		rc = kaas_sub_fstat(h->lower, st);
	if (rc == 0 && h->node) {
		uint64_t lend = fm_ext_end(&h->lied);
		st->size = h->node->view[h->host].size;
		if (lend > st->size)
			st->size = lend;
	}
	UNLOCK(m);
	return rc;
}

