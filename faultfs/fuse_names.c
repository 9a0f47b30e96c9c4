/*
 * fuse_names.c — the FUSE ops on names and directories of faultfs's front:
 * lookup and forget (the node table), unlink, mkdir, rmdir, rename,
 * directory listings (taken whole at opendir), fsyncdir and statfs.
 */
#define FUSE_USE_VERSION 35
#include "faultfs/fuse_front_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "faultfs/fuse_nodes.h"

void kaas_ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = kaas_ff_child_path(req, s, parent, name);
	if (!p)
		return;
	struct kaas_stat ks;
	int rc = kaas_fault_stat(s->m, s->host, p, &ks);
	free(p);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		kaas_ff_reply_entry(req, s, parent, name, &ks, NULL);
}

void kaas_ff_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct host_session *s = fuse_req_userdata(req);
	kaas_ll_forget(s->nodes, ino, nlookup);
	fuse_reply_none(req);
}

void kaas_ff_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct host_session *s = fuse_req_userdata(req);
	for (size_t i = 0; i < count; i++)
		kaas_ll_forget(s->nodes, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

void kaas_ff_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = kaas_ff_child_path(req, s, parent, name);
	if (!p)
		return;
	char *silly = NULL;
	int applied = 0;
	int rc = kaas_fault_unlink_silly(s->m, s->host, p, &silly, &applied);
	free(p);
	if (applied) { /* also under a lost reply: the name is gone on the server */
		if (silly)
			kaas_ll_move(s->nodes, parent, name, parent, kaas_path_basename(silly));
		else
			kaas_ll_remove(s->nodes, parent, name);
	}
	free(silly);
	fuse_reply_err(req, -rc);
}

void kaas_ff_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = kaas_ff_child_path(req, s, parent, name);
	if (!p)
		return;
	struct kaas_stat ks;
	int rc = kaas_fault_mkdir(s->m, s->host, p, (uint32_t)(mode & 07777));
	if (rc == 0)
		rc = kaas_fault_stat(s->m, s->host, p, &ks);
	free(p);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		kaas_ff_reply_entry(req, s, parent, name, &ks, NULL);
}

void kaas_ff_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = kaas_ff_child_path(req, s, parent, name);
	if (!p)
		return;
	int rc = kaas_fault_rmdir(s->m, s->host, p);
	free(p);
	if (rc == 0)
		kaas_ll_remove(s->nodes, parent, name);
	fuse_reply_err(req, -rc);
}

void kaas_ff_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct host_session *s = kaas_ff_me(req);
	if (flags) {
		fuse_reply_err(req, EINVAL); /* RENAME_NOREPLACE / EXCHANGE: not on NFS either */
		return;
	}
	char *from = kaas_ll_child_path(s->nodes, parent, name);
	char *to = kaas_ll_child_path(s->nodes, newparent, newname);
	char *silly = NULL;
	int applied = 0;
	int rc = from && to ? kaas_fault_rename_silly(s->m, s->host, from, to, &silly, &applied)
			    : -ESTALE;
	if (applied) { /* also under a lost reply: the server moved the name */
		if (silly) /* the replaced target lives on under its .nfs name */
			kaas_ll_move(s->nodes, newparent, newname, newparent, kaas_path_basename(silly));
		kaas_ll_move(s->nodes, parent, name, newparent, newname);
	}
	free(silly);
	free(from);
	free(to);
	fuse_reply_err(req, -rc);
}

static int collect(void *arg, const char *name, enum kaas_file_type type)
{
	struct ff_dir *d = arg;
	char **names = realloc(d->names, (d->n + 1) * sizeof *names);
	if (!names)
		return -ENOMEM;
	d->names = names;
	enum kaas_file_type *types = realloc(d->types, (d->n + 1) * sizeof *types);
	if (!types)
		return -ENOMEM;
	d->types = types;
	if (!(names[d->n] = strdup(name)))
		return -ENOMEM;
	types[d->n++] = type;
	return 0;
}

static void dir_free(struct ff_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
	free(d->types);
	free(d->path);
	free(d);
}

void kaas_ff_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	struct ff_dir *d = calloc(1, sizeof *d);
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	int rc = kaas_ll_path(s->nodes, ino, &d->path);
	if (rc == 0)
		rc = kaas_fault_readdir(s->m, s->host, d->path, collect, d);
	if (rc < 0) {
		dir_free(d);
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0)
		dir_free(d);
}

void kaas_ff_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	kaas_ff_me(req);
	struct ff_dir *d = FD(fi);
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	/* offsets: 0 ".", 1 "..", 2.. the listing */
	for (size_t i = (size_t)off; i < d->n + 2; i++) {
		struct stat st;
		memset(&st, 0, sizeof st);
		st.st_ino = (ino_t)(i + 1); /* readdir(3) skips entries with d_ino 0 */
		const char *name;
		if (i < 2) {
			name = i == 0 ? "." : "..";
			st.st_mode = S_IFDIR;
		} else {
			name = d->names[i - 2];
			st.st_mode = d->types[i - 2] == KAAS_FT_DIR ? S_IFDIR : S_IFREG;
		}
		size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)(i + 1));
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

void kaas_ff_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	dir_free(FD(fi));
	fuse_reply_err(req, 0);
}

void kaas_ff_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	fuse_reply_err(req, -kaas_fault_fsync_dir(s->m, s->host, FD(fi)->path));
}

void kaas_ff_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = NULL;
	int rc = kaas_ll_path(s->nodes, ino, &p);
	struct kaas_statfs ks;
	if (rc == 0)
		rc = kaas_fault_statfs(s->m, s->host, p, &ks);
	free(p);
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	struct statvfs sv;
	memset(&sv, 0, sizeof sv);
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = ks.total_bytes / 4096;
	sv.f_bfree = sv.f_bavail = ks.free_bytes / 4096;
	sv.f_files = ks.total_files;
	sv.f_ffree = sv.f_favail = ks.free_files;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}
