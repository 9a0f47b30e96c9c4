/*
 * fuse_front.c — libfuse3 low-level sessions over the fault model, one per
 * simulated host.  The session keeps an inode table (fuse_nodes.c) to turn
 * the kernel's node ids into the model's paths; the model does everything
 * else (silly-rename, staleness, faults).  Every reply carries zero entry
 * and attribute timeouts and every open is direct_io, so the kernel caches
 * nothing the model should decide.
 */
#define FUSE_USE_VERSION 35
#include "faultfs/fuse_front.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "faultfs/fuse_nodes.h"

struct host_session {
	struct kaas_fault_model *m;
	int host;
	char *mnt;
	struct fuse_session *se;
	struct kaas_ll_nodes *nodes;
	pthread_t thread;
	int mounted, running;
};

struct kaas_fuse_front {
	int n;
	struct host_session *s;
};

/* An open file: the model's handle, its node, and whether every write must
 * be durable before it returns (O_SYNC/O_DSYNC: with direct_io the kernel
 * leaves that to the daemon). */
struct ff_file {
	struct kaas_fault_handle *h;
	uint64_t node;
	int dsync;
};

/* An open directory: its listing, taken at opendir. */
struct ff_dir {
	char *path;
	size_t n;
	char **names;
	enum kaas_file_type *types;
};

#define FF(fi) ((struct ff_file *)(uintptr_t)(fi)->fh)
#define FD(fi) ((struct ff_dir *)(uintptr_t)(fi)->fh)

static struct host_session *me(fuse_req_t req)
{
	kaas_fault_set_caller(fuse_req_ctx(req)->pid);
	return fuse_req_userdata(req);
}

static void fill(const struct kaas_stat *ks, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = (ino_t)ks->ino;
	st->st_mode = (mode_t)(ks->mode & 07777) | (ks->type == KAAS_FT_DIR ? S_IFDIR : S_IFREG);
	st->st_nlink = ks->nlink ? ks->nlink : 1;
	st->st_size = (off_t)ks->size;
	st->st_blocks = (blkcnt_t)((ks->size + 511) / 512);
	st->st_blksize = 4096;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_mtim.tv_sec = ks->mtime_ns / 1000000000;
	st->st_mtim.tv_nsec = ks->mtime_ns % 1000000000;
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

static void ff_init(void *userdata, struct fuse_conn_info *conn)
{
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

/* Reply with a fresh entry for `name` in `parent` whose attributes are ks. */
static void reply_entry(fuse_req_t req, struct host_session *s, fuse_ino_t parent, const char *name,
			const struct kaas_stat *ks, struct fuse_file_info *create_fi)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof e);
	e.ino = kaas_ll_ref(s->nodes, parent, name);
	if (!e.ino) {
		if (create_fi) {
			struct ff_file *f = FF(create_fi);
			kaas_fault_close(f->h);
			free(f);
		}
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fill(ks, &e.attr);
	e.attr_timeout = 0;
	e.entry_timeout = 0;
	if (create_fi) {
		FF(create_fi)->node = e.ino;
		kaas_ll_attach(s->nodes, e.ino, FF(create_fi));
		if (fuse_reply_create(req, &e, create_fi) != 0) {
			/* the opener is gone: the kernel will not release it */
			kaas_ll_detach(s->nodes, e.ino, FF(create_fi));
			kaas_fault_close(FF(create_fi)->h);
			free(FF(create_fi));
			kaas_ll_forget(s->nodes, e.ino, 1);
		}
	} else if (fuse_reply_entry(req, &e) != 0) {
		kaas_ll_forget(s->nodes, e.ino, 1);
	}
}

static void ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct host_session *s = me(req);
	char *p = kaas_ll_child_path(s->nodes, parent, name);
	if (!p) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	struct kaas_stat ks;
	int rc = kaas_fault_stat(s->m, s->host, p, &ks);
	free(p);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		reply_entry(req, s, parent, name, &ks, NULL);
}

static void ff_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct host_session *s = fuse_req_userdata(req);
	kaas_ll_forget(s->nodes, ino, nlookup);
	fuse_reply_none(req);
}

