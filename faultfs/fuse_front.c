/* fuse_front.c — libfuse3 (high-level API) sessions over the fault model. */
#define FUSE_USE_VERSION 35
#include "faultfs/fuse_front.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

struct host_session {
	struct kaas_fault_model *m;
	int host;
	char *mnt;
	struct fuse *fuse;
	pthread_t thread;
	int mounted, running;
};

struct kaas_fuse_front {
	int n;
	struct host_session *s;
};

static struct host_session *me(void)
{
	struct fuse_context *c = fuse_get_context();
	kaas_fault_set_caller(c->pid);
	return c->private_data;
}

/* "/a/b" -> "a/b", "/" -> "" */
static const char *rel(const char *path)
{
	if (!path)
		return ""; /* an unlinked file (nullpath_ok): only handle ops get it */
	while (*path == '/')
		path++;
	return path;
}

/* An open file: the model's handle, and whether every write must be made
 * durable before it returns (O_SYNC/O_DSYNC; with direct_io the kernel
 * leaves that to us). */
struct ff_file {
	struct kaas_fault_handle *h;
	int dsync;
};

#define FF(fi) ((struct ff_file *)(uintptr_t)(fi)->fh)
#define FH(fi) (FF(fi)->h)

static int wrap(struct kaas_fault_handle *h, int flags, struct fuse_file_info *fi)
{
	struct ff_file *f = calloc(1, sizeof *f);
	if (!f) {
		kaas_fault_close(h);
		return -ENOMEM;
	}
	f->h = h;
	f->dsync = (flags & (O_SYNC | O_DSYNC)) != 0;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	return 0;
}

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->hard_remove = 1;       /* the model does its own silly-rename, in one op */
	cfg->nullpath_ok = 1;       /* handle ops on removed files still reach the model */
	cfg->direct_io = 1;         /* no page cache across opens */
	cfg->kernel_cache = 0;
	cfg->auto_cache = 0;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->use_ino = 0;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	return fuse_get_context()->private_data;
}

static void fill(const struct kaas_stat *ks, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_mode = (mode_t)(ks->mode & 07777) |
		      (ks->type == KAAS_FT_DIR ? S_IFDIR : S_IFREG);
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

static int ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct host_session *s = me();
	struct kaas_stat ks;
	int rc;
	if (fi && fi->fh) {
		rc = kaas_fault_fstat(FH(fi), &ks);
	} else {
		rc = kaas_fault_stat(s->m, s->host, rel(path), &ks);
	}
	if (rc == 0)
		fill(&ks, st);
	return rc;
}

struct dir_fill {
	void *buf;
	fuse_fill_dir_t filler;
};

static int dir_cb(void *arg, const char *name, enum kaas_file_type type)
{
	struct dir_fill *d = arg;
	struct stat st;
	memset(&st, 0, sizeof st);
	st.st_mode = type == KAAS_FT_DIR ? S_IFDIR : S_IFREG;
	return d->filler(d->buf, name, &st, 0, 0) ? 1 : 0;
}

/* With nullpath_ok, readdir and fsyncdir get no path: opendir keeps it. */
static int ff_opendir(const char *path, struct fuse_file_info *fi)
{
	me();
	char *p = strdup(rel(path));
	if (!p)
		return -ENOMEM;
	fi->fh = (uint64_t)(uintptr_t)p;
	return 0;
}

static int ff_releasedir(const char *path, struct fuse_file_info *fi)
{
	free((char *)(uintptr_t)fi->fh);
	return 0;
}

#define DIRPATH(path, fi) ((fi) && (fi)->fh ? (const char *)(uintptr_t)(fi)->fh : rel(path))

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct host_session *s = me();
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	struct dir_fill d = { buf, filler };
	int rc = kaas_fault_readdir(s->m, s->host, DIRPATH(path, fi), dir_cb, &d);
	return rc == 1 ? 0 : rc;
}

static int kflags(int flags)
{
	int k = 0;
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

static int ff_open(const char *path, struct fuse_file_info *fi)
{
	struct host_session *s = me();
	struct kaas_fault_handle *h;
	int rc = kaas_fault_open(s->m, s->host, rel(path), kflags(fi->flags), 0, &h);
	if (rc < 0)
		return rc;
	return wrap(h, fi->flags, fi);
}

static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct host_session *s = me();
	struct kaas_fault_handle *h;
	int k = kflags(fi->flags) | KAAS_O_CREAT;
	if (fi->flags & O_EXCL)
		k |= KAAS_O_EXCL;
	int rc = kaas_fault_open(s->m, s->host, rel(path), k, (uint32_t)(mode & 07777), &h);
	if (rc < 0)
		return rc;
	return wrap(h, fi->flags, fi);
}

