/* names.c — operations by name: stat through the attribute cache,
 * silly-renaming unlink and rename, copy+delete rename, directories. */
#include "faultfs/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- name operations ---- */

int kaas_fault_stat(struct kaas_fault_model *m, int host, const char *path, struct kaas_stat *st)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = fm_apply(m, host, FM_STAT, path, NULL);
	if (rc < 0 || m->passthrough) {
		UNLOCK(m);
		return rc < 0 ? rc : kaas_sub_stat(m->lower, path, st);
	}
	if (m->excl_race && fm_racy_hidden(m, path)) {
		UNLOCK(m);
		return kaas_sub_fail(ENOENT, "faultfs: %s: not there yet (racy exclusive create)", path);
	}
	if (fm_neg_hides(m, host, path, 1)) {
		UNLOCK(m);
		return kaas_sub_fail(ENOENT, "faultfs: %s: missing to host %d (negative lookup cache)",
				     path, host);
	}
	const struct fm_attr *a = fm_attr_fresh(m, host, path);
	if (a) {
		*st = a->st;
	} else {
		rc = kaas_sub_stat(m->lower, path, st);
		if (rc == 0)
			fm_attr_store(m, host, path, st);
		else if (rc == -ENOENT)
			fm_neg_store(m, host, path);
	}
	if (rc == 0 && st->type == KAAS_FT_FILE) {
		struct fm_node *n = fm_node_find(m, st->ino);
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
	return kaas_fault_rename_silly(m, host, from, to, NULL, NULL);
}

int kaas_fault_rename_silly(struct kaas_fault_model *m, int host, const char *from, const char *to,
			    char **silly, int *applied)
{
	int ignored;
	if (!applied)
		applied = &ignored;
	*applied = 0;
	if (silly)
		*silly = NULL;
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	struct fm_decided d = { 0 };
	int rc = fm_apply(m, host, FM_RENAME, from, &d);
	if (rc < 0 || m->passthrough) {
		UNLOCK(m);
		if (rc == 0)
			*applied = (rc = kaas_sub_rename(m->lower, from, to)) == 0;
		return fm_lost_reply(&d, rc, FM_RENAME, 0, from, host);
	}
	if (fm_neg_hides(m, host, from, 1) || fm_neg_hides(m, host, to, 0)) {
		UNLOCK(m);
		return kaas_sub_fail(ENOENT, "faultfs: rename %s -> %s: missing to host %d (negative "
				     "lookup cache)", from, to, host);
	}
	fm_attr_forget_all(&m->hosts[host]);
	fm_neg_forget(&m->hosts[host], from);
	fm_neg_forget(&m->hosts[host], to);
	struct kaas_stat fst, tst;
	if (m->rename_copy && kaas_sub_stat(m->lower, from, &fst) == 0 && fst.type == KAAS_FT_FILE) {
		UNLOCK(m);
		*applied = (rc = copy_rename(m, from, to)) == 0;
		return fm_lost_reply(&d, rc, FM_RENAME, 0, from, host);
	}
	struct fm_node *victim = NULL;
	if (kaas_sub_stat(m->lower, to, &tst) == 0 && tst.type == KAAS_FT_FILE &&
	    (kaas_sub_stat(m->lower, from, &fst) != 0 || fst.ino != tst.ino)) {
		victim = fm_node_find(m, tst.ino);
		if (victim && victim->view[host].nopen > 0) {
			rc = fm_silly_rename(m, host, victim, to);
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
	*applied = rc == 0;
	return fm_lost_reply(&d, rc, FM_RENAME, 0, from, host);
}

int kaas_fault_unlink(struct kaas_fault_model *m, int host, const char *path)
{
	return kaas_fault_unlink_silly(m, host, path, NULL, NULL);
}

int kaas_fault_unlink_silly(struct kaas_fault_model *m, int host, const char *path, char **silly,
			    int *applied)
{
	int ignored;
	if (!applied)
		applied = &ignored;
	*applied = 0;
	if (silly)
		*silly = NULL;
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	struct fm_decided d = { 0 };
	int rc = fm_apply(m, host, FM_UNLINK, path, &d);
	if (rc < 0 || m->passthrough) {
		UNLOCK(m);
		if (rc == 0)
			*applied = (rc = kaas_sub_unlink(m->lower, path)) == 0;
		return fm_lost_reply(&d, rc, FM_UNLINK, 0, path, host);
	}
	if (fm_neg_hides(m, host, path, 1)) {
		UNLOCK(m);
		return kaas_sub_fail(ENOENT, "faultfs: %s: missing to host %d (negative lookup cache)",
				     path, host);
	}
	fm_attr_forget(&m->hosts[host], path);
	/* EBUSY only on the holding client: another host's unlink of the
	 * .nfs name removes the file on the server, as the kernel's does
	 * (the holders then get ESTALE, below). */
	if (fm_silly_held(m, host, path)) {
		UNLOCK(m);
		return kaas_sub_fail(EBUSY, "faultfs: %s: silly-renamed file still open", path);
	}
	struct kaas_stat st;
	struct fm_node *node = NULL;
	if (kaas_sub_stat(m->lower, path, &st) == 0 && st.type == KAAS_FT_FILE)
		node = fm_node_find(m, st.ino);
	if (node && node->view[host].nopen > 0) {
		rc = fm_silly_rename(m, host, node, path);
		if (rc == 0 && silly)
			*silly = strdup(node->view[host].silly);
	} else {
		rc = kaas_sub_unlink(m->lower, path);
		if (rc == 0 && node)
			node->removed = 1;
		/* The client keeps the removed name as a trusted negative
		 * entry (nfs_unlink sets its verifier). */
		if (rc == 0 || rc == -ENOENT)
			fm_neg_store(m, host, path);
	}
	UNLOCK(m);
	*applied = rc == 0;
	return fm_lost_reply(&d, rc, FM_UNLINK, 0, path, host);
}

int kaas_fault_mkdir(struct kaas_fault_model *m, int host, const char *path, uint32_t mode)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	struct fm_decided d = { 0 };
	int rc = fm_apply(m, host, FM_MKDIR, path, &d);
	if (rc == 0 && fm_neg_hides(m, host, path, 0))
		rc = kaas_sub_fail(ENOENT, "faultfs: %s: a parent is missing to host %d (negative "
				   "lookup cache)", path, host);
	if (rc == 0) {
		fm_attr_forget(&m->hosts[host], path);
		fm_neg_forget(&m->hosts[host], path);
	}
	UNLOCK(m);
	return rc < 0 ? rc : fm_lost_reply(&d, kaas_sub_mkdir(m->lower, path, mode), FM_MKDIR, 0, path,
					   host);
}

int kaas_fault_rmdir(struct kaas_fault_model *m, int host, const char *path)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	m->hosts[host].used = 1;
	struct fm_decided d = { 0 };
	int rc = fm_apply(m, host, FM_RMDIR, path, &d);
	if (rc == 0 && fm_neg_hides(m, host, path, 1))
		rc = kaas_sub_fail(ENOENT, "faultfs: %s: missing to host %d (negative lookup cache)",
				   path, host);
	if (rc == 0) {
		fm_attr_forget(&m->hosts[host], path);
		fm_neg_forget(&m->hosts[host], path);
	}
	UNLOCK(m);
	return rc < 0 ? rc : fm_lost_reply(&d, kaas_sub_rmdir(m->lower, path), FM_RMDIR, 0, path, host);
}

