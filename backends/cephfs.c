/* cephfs.c — the substrate over libcephfs; see cephfs.h for the contract. */
/* libcephfs.h refuses to compile without 64-bit file offsets (its readdir
 * results would be corrupted): before any header. */
#define _FILE_OFFSET_BITS 64
#include "backends/cephfs.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cephfs/libcephfs.h>

#include "backends/cephfs_url.h"
#include "backends/posix.h"

struct cephfs_sub {
	struct kaas_substrate base;
	struct ceph_mount_info *cm;
	char *display;          /* the URL without its keyring, for messages */
	/* Set by the first op answered -ESHUTDOWN (this client was evicted and
	 * blocklisted): from then on every op fails with it, so no later fsync
	 * through another handle can report success for writes the cluster
	 * refused, and destroy aborts the session instead of flushing. */
	atomic_int evicted;
};

struct cephfs_file {
	struct kaas_file base;
	int fd;
};

#define S(sub) ((struct cephfs_sub *)(sub))
#define F(f) ((struct cephfs_file *)(f))
/* "" (the root) is "." relative to the mount's root, libcephfs's cwd. */
#define REL(path) ((path)[0] ? (path) : ".")

/* libcephfs answers -EACCES, not -ENOTDIR, when a component of the path is
 * a file ("f/x" where f is a file): -ENOTDIR if one is, else rc. */
static int enotdir(struct kaas_substrate *sub, const char *path, int rc)
{
	if (rc != -EACCES || !strchr(path, '/'))
		return rc;
	char *p = strdup(path);
	if (!p)
		return rc;
	for (char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		struct ceph_statx x;
		int r = ceph_statx(S(sub)->cm, p, &x, CEPH_STATX_MODE, AT_SYMLINK_NOFOLLOW);
		*slash = '/';
		if (r < 0)
			break;
		if (!S_ISDIR(x.stx_mode)) {
			rc = -ENOTDIR;
			break;
		}
	}
	free(p);
	return rc;
}

/* Record the failure rc (< 0) of `what` on path and return it. */
static int fail(int rc, const char *what, struct kaas_substrate *sub, const char *path)
{
	assert(rc < 0);
	rc = enotdir(sub, path, rc);
	if (rc == -ESHUTDOWN)
		atomic_store(&S(sub)->evicted, 1);
	return kaas_sub_fail(-rc, "%s %s/%s: %s%s", what, S(sub)->display, path, strerror(-rc),
			     rc == -ESHUTDOWN ? " (this client was evicted by the MDS)" : "");
}

/* -ESHUTDOWN with a detail if this client was evicted, else 0. */
static int gone(struct kaas_substrate *sub, const char *what, const char *path)
{
	if (!atomic_load(&S(sub)->evicted))
		return 0;
	return kaas_sub_fail(ESHUTDOWN, "%s %s/%s: this client was evicted by the MDS earlier", what,
			     S(sub)->display, path);
}

static void cephfs_destroy(struct kaas_substrate *sub)
{
	/* An evicted client cannot flush or close its session cleanly (the
	 * OSDs refuse it): drop it; otherwise unmount (flushes, ends the
	 * session, so the MDS need not time it out). */
	if (atomic_load(&S(sub)->evicted) || ceph_unmount(S(sub)->cm) < 0)
		ceph_abort_conn(S(sub)->cm);
	ceph_release(S(sub)->cm);
	free(S(sub)->display);
	free(sub);
}

static int cephfs_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		       struct kaas_file *f)
{
	int rc = gone(sub, "open", path);
	if (rc < 0)
		return rc;
	int fd = ceph_open(S(sub)->cm, REL(path), kaas_posix_open_flags(flags), (mode_t)(mode ? mode : 0644));
	if (fd < 0)
		return fail(fd, "open", sub, path);
	if (!(flags & KAAS_O_DIRECTORY)) {
		struct ceph_statx stx;
		if (ceph_fstatx(S(sub)->cm, fd, &stx, CEPH_STATX_MODE, AT_STATX_DONT_SYNC) == 0 &&
		    S_ISDIR(stx.stx_mode)) {
			ceph_close(S(sub)->cm, fd);
			return fail(-EISDIR, "open", sub, path);
		}
	}
	F(f)->fd = fd;
	return 0;
}

static int cephfs_close(struct kaas_file *f)
{
	int rc = ceph_close(S(f->sub)->cm, F(f)->fd);
	return rc < 0 ? fail(rc, "close", f->sub, f->path) : 0;
}

