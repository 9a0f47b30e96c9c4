/*
 * nfs_names.c — the namespace ops of the libnfs backend: stat, rename,
 * mkdir, rmdir, readdir, directory fsync and statfs, each re-sent by the
 * rules of kaas_nfs_again.  (unlink, with silly rename, is nfs_unlink.c.)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "backends/nfs_rpc.h"
#include "backends/nfs_sub.h"

int kaas_nfs_op_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	struct nfs_stat_64 n;
	int r = 0;
	do {
		int err_ = 0;
		struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err_);
		if (!c) {
			r = err_;
			break;
		}
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_stat64(c->nfs, ap, &n);
			if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 1))
				break;
		}
		r = rc < 0 ? kaas_nfs_fail(s, c, rc, "stat", path) : 0;
		pthread_mutex_unlock(&c->lock);
	} while (0);
	free(ap);
	if (r == 0)
		kaas_nfs_fill_stat(&n, st);
	return r;
}

int kaas_nfs_op_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	struct kaas_nfs_sub *s = S(sub);
	char *af = kaas_nfs_abspath(from), *at = kaas_nfs_abspath(to);
	int r = 0;
	if (!af || !at) {
		r = -ENOMEM;
	} else {
		int err = 0;
		struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
		if (!c) {
			r = err;
		} else {
			int rc;
			for (int attempt = 0;; attempt++) {
				rc = nfs_rename(c->nfs, af, at);
				if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 0))
					break;
			}
			if (rc < 0) {
				const char *msg = nfs_get_error(c->nfs);
				int e = kaas_nfs_map_err(rc, msg);
				r = kaas_sub_fail(e, "rename %s/%s -> %s: %s", s->root, from, to,
						  msg && *msg ? msg : strerror(e));
			}
			pthread_mutex_unlock(&c->lock);
		}
	}
	free(af);
	free(at);
	return r;
}

int kaas_nfs_op_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int r = 0;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		r = err;
	} else {
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_mkdir2(c->nfs, ap, (int)(mode ? mode : 0755));
			if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 0))
				break;
		}
		if (rc < 0)
			r = kaas_nfs_fail(s, c, rc, "mkdir", path);
		pthread_mutex_unlock(&c->lock);
	}
	free(ap);
	return r;
}

int kaas_nfs_op_rmdir(struct kaas_substrate *sub, const char *path)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int r = 0;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		r = err;
	} else {
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_rmdir(c->nfs, ap);
			if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 0))
				break;
		}
		if (rc < 0) {
			const char *msg = nfs_get_error(c->nfs);
			int e = kaas_nfs_map_err(rc, msg);
			if (e == EEXIST)
				e = ENOTEMPTY;
			r = kaas_sub_fail(e, "rmdir %s/%s: %s", s->root, path, msg && *msg ? msg : strerror(e));
		}
		pthread_mutex_unlock(&c->lock);
	}
	free(ap);
	return r;
}

static enum kaas_file_type dirent_type(const struct nfsdirent *d)
{
	if (S_ISDIR(d->mode) || d->type == NF3DIR)
		return KAAS_FT_DIR;
	if (S_ISREG(d->mode) || d->type == NF3REG)
		return KAAS_FT_FILE;
	return KAAS_FT_OTHER;
}

int kaas_nfs_op_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		free(ap);
		return err;
	}
	struct nfsdir *d = NULL;
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = nfs_opendir(c->nfs, ap, &d);
		if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 1))
				break;
	}
	free(ap);
	if (rc < 0) {
		int r = kaas_nfs_fail(s, c, rc, "readdir", path);
		pthread_mutex_unlock(&c->lock);
		return r;
	}
	/* The whole listing is in memory now: hand it over without holding
	 * the context, so a callback may use the substrate. */
	struct nfsdirent *e;
	size_t n = 0;
	while ((e = nfs_readdir(c->nfs, d)) != NULL)
		n++;
	char **names = calloc(n ? n : 1, sizeof *names);
	enum kaas_file_type *types = calloc(n ? n : 1, sizeof *types);
	size_t k = 0;
	int r = 0;
	if (!names || !types) {
		r = kaas_sub_fail(ENOMEM, "readdir %s/%s: out of memory", s->root, path);
	} else {
		nfs_rewinddir(c->nfs, d);
		while (k < n && (e = nfs_readdir(c->nfs, d)) != NULL) {
			if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
				continue;
			names[k] = strdup(e->name);
			if (!names[k]) {
				r = kaas_sub_fail(ENOMEM, "readdir %s/%s: out of memory", s->root, path);
				break;
			}
			types[k++] = dirent_type(e);
		}
	}
	nfs_closedir(c->nfs, d);
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; r == 0 && i < k; i++)
		r = cb(arg, names[i], types[i]);
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	free(names);
	free(types);
	return r;
}

int kaas_nfs_op_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	/* NFS metadata ops (CREATE, RENAME, REMOVE, MKDIR) are synchronous on
	 * the server: nothing to flush.  Report a missing directory though. */
	struct kaas_stat st;
	int rc = kaas_nfs_op_stat(sub, path, &st);
	if (rc < 0)
		return rc;
	if (st.type != KAAS_FT_DIR)
		return kaas_sub_fail(ENOTDIR, "fsync dir %s/%s: not a directory", S(sub)->root, path);
	return 0;
}

int kaas_nfs_op_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	struct nfs_statvfs_64 v;
	int r = 0;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		r = err;
	} else {
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_statvfs64(c->nfs, ap, &v);
			if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 1))
				break;
		}
		if (rc < 0)
			r = kaas_nfs_fail(s, c, rc, "statfs", path);
		pthread_mutex_unlock(&c->lock);
	}
	free(ap);
	if (r == 0) {
		out->total_bytes = v.f_blocks * v.f_frsize;
		out->free_bytes = v.f_bavail * v.f_frsize;
		out->total_files = v.f_files;
		out->free_files = v.f_favail;
	}
	return r;
}
