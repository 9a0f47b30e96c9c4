/* posix.c — the substrate over a mounted directory, with the *at() calls. */
#include "backends/posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

struct posix_sub {
	struct kaas_substrate base;
	int rootfd;
	char *root;
};

struct posix_file {
	struct kaas_file base;
	int fd;
};

#define P(sub) ((struct posix_sub *)(sub))
#define F(f) ((struct posix_file *)(f))
/* "" (the root) is "." for the *at() calls. */
#define REL(path) ((path)[0] ? (path) : ".")

static int fail(int err, const char *what, struct kaas_substrate *sub, const char *path)
{
	return kaas_sub_fail(err, "%s %s/%s: %s", what, P(sub)->root, path, strerror(err));
}

static void posix_destroy(struct kaas_substrate *sub)
{
	close(P(sub)->rootfd);
	free(P(sub)->root);
	free(sub);
}

int kaas_posix_open_flags(int flags)
{
	int o;
	if ((flags & KAAS_O_READ) && (flags & KAAS_O_WRITE))
		o = O_RDWR;
	else if (flags & KAAS_O_WRITE)
		o = O_WRONLY;
	else
		o = O_RDONLY;
	if (flags & KAAS_O_CREAT)
		o |= O_CREAT;
	if (flags & KAAS_O_EXCL)
		o |= O_EXCL;
	if (flags & KAAS_O_TRUNC)
		o |= O_TRUNC;
	if (flags & KAAS_O_DIRECTORY)
		o |= O_DIRECTORY;
	return o;
}

static int posix_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		      struct kaas_file *f)
{
	int o = O_CLOEXEC | kaas_posix_open_flags(flags);
	int fd;
	do
		fd = openat(P(sub)->rootfd, REL(path), o, (mode_t)(mode ? mode : 0644));
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return fail(errno, "open", sub, path);
	if (!(flags & KAAS_O_DIRECTORY)) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			return fail(EISDIR, "open", sub, path);
		}
	}
	F(f)->fd = fd;
	return 0;
}

static int posix_close(struct kaas_file *f)
{
	/* close(2) must not be retried on EINTR on Linux: the fd is gone. */
	if (close(F(f)->fd) < 0 && errno != EINTR)
		return fail(errno, "close", f->sub, f->path);
	return 0;
}

static ssize_t posix_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	ssize_t n;
	do
		n = pread(F(f)->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? fail(errno, "read", f->sub, f->path) : n;
}

static ssize_t posix_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;
	do
		n = pwrite(F(f)->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? fail(errno, "write", f->sub, f->path) : n;
}

static ssize_t posix_pwritev(struct kaas_file *f, const struct iovec *iov, int iovcnt,
			     uint64_t off)
{
	ssize_t n;
	do
		n = pwritev(F(f)->fd, iov, iovcnt, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? fail(errno, "write", f->sub, f->path) : n;
}

static int posix_fsync(struct kaas_file *f)
{
	/* fsync is not retried after a real failure; EINTR means it did not run. */
	int rc;
	do
		rc = fdatasync(F(f)->fd);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? fail(errno, "fsync", f->sub, f->path) : 0;
}

static int posix_ftruncate(struct kaas_file *f, uint64_t size)
{
	int rc;
	do
		rc = ftruncate(F(f)->fd, (off_t)size);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? fail(errno, "truncate", f->sub, f->path) : 0;
}

static void fill_stat(const struct stat *s, struct kaas_stat *st)
{
	st->size = (uint64_t)s->st_size;
	st->mtime_ns = (int64_t)s->st_mtim.tv_sec * 1000000000 + s->st_mtim.tv_nsec;
	st->ino = (uint64_t)s->st_ino;
	st->mode = (uint32_t)(s->st_mode & 07777);
	st->nlink = (uint32_t)s->st_nlink;
	st->type = S_ISDIR(s->st_mode) ? KAAS_FT_DIR : S_ISREG(s->st_mode) ? KAAS_FT_FILE : KAAS_FT_OTHER;
}

static int posix_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	struct stat s;
	if (fstat(F(f)->fd, &s) < 0)
		return fail(errno, "fstat", f->sub, f->path);
	fill_stat(&s, st);
	return 0;
}

static int posix_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	struct stat s;
	if (fstatat(P(sub)->rootfd, REL(path), &s, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(errno, "stat", sub, path);
	fill_stat(&s, st);
	return 0;
}

static int posix_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	if (renameat(P(sub)->rootfd, from, P(sub)->rootfd, to) < 0)
		return kaas_sub_fail(errno, "rename %s/%s -> %s: %s", P(sub)->root, from, to,
				     strerror(errno));
	return 0;
}

static int posix_unlink(struct kaas_substrate *sub, const char *path)
{
	if (unlinkat(P(sub)->rootfd, path, 0) < 0)
		return fail(errno, "unlink", sub, path); /* Linux: EISDIR for a directory */
	return 0;
}

static int posix_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	if (mkdirat(P(sub)->rootfd, path, (mode_t)(mode ? mode : 0755)) < 0)
		return fail(errno, "mkdir", sub, path);
	return 0;
}