static ssize_t cephfs_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	int rc = gone(f->sub, "read", f->path);
	if (rc < 0)
		return rc;
	if (off > INT64_MAX)
		return fail(-EINVAL, "read", f->sub, f->path);
	if (len > KAAS_CEPHFS_MAX_IO)
		len = KAAS_CEPHFS_MAX_IO;
	int n = ceph_read(S(f->sub)->cm, F(f)->fd, buf, (int64_t)len, (int64_t)off);
	return n < 0 ? fail(n, "read", f->sub, f->path) : n;
}

static ssize_t cephfs_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	int rc = gone(f->sub, "write", f->path);
	if (rc < 0)
		return rc;
	if (off > INT64_MAX)
		return fail(-EINVAL, "write", f->sub, f->path);
	if (len > KAAS_CEPHFS_MAX_IO)
		len = KAAS_CEPHFS_MAX_IO;
	int n = ceph_write(S(f->sub)->cm, F(f)->fd, buf, (int64_t)len, (int64_t)off);
	return n < 0 ? fail(n, "write", f->sub, f->path) : n;
}

static ssize_t cephfs_pwritev(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off)
{
	int rc = gone(f->sub, "write", f->path);
	if (rc < 0)
		return rc;
	if (off > INT64_MAX)
		return fail(-EINVAL, "write", f->sub, f->path);
	/* Keep the total within an int: fewer buffers, the caller loops. */
	size_t total = 0;
	int n = 0;
	while (n < iovcnt && total + iov[n].iov_len <= KAAS_CEPHFS_MAX_IO)
		total += iov[n++].iov_len;
	if (n == 0) /* the first buffer alone is over the limit */
		return cephfs_pwrite(f, iov[0].iov_base, iov[0].iov_len, off);
	int w = ceph_pwritev(S(f->sub)->cm, F(f)->fd, iov, n, (int64_t)off);
	return w < 0 ? fail(w, "write", f->sub, f->path) : w;
}

static int cephfs_fsync(struct kaas_file *f)
{
	int rc = gone(f->sub, "fsync", f->path);
	if (rc < 0)
		return rc;
	rc = ceph_fsync(S(f->sub)->cm, F(f)->fd, 0);
	if (rc < 0)
		return fail(rc, "fsync", f->sub, f->path);
	/* Evicted by another thread's op meanwhile: this fsync may have
	 * "succeeded" on writes the cluster refused (see cephfs.h). */
	return gone(f->sub, "fsync", f->path);
}

static int cephfs_ftruncate(struct kaas_file *f, uint64_t size)
{
	int rc = gone(f->sub, "truncate", f->path);
	if (rc < 0)
		return rc;
	if (size > INT64_MAX)
		return fail(-EINVAL, "truncate", f->sub, f->path);
	rc = ceph_ftruncate(S(f->sub)->cm, F(f)->fd, (int64_t)size);
	return rc < 0 ? fail(rc, "truncate", f->sub, f->path) : 0;
}

static void fill_stat(const struct ceph_statx *x, struct kaas_stat *st)
{
	st->size = x->stx_size;
	st->mtime_ns = (int64_t)x->stx_mtime.tv_sec * 1000000000 + x->stx_mtime.tv_nsec;
	st->ino = x->stx_ino;
	st->mode = (uint32_t)(x->stx_mode & 07777);
	st->nlink = x->stx_nlink;
	st->type = S_ISDIR(x->stx_mode) ? KAAS_FT_DIR : S_ISREG(x->stx_mode) ? KAAS_FT_FILE : KAAS_FT_OTHER;
}

#define WANT (CEPH_STATX_MODE | CEPH_STATX_NLINK | CEPH_STATX_INO | CEPH_STATX_SIZE | CEPH_STATX_MTIME)

static int cephfs_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	int rc = gone(f->sub, "fstat", f->path);
	if (rc < 0)
		return rc;
	struct ceph_statx x;
	rc = ceph_fstatx(S(f->sub)->cm, F(f)->fd, &x, WANT, 0);
	if (rc < 0)
		return fail(rc, "fstat", f->sub, f->path);
	fill_stat(&x, st);
	return 0;
}

static int cephfs_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	int rc = gone(sub, "stat", path);
	if (rc < 0)
		return rc;
	struct ceph_statx x;
	rc = ceph_statx(S(sub)->cm, REL(path), &x, WANT, AT_SYMLINK_NOFOLLOW);
	if (rc < 0)
		return fail(rc, "stat", sub, path);
	fill_stat(&x, st);
	return 0;
}

static int cephfs_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	int rc = gone(sub, "rename", from);
	if (rc < 0)
		return rc;
	rc = ceph_rename(S(sub)->cm, from, to);
	if (rc == -EACCES && (rc = enotdir(sub, from, rc)) == -EACCES)
		rc = enotdir(sub, to, rc);
	if (rc < 0) {
		if (rc == -ESHUTDOWN)
			atomic_store(&S(sub)->evicted, 1);
		return kaas_sub_fail(-rc, "rename %s/%s -> %s: %s", S(sub)->display, from, to, strerror(-rc));
	}
	return 0;
}