static void ff_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct host_session *s = fuse_req_userdata(req);
	for (size_t i = 0; i < count; i++)
		kaas_ll_forget(s->nodes, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static int fstat_handle(void *handle, void *arg)
{
	return kaas_fault_fstat(((struct ff_file *)handle)->h, arg);
}

/* Attributes of a node: through an open handle when this host has one (a
 * silly-renamed file stays fstat-able), else by name. */
static int node_stat(struct host_session *s, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct kaas_stat *ks)
{
	if (fi && fi->fh)
		return kaas_fault_fstat(FF(fi)->h, ks);
	int rc = kaas_ll_with_handle(s->nodes, ino, fstat_handle, ks);
	if (rc != -ENOENT)
		return rc;
	char *p = NULL;
	rc = kaas_ll_path(s->nodes, ino, &p);
	if (rc == 0)
		rc = kaas_fault_stat(s->m, s->host, p, ks);
	free(p);
	return rc;
}

static void ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
	struct kaas_stat ks;
	int rc = node_stat(s, ino, fi, &ks);
	if (rc < 0) {
		fuse_reply_err(req, rc == -ENOENT && ino != KAAS_LL_ROOT ? ESTALE : -rc);
		return;
	}
	struct stat st;
	fill(&ks, &st);
	fuse_reply_attr(req, &st, 0);
}

static int truncate_handle(void *handle, void *arg)
{
	return kaas_fault_ftruncate(((struct ff_file *)handle)->h, *(uint64_t *)arg);
}

/* Truncate a node by name; a removed (silly-renamed) node through an open
 * handle of this host. */
static int truncate_by_name(struct host_session *s, fuse_ino_t ino, uint64_t size)
{
	char *p = NULL;
	int rc = kaas_ll_path(s->nodes, ino, &p);
	if (rc == -ESTALE) {
		free(p);
		return kaas_ll_with_handle(s->nodes, ino, truncate_handle, &size);
	}
	struct kaas_fault_handle *h = NULL;
	if (rc == 0)
		rc = kaas_fault_open(s->m, s->host, p, KAAS_O_WRITE, 0, &h);
	free(p);
	if (rc < 0)
		return rc;
	rc = kaas_fault_ftruncate(h, size);
	int crc = kaas_fault_close(h);
	return rc < 0 ? rc : crc;
}

static void ff_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
	int rc = 0;
	if (to_set & FUSE_SET_ATTR_SIZE) {
		uint64_t size = (uint64_t)attr->st_size;
		if (fi && fi->fh) {
			rc = kaas_fault_ftruncate(FF(fi)->h, size);
		} else {
			rc = truncate_by_name(s, ino, size);
		}
	}
	/* mode, owner and times are not kept by the model: accepted, ignored */
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	ff_getattr(req, ino, fi);
}

static int kflags(int flags)
{
	int k;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		k = KAAS_O_READ;
		break;
	case O_WRONLY:
		k = KAAS_O_WRITE;
		break;
	default:
		k = KAAS_O_READ | KAAS_O_WRITE;
	}
	if (flags & O_TRUNC)
		k |= KAAS_O_TRUNC;
	return k;
}

static struct ff_file *wrap(struct kaas_fault_handle *h, int flags, struct fuse_file_info *fi)
{
	struct ff_file *f = calloc(1, sizeof *f);
	if (!f) {
		kaas_fault_close(h);
		return NULL;
	}
	f->h = h;
	f->dsync = (flags & (O_SYNC | O_DSYNC)) != 0;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return f;
}

static void ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
	char *p = NULL;
	int rc = kaas_ll_path(s->nodes, ino, &p);
	/* a node whose name was replaced: open by that name again, as an NFS
	 * client re-looks-up after ESTALE */
	if (rc == -ESTALE && p)
		rc = 0;
	struct kaas_fault_handle *h = NULL;
	if (rc == 0)
		rc = kaas_fault_open(s->m, s->host, p, kflags(fi->flags), 0, &h);
	free(p);
	if (rc < 0) {
		/* the node the kernel looked up is gone: a stale handle (the
		 * kernel then looks the name up again) */
		fuse_reply_err(req, rc == -ENOENT ? ESTALE : -rc);
		return;
	}
	struct ff_file *f = wrap(h, fi->flags, fi);
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->node = ino;
	kaas_ll_attach(s->nodes, ino, f);
	if (fuse_reply_open(req, fi) != 0) {
		kaas_ll_detach(s->nodes, ino, f);
		kaas_fault_close(h);
		free(f);
	}
}

