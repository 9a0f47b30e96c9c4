/*
 * dispatch.c — the one layer between callers and a backend's ops table:
 * path checks, fsync poisoning, fallbacks for optional ops, and small
 * helpers built only from ops.
 */
#include "substrate/substrate.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define CHECK_PATH(p)                                                                   \
	do {                                                                            \
		int rc_ = kaas_path_check(p);                                           \
		if (rc_ < 0)                                                            \
			return kaas_sub_fail(rc_, "invalid substrate path '%s'", (p) ? (p) : "(null)"); \
	} while (0)

#define CHECK_FILE(f)                                                                   \
	do {                                                                            \
		if ((f)->poisoned)                                                      \
			return kaas_sub_fail((f)->poisoned, "%s: handle poisoned by an earlier failed fsync", (f)->path); \
	} while (0)

int kaas_sub_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		  struct kaas_file **out)
{
	*out = NULL;
	CHECK_PATH(path);
	if ((flags & (KAAS_O_READ | KAAS_O_WRITE)) == 0)
		return kaas_sub_fail(EINVAL, "open %s: neither read nor write asked", path);
	if ((flags & KAAS_O_EXCL) && !(flags & KAAS_O_CREAT))
		return kaas_sub_fail(EINVAL, "open %s: EXCL without CREAT", path);
	size_t sz = sub->ops->file_size;
	if (sz < sizeof(struct kaas_file))
		sz = sizeof(struct kaas_file);
	struct kaas_file *f = calloc(1, sz);
	char *p = strdup(path);
	if (!f || !p) {
		free(f);
		free(p);
		return kaas_sub_fail(ENOMEM, "open %s: out of memory", path);
	}
	assert(sub->ops->version == KAAS_SUBSTRATE_OPS_VERSION); /* a table built for another ops layout is a bug */
	f->ops = sub->ops;
	f->sub = sub;
	f->flags = flags;
	f->path = p;
	int rc = sub->ops->open(sub, path, flags, mode, f);
	if (rc < 0) {
		free(f->path);
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int kaas_sub_close(struct kaas_file *f)
{
	if (!f)
		return 0;
	int rc = f->ops->close(f);
	if (f->poisoned)
		rc = f->poisoned;
	free(f->path);
	free(f);
	return rc < 0 ? rc : 0;
}

ssize_t kaas_sub_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	CHECK_FILE(f);
	ssize_t n = f->ops->pread(f, buf, len, off);
	assert(n < 0 || (size_t)n <= len); /* a backend never reports more than asked */
	return n;
}

ssize_t kaas_sub_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	CHECK_FILE(f);
	if (!(f->flags & KAAS_O_WRITE))
		return kaas_sub_fail(EBADF, "write %s: handle opened read-only", f->path);
	ssize_t n = f->ops->pwrite(f, buf, len, off);
	assert(n < 0 || (size_t)n <= len);
	return n;
}

ssize_t kaas_sub_pread_full(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = kaas_sub_pread(f, (char *)buf + done, len - done, off + done);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int kaas_sub_pwrite_full(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = kaas_sub_pwrite(f, (const char *)buf + done, len - done, off + done);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return kaas_sub_fail(EIO, "write %s: no progress at offset %llu", f->path,
					     (unsigned long long)(off + done));
		done += (size_t)n;
	}
	return 0;
}

bool kaas_sub_has_pwritev(const struct kaas_file *f)
{
	return f->ops->pwritev != NULL;
}

ssize_t kaas_sub_pwritev(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off)
{
	CHECK_FILE(f);
	assert(f->ops->pwritev && iovcnt >= 1 && iovcnt <= KAAS_SUB_IOV_MAX);
	if (!(f->flags & KAAS_O_WRITE))
		return kaas_sub_fail(EBADF, "write %s: handle opened read-only", f->path);
#ifndef NDEBUG
	size_t len = 0;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
#endif
	ssize_t n = f->ops->pwritev(f, iov, iovcnt, off);
	assert(n < 0 || (size_t)n <= len);
	return n;
}