static int cephfs_unlink(struct kaas_substrate *sub, const char *path)
{
	int rc = gone(sub, "unlink", path);
	if (rc < 0)
		return rc;
	rc = ceph_unlink(S(sub)->cm, path);
	return rc < 0 ? fail(rc, "unlink", sub, path) : 0;
}

static int cephfs_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	int rc = gone(sub, "mkdir", path);
	if (rc < 0)
		return rc;
	rc = ceph_mkdir(S(sub)->cm, path, (mode_t)(mode ? mode : 0755));
	return rc < 0 ? fail(rc, "mkdir", sub, path) : 0;
}

static int cephfs_rmdir(struct kaas_substrate *sub, const char *path)
{
	int rc = gone(sub, "rmdir", path);
	if (rc < 0)
		return rc;
	rc = ceph_rmdir(S(sub)->cm, path);
	return rc < 0 ? fail(rc == -EEXIST ? -ENOTEMPTY : rc, "rmdir", sub, path) : 0;
}

static enum kaas_file_type dirent_type(struct kaas_substrate *sub, const char *dir, const struct dirent *de)
{
	if (de->d_type == DT_DIR)
		return KAAS_FT_DIR;
	if (de->d_type == DT_REG)
		return KAAS_FT_FILE;
	if (de->d_type != DT_UNKNOWN)
		return KAAS_FT_OTHER;
	char *p = kaas_path_join(dir, de->d_name);
	struct ceph_statx x;
	enum kaas_file_type t = KAAS_FT_OTHER;
	if (p && ceph_statx(S(sub)->cm, p, &x, CEPH_STATX_MODE, AT_SYMLINK_NOFOLLOW) == 0)
		t = S_ISDIR(x.stx_mode) ? KAAS_FT_DIR : S_ISREG(x.stx_mode) ? KAAS_FT_FILE : KAAS_FT_OTHER;
	free(p);
	return t;
}

static int cephfs_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	int rc = gone(sub, "readdir", path);
	if (rc < 0)
		return rc;
	struct ceph_dir_result *d;
	rc = ceph_opendir(S(sub)->cm, REL(path), &d);
	if (rc < 0)
		return fail(rc, "opendir", sub, path);
	for (;;) {
		struct dirent de;
		int r = ceph_readdir_r(S(sub)->cm, d, &de);
		if (r < 0) {
			rc = fail(r, "readdir", sub, path);
			break;
		}
		if (r == 0)
			break;
		if (!strcmp(de.d_name, ".") || !strcmp(de.d_name, ".."))
			continue;
		rc = cb(arg, de.d_name, dirent_type(sub, path, &de));
		if (rc)
			break;
	}
	ceph_closedir(S(sub)->cm, d);
	return rc;
}

static int cephfs_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	int rc = gone(sub, "fsync dir", path);
	if (rc < 0)
		return rc;
	int fd = ceph_open(S(sub)->cm, REL(path), O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fail(fd, "open dir", sub, path);
	rc = ceph_fsync(S(sub)->cm, fd, 0);
	ceph_close(S(sub)->cm, fd);
	return rc < 0 ? fail(rc, "fsync dir", sub, path) : 0;
}

static int cephfs_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	int rc = gone(sub, "statfs", path);
	if (rc < 0)
		return rc;
	struct statvfs v;
	rc = ceph_statfs(S(sub)->cm, REL(path), &v);
	if (rc < 0)
		return fail(rc, "statfs", sub, path);
	out->total_bytes = (uint64_t)v.f_blocks * v.f_frsize;
	out->free_bytes = (uint64_t)v.f_bavail * v.f_frsize;
	out->total_files = v.f_files;
	out->free_files = v.f_favail;
	return 0;
}

static const struct kaas_substrate_ops cephfs_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "cephfs",
	.file_size = sizeof(struct cephfs_file),
	.destroy = cephfs_destroy,
	.open = cephfs_open,
	.close = cephfs_close,
	.pread = cephfs_pread,
	.pwrite = cephfs_pwrite,
	.pwritev = cephfs_pwritev,
	.fsync = cephfs_fsync,
	.ftruncate = cephfs_ftruncate,
	.fstat = cephfs_fstat,
	.stat = cephfs_stat,
	.rename = cephfs_rename,
	.unlink = cephfs_unlink,
	.mkdir = cephfs_mkdir,
	.rmdir = cephfs_rmdir,
	.readdir = cephfs_readdir,
	.fsync_dir = cephfs_fsync_dir,
	.statfs = cephfs_statfs,
};

/* The process that made the first client (0: none yet). */
static atomic_long made_in;