static int ff_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	me();
	size_t done = 0;
	while (done < size) {
		ssize_t n = kaas_fault_pread(FH(fi), buf + done, size - done, (uint64_t)off + done);
		if (n < 0)
			return done ? (int)done : (int)n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int)done;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	me();
	size_t done = 0;
	while (done < size) {
		ssize_t n = kaas_fault_pwrite(FH(fi), buf + done, size - done, (uint64_t)off + done);
		if (n < 0)
			return done ? (int)done : (int)n;
		if (n == 0)
			return done ? (int)done : -EIO;
		done += (size_t)n;
	}
	if (FF(fi)->dsync) {
		int rc = kaas_fault_fsync(FH(fi));
		if (rc < 0)
			return rc;
	}
	return (int)done;
}

static int ff_flush(const char *path, struct fuse_file_info *fi)
{
	me();
	return kaas_fault_flush(FH(fi));
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
	me();
	kaas_fault_close(FH(fi));
	free(FF(fi));
	return 0;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	me();
	return kaas_fault_fsync(FH(fi));
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct host_session *s = me();
	if (fi && fi->fh)
		return kaas_fault_ftruncate(FH(fi), (uint64_t)size);
	struct kaas_fault_handle *h;
	int rc = kaas_fault_open(s->m, s->host, rel(path), KAAS_O_WRITE, 0, &h);
	if (rc < 0)
		return rc;
	rc = kaas_fault_ftruncate(h, (uint64_t)size);
	int crc = kaas_fault_close(h);
	return rc < 0 ? rc : crc;
}

static int ff_unlink(const char *path)
{
	struct host_session *s = me();
	return kaas_fault_unlink(s->m, s->host, rel(path));
}

static int ff_mkdir(const char *path, mode_t mode)
{
	struct host_session *s = me();
	return kaas_fault_mkdir(s->m, s->host, rel(path), (uint32_t)(mode & 07777));
}

static int ff_rmdir(const char *path)
{
	struct host_session *s = me();
	return kaas_fault_rmdir(s->m, s->host, rel(path));
}

static int ff_rename(const char *from, const char *to, unsigned int flags)
{
	struct host_session *s = me();
	if (flags)
		return -EINVAL; /* RENAME_NOREPLACE / EXCHANGE: not on NFS either */
	return kaas_fault_rename(s->m, s->host, rel(from), rel(to));
}

static int ff_statfs(const char *path, struct statvfs *sv)
{
	struct host_session *s = me();
	struct kaas_statfs ks;
	int rc = kaas_fault_statfs(s->m, s->host, rel(path), &ks);
	if (rc < 0)
		return rc;
	memset(sv, 0, sizeof *sv);
	sv->f_bsize = sv->f_frsize = 4096;
	sv->f_blocks = ks.total_bytes / 4096;
	sv->f_bfree = sv->f_bavail = ks.free_bytes / 4096;
	sv->f_files = ks.total_files;
	sv->f_ffree = sv->f_favail = ks.free_files;
	sv->f_namemax = 255;
	return 0;
}

static int ff_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct host_session *s = me();
	return kaas_fault_fsync_dir(s->m, s->host, DIRPATH(path, fi));
}

/* Attributes the model does not keep: accepted and ignored. */
static int ff_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return 0;
}

static int ff_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	return 0;
}

static int ff_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	return 0;
}

static const struct fuse_operations ff_ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.opendir = ff_opendir,
	.releasedir = ff_releasedir,
	.readdir = ff_readdir,
	.open = ff_open,
	.create = ff_create,
	.read = ff_read,
	.write = ff_write,
	.flush = ff_flush,
	.release = ff_release,
	.fsync = ff_fsync,
	.truncate = ff_truncate,
	.unlink = ff_unlink,
	.mkdir = ff_mkdir,
	.rmdir = ff_rmdir,
	.rename = ff_rename,
	.statfs = ff_statfs,
	.fsyncdir = ff_fsyncdir,
	.chmod = ff_chmod,
	.chown = ff_chown,
	.utimens = ff_utimens,
};

static void *session_thread(void *arg)
{
	struct host_session *s = arg;
	struct fuse_loop_config cfg = { .clone_fd = 0, .max_idle_threads = 8 };
	fuse_loop_mt(s->fuse, &cfg);
	return NULL;
}

void kaas_fuse_front_stop(struct kaas_fuse_front *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++) {
		struct host_session *s = &f->s[i];
		if (s->fuse) {
			fuse_exit(s->fuse);
			if (s->mounted)
				fuse_unmount(s->fuse);
		}
	}
	for (int i = 0; i < f->n; i++) {
		struct host_session *s = &f->s[i];
		if (s->running)
			pthread_join(s->thread, NULL);
		if (s->fuse)
			fuse_destroy(s->fuse);

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
		char fsname[64];
		snprintf(fsname, sizeof fsname, "fsname=faultfs-host%d,subtype=faultfs", i);
		char *argv[] = { "faultfs", "-o", fsname, NULL };
		struct fuse_args args = FUSE_ARGS_INIT(3, argv);
		s->fuse = fuse_new(&args, &ff_ops, sizeof ff_ops, s);
		fuse_opt_free_args(&args);
		if (!s->fuse) {
			fprintf(stderr, "faultfs: fuse_new failed for host %d\n", i);
			kaas_fuse_front_stop(f);
			return -EIO;
		}
		if (fuse_mount(s->fuse, s->mnt) != 0) {
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