int kaas_sub_pwritev_full(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off)
{
	int i = 0;
	if (!f->ops->pwritev) {
		for (; i < iovcnt; i++) {
			int rc = kaas_sub_pwrite_full(f, iov[i].iov_base, iov[i].iov_len, off);
			if (rc < 0)
				return rc;
			off += iov[i].iov_len;
		}
		return 0;
	}
	/* iov[i] is next, its first `done` bytes already written (a short
	 * write ended inside it: the rest of it goes alone, as one pwrite).
	 * Empty buffers are stepped over, so a call always has bytes to write
	 * and 0 from it is no progress. */
	size_t done = 0;
	while (i < iovcnt) {
		if (done == iov[i].iov_len) {
			i++;
			done = 0;
			continue;
		}
		if (done) {
			int rc = kaas_sub_pwrite_full(f, (const char *)iov[i].iov_base + done,
						      iov[i].iov_len - done, off);
			if (rc < 0)
				return rc;
			off += iov[i].iov_len - done;
			done = iov[i].iov_len;
			continue;
		}
		int cnt = iovcnt - i < KAAS_SUB_IOV_MAX ? iovcnt - i : KAAS_SUB_IOV_MAX;
		ssize_t n = kaas_sub_pwritev(f, iov + i, cnt, off);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return kaas_sub_fail(EIO, "write %s: no progress at offset %llu", f->path,
					     (unsigned long long)off);
		off += (uint64_t)n;
		/* Step over the buffers it wrote whole. */
		size_t left = (size_t)n;
		while (left && left >= iov[i].iov_len) {
			left -= iov[i].iov_len;
			i++;
		}
		done = left;
	}
	return 0;
}

int kaas_sub_fsync(struct kaas_file *f)
{
	CHECK_FILE(f);
	int rc = f->ops->fsync(f);
	if (rc < 0) {
		/* Never retried: what was unsynced through this handle is lost. */
		f->poisoned = rc;
	}
	return rc;
}

int kaas_sub_ftruncate(struct kaas_file *f, uint64_t size)
{
	CHECK_FILE(f);
	if (!(f->flags & KAAS_O_WRITE))
		return kaas_sub_fail(EBADF, "truncate %s: handle opened read-only", f->path);
	return f->ops->ftruncate(f, size);
}

int kaas_sub_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	CHECK_FILE(f);
	memset(st, 0, sizeof *st);
	return f->ops->fstat(f, st);
}

ssize_t kaas_sub_sendfile(struct kaas_file *f, int sockfd, uint64_t off, size_t len)
{
	CHECK_FILE(f);
	if (f->ops->sendfile)
		return f->ops->sendfile(f, sockfd, off, len);
	/* Fallback: one bounded read, then send what the socket takes. */
	char buf[65536];
	size_t want = len < sizeof buf ? len : sizeof buf;
	ssize_t n = kaas_sub_pread(f, buf, want, off);
	if (n <= 0)
		return n;
	ssize_t s = send(sockfd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (s < 0)
		return (errno == EWOULDBLOCK) ? -EAGAIN : kaas_sub_fail(errno, "send: %s", strerror(errno));
	return s;
}

int kaas_sub_readahead(struct kaas_file *f, uint64_t off, uint64_t len)
{
	CHECK_FILE(f);
	return f->ops->readahead ? f->ops->readahead(f, off, len) : 0;
}

int kaas_sub_fallocate(struct kaas_file *f, uint64_t off, uint64_t len)
{
	CHECK_FILE(f);
	if (!f->ops->fallocate)
		return -ENOTSUP;
	return f->ops->fallocate(f, off, len);
}

int kaas_sub_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	CHECK_PATH(path);
	memset(st, 0, sizeof *st);
	return sub->ops->stat(sub, path, st);
}

int kaas_sub_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	CHECK_PATH(from);
	CHECK_PATH(to);
	if (!*from || !*to)
		return kaas_sub_fail(EINVAL, "rename: the root cannot be renamed");
	return sub->ops->rename(sub, from, to);
}

int kaas_sub_unlink(struct kaas_substrate *sub, const char *path)
{
	CHECK_PATH(path);
	if (!*path)
		return kaas_sub_fail(EISDIR, "unlink: the root is a directory");
	return sub->ops->unlink(sub, path);
}

int kaas_sub_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	CHECK_PATH(path);
	if (!*path)
		return -EEXIST;
	return sub->ops->mkdir(sub, path, mode);
}

