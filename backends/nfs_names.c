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

static int call_stat(struct nfs_context *nfs, const char *ap, void *st)
{
	return nfs_stat64(nfs, ap, st);
}

int kaas_nfs_op_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	struct nfs_stat_64 n;
	int r = kaas_nfs_by_name(S(sub), path, "stat", 1, call_stat, NULL, &n);
	if (r == 0)
		kaas_nfs_fill_stat(&n, st);
	return r;
}

struct rename_args {
	const char *from, *to;
	char *ato; /* "/" + to */
};

static int call_rename(struct nfs_context *nfs, const char *afrom, void *arg)
{
	return nfs_rename(nfs, afrom, ((struct rename_args *)arg)->ato);
}

static int rename_failed(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, void *arg)
{
	struct rename_args *a = arg;
	const char *msg = nfs_get_error(c->nfs);
	int e = kaas_nfs_map_err(rc, msg);
	return kaas_sub_fail(e, "rename %s/%s -> %s: %s", s->root, a->from, a->to,
			     msg && *msg ? msg : strerror(e));
}

int kaas_nfs_op_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	struct rename_args a = {from, to, kaas_nfs_abspath(to)};
	if (!a.ato)
		return -ENOMEM;
	int r = kaas_nfs_by_name(S(sub), from, "rename", 0, call_rename, rename_failed, &a);
	free(a.ato);
	return r;
}

static int call_mkdir(struct nfs_context *nfs, const char *ap, void *mode)
{
	return nfs_mkdir2(nfs, ap, *(int *)mode);
}

int kaas_nfs_op_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	int m = (int)(mode ? mode : 0755);
	return kaas_nfs_by_name(S(sub), path, "mkdir", 0, call_mkdir, NULL, &m);
}

static int call_rmdir(struct nfs_context *nfs, const char *ap, void *unused)
{
	return nfs_rmdir(nfs, ap);
}

/* NFS answers NFS3ERR_NOTEMPTY, which libnfs maps to EEXIST: ENOTEMPTY. */
static int rmdir_failed(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, void *path)
{
	const char *msg = nfs_get_error(c->nfs);
	int e = kaas_nfs_map_err(rc, msg);
	if (e == EEXIST)
		e = ENOTEMPTY;
	return kaas_sub_fail(e, "rmdir %s/%s: %s", s->root, (const char *)path, msg && *msg ? msg : strerror(e));
}

int kaas_nfs_op_rmdir(struct kaas_substrate *sub, const char *path)
{
	return kaas_nfs_by_name(S(sub), path, "rmdir", 0, call_rmdir, rmdir_failed, (void *)path);
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
	char *ap;
	struct kaas_nfs_conn *c;
	int err = kaas_nfs_borrow_for(s, path, &ap, &c);
	if (err < 0)
		return err;
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

static int call_statvfs(struct nfs_context *nfs, const char *ap, void *v)
{
	return nfs_statvfs64(nfs, ap, v);
}

int kaas_nfs_op_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	struct nfs_statvfs_64 v;
	int r = kaas_nfs_by_name(S(sub), path, "statfs", 1, call_statvfs, NULL, &v);
	if (r == 0) {
		out->total_bytes = v.f_blocks * v.f_frsize;
		out->free_bytes = v.f_bavail * v.f_frsize;
		out->total_files = v.f_files;
		out->free_files = v.f_favail;
	}
	return r;
}