static int posix_rmdir(struct kaas_substrate *sub, const char *path)
{
	if (unlinkat(P(sub)->rootfd, path, AT_REMOVEDIR) < 0)
		return fail(errno == EEXIST ? ENOTEMPTY : errno, "rmdir", sub, path);
	return 0;
}

static int posix_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	int fd;
	do
		fd = openat(P(sub)->rootfd, REL(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return fail(errno, "opendir", sub, path);
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return fail(e, "opendir", sub, path);
	}
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				rc = fail(errno, "readdir", sub, path);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		enum kaas_file_type t = KAAS_FT_OTHER;
		if (de->d_type == DT_DIR)
			t = KAAS_FT_DIR;
		else if (de->d_type == DT_REG)
			t = KAAS_FT_FILE;
		else if (de->d_type == DT_UNKNOWN) {
			struct stat s;
			if (fstatat(dirfd(d), de->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0)
				t = S_ISDIR(s.st_mode) ? KAAS_FT_DIR : S_ISREG(s.st_mode) ? KAAS_FT_FILE : KAAS_FT_OTHER;
		}
		rc = cb(arg, de->d_name, t);
		if (rc)
			break;
	}
	closedir(d);
	return rc;
}

static int posix_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	int fd;
	do
		fd = openat(P(sub)->rootfd, REL(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return fail(errno, "open dir", sub, path);
	int rc;
	do
		rc = fsync(fd);
	while (rc < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	/* Some filesystems (FUSE without fsyncdir) cannot fsync a directory:
	 * their metadata operations are synchronous, which is what we need. */
	if (rc < 0 && (e == EINVAL || e == ENOSYS || e == ENOTSUP))
		return 0;
	return rc < 0 ? fail(e, "fsync dir", sub, path) : 0;
}

static int posix_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	int fd = openat(P(sub)->rootfd, REL(path), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(errno, "statfs", sub, path);
	struct statvfs v;
	int rc = fstatvfs(fd, &v);
	int e = errno;
	close(fd);
	if (rc < 0)
		return fail(e, "statfs", sub, path);
	out->total_bytes = (uint64_t)v.f_blocks * v.f_frsize;
	out->free_bytes = (uint64_t)v.f_bavail * v.f_frsize;
	out->total_files = v.f_files;
	out->free_files = v.f_favail;
	return 0;
}

static ssize_t posix_sendfile(struct kaas_file *f, int sockfd, uint64_t off, size_t len)
{
	off_t o = (off_t)off;
	ssize_t n;
	do
		n = sendfile(sockfd, F(f)->fd, &o, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -EAGAIN : fail(errno, "sendfile", f->sub, f->path);
	return n;
}

static int posix_reserve(struct kaas_file *f, uint64_t off, uint64_t len)
{
	int rc = posix_fallocate64(F(f)->fd, (off_t)off, (off_t)len);
	if (rc == EINVAL || rc == EOPNOTSUPP)
		return -ENOTSUP;
	return rc ? fail(rc, "fallocate", f->sub, f->path) : 0;
}

static int posix_readahead(struct kaas_file *f, uint64_t off, uint64_t len)
{
	int rc = posix_fadvise(F(f)->fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
	return rc ? fail(rc, "posix_fadvise", f->sub, f->path) : 0;
}

static const struct kaas_substrate_ops posix_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "posix",
	.file_size = sizeof(struct posix_file),
	.destroy = posix_destroy,
	.open = posix_open,
	.close = posix_close,
	.pread = posix_pread,
	.pwrite = posix_pwrite,
	.pwritev = posix_pwritev,
	.fsync = posix_fsync,
	.ftruncate = posix_ftruncate,
	.fstat = posix_fstat,
	.stat = posix_stat,
	.rename = posix_rename,
	.unlink = posix_unlink,
	.mkdir = posix_mkdir,
	.rmdir = posix_rmdir,
	.readdir = posix_readdir,
	.fsync_dir = posix_fsync_dir,
	.statfs = posix_statfs,
	.sendfile = posix_sendfile,
	.fallocate = posix_reserve,
	.readahead = posix_readahead,
};

char *kaas_posix_url_path(const char *url)
{
	if (!strncmp(url, "file://", 7)) {
		const char *p = url + 7;
		if (*p != '/') /* file://host/path is not supported */
			return NULL;
		return strdup(p);
	}
	if (strstr(url, "://") || !strncmp(url, "fault+", 6))
		return NULL;
	return strdup(url);
}

static int posix_sub_open(const char *url, struct kaas_substrate **out)
{
	char *root = kaas_posix_url_path(url);
	if (!root || !*root) {
		free(root);
		return kaas_sub_fail(EINVAL, "%s: not a directory path or file:///absolute/path URL", url);
	}
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		kaas_sub_fail(e, "%s: cannot open the directory: %s", url, strerror(e));
		free(root);
		return -e;
	}
	struct posix_sub *s = calloc(1, sizeof *s);
	if (!s) {
		close(fd);
		free(root);
		return -ENOMEM;
	}
	s->base.ops = &posix_ops;
	s->rootfd = fd;
	s->root = root;
	*out = &s->base;
	return 0;
}

const struct kaas_backend kaas_backend_posix = {
	.scheme = "file",
	.open = posix_sub_open,
};