static void ff_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
	char *p = kaas_ll_child_path(s->nodes, parent, name);
	if (!p) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	int k = kflags(fi->flags) | KAAS_O_CREAT;
	if (fi->flags & O_EXCL)
		k |= KAAS_O_EXCL;
	struct kaas_fault_handle *h = NULL;
	int rc = kaas_fault_open(s->m, s->host, p, k, (uint32_t)(mode & 07777), &h);
	free(p);
	struct kaas_stat ks;
	if (rc == 0 && (rc = kaas_fault_fstat(h, &ks)) < 0)
		kaas_fault_close(h);
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (!wrap(h, fi->flags, fi)) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	reply_entry(req, s, parent, name, &ks, fi);
}

static void ff_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	me(req);
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t done = 0;
	int err = 0;
	while (done < size) {
		ssize_t n = kaas_fault_pread(FF(fi)->h, buf + done, size - done, (uint64_t)off + done);
		if (n < 0) {
			err = (int)-n;
			break;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	if (err && !done)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, done);
	free(buf);
}

static void ff_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	me(req);
	size_t done = 0;
	int err = 0;
	while (done < size) {
		ssize_t n = kaas_fault_pwrite(FF(fi)->h, buf + done, size - done, (uint64_t)off + done);
		if (n <= 0) {
			err = n < 0 ? (int)-n : EIO;
			break;
		}
		done += (size_t)n;
	}
	if (!err && FF(fi)->dsync) {
		int rc = kaas_fault_fsync(FF(fi)->h);
		if (rc < 0)
			err = -rc;
	}
	if (err && (!done || FF(fi)->dsync))
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, done);
}

static void ff_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	me(req);
	fuse_reply_err(req, -kaas_fault_flush(FF(fi)->h));
}

static void ff_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
	struct ff_file *f = FF(fi);
	kaas_ll_detach(s->nodes, f->node, f);
	kaas_fault_close(f->h);
	free(f);
	fuse_reply_err(req, 0);
}

static void ff_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	me(req);
	fuse_reply_err(req, -kaas_fault_fsync(FF(fi)->h));
}

static void ff_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct host_session *s = me(req);
	char *p = kaas_ll_child_path(s->nodes, parent, name);
	if (!p) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	char *silly = NULL;
	int rc = kaas_fault_unlink_silly(s->m, s->host, p, &silly);
	free(p);
	if (rc == 0) {
		if (silly)
			kaas_ll_move(s->nodes, parent, name, parent, kaas_path_basename(silly));
		else
			kaas_ll_remove(s->nodes, parent, name);
	}
	free(silly);
	fuse_reply_err(req, -rc);
}

static void ff_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct host_session *s = me(req);
	char *p = kaas_ll_child_path(s->nodes, parent, name);
	if (!p) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	struct kaas_stat ks;
	int rc = kaas_fault_mkdir(s->m, s->host, p, (uint32_t)(mode & 07777));
	if (rc == 0)
		rc = kaas_fault_stat(s->m, s->host, p, &ks);
	free(p);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		reply_entry(req, s, parent, name, &ks, NULL);
}

static void ff_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct host_session *s = me(req);
	char *p = kaas_ll_child_path(s->nodes, parent, name);
	if (!p) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	int rc = kaas_fault_rmdir(s->m, s->host, p);
	free(p);
	if (rc == 0)
		kaas_ll_remove(s->nodes, parent, name);
	fuse_reply_err(req, -rc);
}