/* Apply the URL's settings to a created, not yet mounted client. */
static int configure(struct ceph_mount_info *cm, const struct kaas_cephfs_url *u, const char **what)
{
	char secs[16];
	snprintf(secs, sizeof secs, "%d", u->timeout_s);
	int rc;
	if (u->conf && (rc = ceph_conf_read_file(cm, u->conf)) < 0)
		return *what = "read conf", rc;
	/* CEPH_ARGS (--debug-client=10, --log-file=...), as every Ceph tool */
	if ((rc = ceph_conf_parse_env(cm, NULL)) < 0)
		return *what = "parse CEPH_ARGS", rc;
	if (u->mon && (rc = ceph_conf_set(cm, "mon_host", u->mon)) < 0)
		return *what = "mon_host", rc;
	if (u->keyring && (rc = ceph_conf_set(cm, "keyring", u->keyring)) < 0)
		return *what = "keyring", rc;
	if ((rc = ceph_conf_set(cm, "client_mount_timeout", secs)) < 0 ||
	    (rc = ceph_conf_set(cm, "rados_mon_op_timeout", secs)) < 0)
		return *what = "timeout", rc;
	if (u->fs) {
		/* Selecting a file system by name waits for a completion that
		 * libcephfs runs on a process-wide thread pool, which fork()
		 * does not copy: in a child forked after a client was made it
		 * would wait forever.  Refuse it there, at once. */
		if (atomic_load(&made_in) != 0 && atomic_load(&made_in) != (long)getpid())
			return *what = "select the file system by name in a process forked after "
				       "a client was made (libcephfs's threads do not survive fork; "
				       "leave fs= out for the cluster's default file system)", -ENOTSUP;
		if ((rc = ceph_select_filesystem(cm, u->fs)) < 0)
			return *what = "select the file system", rc;
	}
	return 0;
}

/* Creating and mounting a client, in a thread of its own (below). */
struct mount_job {
	const struct kaas_cephfs_url *u;
	struct ceph_mount_info *cm;
	const char *what;
	int rc;
};

static void *mount_thread(void *arg)
{
	struct mount_job *j = arg;
	j->what = "create the client";
	j->rc = ceph_create(&j->cm, j->u->name);
	if (j->rc == 0)
		j->rc = configure(j->cm, j->u, &j->what);
	if (j->rc == 0) {
		j->what = "mount";
		j->rc = ceph_mount(j->cm, j->u->root);
	}
	return NULL;
}

static int cephfs_sub_open(const char *url, struct kaas_substrate **out)
{
	struct kaas_cephfs_url u;
	int rc = kaas_cephfs_url_parse(url, &u);
	if (rc < 0) {
		kaas_cephfs_url_free(&u);
		return rc;
	}
	/* The client is made in a new thread: libcephfs draws the messenger's
	 * nonce (which tells clients on one address apart) from a per-thread
	 * generator that fork() copies, so children forked from a process that
	 * already made a client would all draw the same nonce and stall each
	 * other's sessions (substrate-check's racers are such children).  A new
	 * thread seeds its generator afresh. */
	struct mount_job j = {.u = &u, .what = "start a thread"};
	pthread_t t;
	int e = pthread_create(&t, NULL, mount_thread, &j);
	if (e)
		j.rc = -e;
	else
		pthread_join(t, NULL);
	struct ceph_mount_info *cm = j.cm;
	rc = j.rc;
	long none = 0;
	if (rc == 0)
		atomic_compare_exchange_strong(&made_in, &none, (long)getpid());
	if (rc < 0) {
		const char *hint = "";
		if (!strcmp(j.what, "mount") && rc == -ENOENT)
			hint = u.fs ? " (is the path there, and the file system?)" : " (is the path there?)";
		else if (!strcmp(j.what, "mount") && rc == -ETIMEDOUT)
			hint = " (no monitor answered, or it refused the key)";
		rc = kaas_sub_fail(-rc, "%s: cannot %s: %s%s", u.display, j.what, strerror(-rc), hint);
		if (cm)
			ceph_release(cm);
		kaas_cephfs_url_free(&u);
		return rc;
	}
	struct cephfs_sub *s = calloc(1, sizeof *s);
	if (!s) {
		ceph_unmount(cm);
		ceph_release(cm);
		kaas_cephfs_url_free(&u);
		return -ENOMEM;
	}
	s->base.ops = &cephfs_ops;
	s->cm = cm;
	s->display = u.display;
	u.display = NULL;
	atomic_init(&s->evicted, 0);
	kaas_cephfs_url_free(&u);
	*out = &s->base;
	return 0;
}

const struct kaas_backend kaas_backend_cephfs = {
	.scheme = "cephfs",
	.open = cephfs_sub_open,
};