/* excl_race: a listing by another process inside the race window misses
 * a racy create's name too (as a stat does): its create "had not landed". */
struct racy_filter {
	kaas_dirent_cb cb;
	void *arg;
	char **hidden;
	size_t n;
};

static int racy_filter_cb(void *arg, const char *name, enum kaas_file_type type)
{
	struct racy_filter *f = arg;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->hidden[i], name))
			return 0;
	return f->cb(f->arg, name, type);
}

/* The names in directory `path` that fm_racy_hidden hides from the caller
 * (called locked); returns 0 or -ENOMEM. */
static int racy_hidden_names(struct kaas_fault_model *m, const char *path, struct racy_filter *f)
{
	size_t pl = strlen(path);
	int root = pl == 0 || !strcmp(path, ".") || !strcmp(path, "/");
	for (struct fm_recent *r = m->recent; r; r = r->next) {
		const char *name = r->path;
		if (!root) {
			if (strncmp(r->path, path, pl) != 0 || r->path[pl] != '/')
				continue;
			name = r->path + pl + 1;
		}
		if (!*name || strchr(name, '/') || !fm_racy_hidden(m, r->path))
			continue;
		char **nh = realloc(f->hidden, (f->n + 1) * sizeof *nh);
		if (!nh)
			return -ENOMEM;
		f->hidden = nh;
		if (!(f->hidden[f->n] = strdup(name)))
			return -ENOMEM;
		f->n++;
	}
	return 0;
}

int kaas_fault_readdir(struct kaas_fault_model *m, int host, const char *path, kaas_dirent_cb cb,
		       void *arg)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	struct racy_filter f = {.cb = cb, .arg = arg};
	LOCK(m);
	m->hosts[host].used = 1;
	int rc = fm_apply(m, host, FM_READDIR, path, NULL);
	if (rc == 0 && fm_neg_hides(m, host, path, 1))
		rc = kaas_sub_fail(ENOENT, "faultfs: %s: missing to host %d (negative lookup cache)",
				   path, host);
	/* A listing revalidates the directory: its names' negative entries go. */
	if (rc == 0)
		fm_neg_forget_children(&m->hosts[host], path);
	if (rc == 0 && m->excl_race && !m->passthrough)
		rc = racy_hidden_names(m, path, &f);
	UNLOCK(m);
	if (rc == 0)
		rc = f.n ? kaas_sub_readdir(m->lower, path, racy_filter_cb, &f)
			 : kaas_sub_readdir(m->lower, path, cb, arg);
	for (size_t i = 0; i < f.n; i++)
		free(f.hidden[i]);
	free(f.hidden);
	return rc;
}

int kaas_fault_fsync_dir(struct kaas_fault_model *m, int host, const char *path)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	int rc = fm_apply(m, host, FM_FSYNCDIR, path, NULL);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_fsync_dir(m->lower, path);
}

int kaas_fault_statfs(struct kaas_fault_model *m, int host, const char *path,
		      struct kaas_statfs *out)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	int rc = fm_apply(m, host, FM_STATFS, path, NULL);
	UNLOCK(m);
	return rc < 0 ? rc : kaas_sub_statfs(m->lower, path, out);
}