static void ff_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct host_session *s = me(req);
	if (flags) {
		fuse_reply_err(req, EINVAL); /* RENAME_NOREPLACE / EXCHANGE: not on NFS either */
		return;
	}
	char *from = kaas_ll_child_path(s->nodes, parent, name);
	char *to = kaas_ll_child_path(s->nodes, newparent, newname);
	char *silly = NULL;
	int rc = from && to ? kaas_fault_rename_silly(s->m, s->host, from, to, &silly) : -ESTALE;
	if (rc == 0) {
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

static void ff_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
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

static void ff_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	me(req);
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

static void ff_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	dir_free(FD(fi));
	fuse_reply_err(req, 0);
}

static void ff_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct host_session *s = me(req);
	fuse_reply_err(req, -kaas_fault_fsync_dir(s->m, s->host, FD(fi)->path));
}

static void ff_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct host_session *s = me(req);
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

static const struct fuse_lowlevel_ops ff_ops = {
	.init = ff_init,
	.lookup = ff_lookup,
	.forget = ff_forget,
	.forget_multi = ff_forget_multi,
	.getattr = ff_getattr,
	.setattr = ff_setattr,
	.open = ff_open,
	.create = ff_create,
	.read = ff_read,
	.write = ff_write,
	.flush = ff_flush,
	.release = ff_release,
	.fsync = ff_fsync,
	.unlink = ff_unlink,
	.mkdir = ff_mkdir,
	.rmdir = ff_rmdir,
	.rename = ff_rename,
	.opendir = ff_opendir,
	.readdir = ff_readdir,
	.releasedir = ff_releasedir,
	.fsyncdir = ff_fsyncdir,
	.statfs = ff_statfs,
};

static void *session_thread(void *arg)
{
	struct host_session *s = arg;
	struct fuse_loop_config cfg = { .clone_fd = 0, .max_idle_threads = 8 };
	fuse_session_loop_mt(s->se, &cfg);
	return NULL;
}

void kaas_fuse_front_stop(struct kaas_fuse_front *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++) {
		struct host_session *s = &f->s[i];
		if (s->se) {
			fuse_session_exit(s->se);
			if (s->mounted)
				fuse_session_unmount(s->se); /* wakes the loop's readers */
		}
	}
	for (int i = 0; i < f->n; i++) {
		struct host_session *s = &f->s[i];
		if (s->running)
			pthread_join(s->thread, NULL);
		if (s->se)
			fuse_session_destroy(s->se);
		kaas_ll_nodes_free(s->nodes);
	}
	free(f->s);
	free(f);
}

int kaas_fuse_front_start(struct kaas_fault_model *m, int nhosts, char **mountpoints,
			  struct kaas_fuse_front **out)
{
	*out = NULL;
	struct kaas_fuse_front *f = calloc(1, sizeof *f);
	if (!f || !(f->s = calloc((size_t)nhosts, sizeof *f->s))) {
		free(f);
		return -ENOMEM;
	}
	f->n = nhosts;
	for (int i = 0; i < nhosts; i++) {
		struct host_session *s = &f->s[i];
		s->m = m;
		s->host = i;
		s->mnt = mountpoints[i];
		s->nodes = kaas_ll_nodes_new();
		if (!s->nodes) {
			kaas_fuse_front_stop(f);
			return -ENOMEM;
		}
		char fsname[64];
		snprintf(fsname, sizeof fsname, "fsname=faultfs-host%d,subtype=faultfs", i);
		char *argv[] = { "faultfs", "-o", fsname, NULL };
		struct fuse_args args = FUSE_ARGS_INIT(3, argv);
		s->se = fuse_session_new(&args, &ff_ops, sizeof ff_ops, s);
		fuse_opt_free_args(&args);
		if (!s->se) {
			fprintf(stderr, "faultfs: fuse_session_new failed for host %d\n", i);
			kaas_fuse_front_stop(f);
			return -EIO;
		}
		if (fuse_session_mount(s->se, s->mnt) != 0) {
			fprintf(stderr, "faultfs: cannot mount host %d at %s\n", i, s->mnt);
			kaas_fuse_front_stop(f);
			return -EIO;
		}
		s->mounted = 1;
		if (pthread_create(&s->thread, NULL, session_thread, s) != 0) {
			kaas_fuse_front_stop(f);
			return -EAGAIN;
		}
		s->running = 1;
	}
	*out = f;
	return 0;
}