int kaas_sub_mkdirs(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	CHECK_PATH(path);
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	for (char *s = p;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (*p) {
				rc = sub->ops->mkdir(sub, p, mode);
				if (rc == -EEXIST) {
					struct kaas_stat st;
					rc = sub->ops->stat(sub, p, &st);
					if (rc == 0 && st.type != KAAS_FT_DIR)
						rc = kaas_sub_fail(ENOTDIR, "mkdir %s: exists and is not a directory", p);
				}
				if (rc < 0)
					break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

int kaas_sub_rmdir(struct kaas_substrate *sub, const char *path)
{
	CHECK_PATH(path);
	if (!*path)
		return kaas_sub_fail(EBUSY, "rmdir: the root cannot be removed");
	int rc = sub->ops->rmdir(sub, path);
	return rc == -EEXIST ? -ENOTEMPTY : rc;
}

int kaas_sub_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	CHECK_PATH(path);
	return sub->ops->readdir(sub, path, cb, arg);
}

int kaas_sub_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	CHECK_PATH(path);
	return sub->ops->fsync_dir(sub, path);
}

int kaas_sub_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	CHECK_PATH(path);
	memset(out, 0, sizeof *out);
	return sub->ops->statfs(sub, path, out);
}

/* ---- listing ---- */

struct list_acc {
	struct kaas_dirlist *l;
	size_t cap;
	int err;
};

static int list_cb(void *arg, const char *name, enum kaas_file_type type)
{
	struct list_acc *a = arg;
	struct kaas_dirlist *l = a->l;
	if (l->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;
		char **names = realloc(l->names, cap * sizeof *names);
		if (!names)
			return a->err = -ENOMEM;
		l->names = names;
		enum kaas_file_type *types = realloc(l->types, cap * sizeof *types);
		if (!types)
			return a->err = -ENOMEM;
		l->types = types;
		a->cap = cap;
	}
	char *s = strdup(name);
	if (!s)
		return a->err = -ENOMEM;
	l->names[l->n] = s;
	l->types[l->n] = type;
	l->n++;
	return 0;
}

static int cmp_idx_names(const void *a, const void *b, void *names)
{
	char **n = names;
	return strcmp(n[*(const size_t *)a], n[*(const size_t *)b]);
}

int kaas_sub_list(struct kaas_substrate *sub, const char *path, struct kaas_dirlist *out)
{
	memset(out, 0, sizeof *out);
	struct list_acc a = {.l = out};
	int rc = kaas_sub_readdir(sub, path, list_cb, &a);
	if (a.err)
		rc = a.err;
	if (rc < 0) {
		kaas_dirlist_free(out);
		return rc;
	}
	/* Sort names and types together through an index. */
	size_t *idx = malloc((out->n ? out->n : 1) * sizeof *idx);
	char **names = malloc((out->n ? out->n : 1) * sizeof *names);
	enum kaas_file_type *types = malloc((out->n ? out->n : 1) * sizeof *types);
	if (!idx || !names || !types) {
		free(idx);
		free(names);
		free(types);
		kaas_dirlist_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < out->n; i++)
		idx[i] = i;
	qsort_r(idx, out->n, sizeof *idx, cmp_idx_names, out->names);
	for (size_t i = 0; i < out->n; i++) {
		names[i] = out->names[idx[i]];
		types[i] = out->types[idx[i]];
	}
	free(out->names);
	free(out->types);
	free(idx);
	out->names = names;
	out->types = types;
	return 0;
}

void kaas_dirlist_free(struct kaas_dirlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->types);
	memset(l, 0, sizeof *l);
}

int kaas_sub_read_all(struct kaas_substrate *sub, const char *path, size_t max, char **buf,
		      size_t *len)
{
	*buf = NULL;
	*len = 0;
	struct kaas_file *f;
	int rc = kaas_sub_open(sub, path, KAAS_O_READ, 0, &f);
	if (rc < 0)
		return rc;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1);
	if (!b) {
		kaas_sub_close(f);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= max + 1) {
				free(b);
				kaas_sub_close(f);
				return kaas_sub_fail(EFBIG, "read %s: larger than %zu bytes", path, max);
			}
			cap *= 2;
			char *nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				kaas_sub_close(f);
				return -ENOMEM;
			}
			b = nb;
		}
		ssize_t r = kaas_sub_pread(f, b + n, cap - n, n);
		if (r < 0) {
			free(b);
			kaas_sub_close(f);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	kaas_sub_close(f);
	if (n > max) {
		free(b);
		return kaas_sub_fail(EFBIG, "read %s: larger than %zu bytes", path, max);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}
