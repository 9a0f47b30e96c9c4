/* metered.c — the metering substrate decorator (see metered.h). */
#include "substrate/metered.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/metrics.h"

enum op {
	OP_OPEN, OP_CLOSE, OP_PREAD, OP_PWRITE, OP_FSYNC, OP_FTRUNCATE, OP_FSTAT, OP_STAT,
	OP_RENAME, OP_UNLINK, OP_MKDIR, OP_RMDIR, OP_READDIR, OP_FSYNC_DIR, OP_STATFS,
	OP_SENDFILE, OP_FALLOCATE, OP_READAHEAD, NOPS
};
static const char *const op_names[NOPS] = {
	"open", "close", "pread", "pwrite", "fsync", "ftruncate", "fstat", "stat",
	"rename", "unlink", "mkdir", "rmdir", "readdir", "fsync_dir", "statfs",
	"sendfile", "fallocate", "readahead",
};

static struct kaas_metric ops_total = KAAS_COUNTER("kaas_substrate_ops_total",
	"Substrate operations by backend and op.", "backend", "op");
static struct kaas_metric errors_total = KAAS_COUNTER("kaas_substrate_errors_total",
	"Substrate operations that failed, by backend and op.", "backend", "op");
static struct kaas_metric op_seconds = KAAS_HISTOGRAM("kaas_substrate_op_duration_seconds",
	"Substrate operation latency by backend and op.", KAAS_METRIC_SECONDS,
	kaas_metric_latency_bounds, KAAS_METRIC_LATENCY_NBOUNDS, "backend", "op");

struct op_series {
	struct kaas_metric_series *ops, *errors, *seconds;
};

struct metered {
	struct kaas_substrate base;
	struct kaas_substrate *inner;
	struct kaas_substrate_ops ops; /* metered_ops, file_size grown by the inner handle's */
	struct op_series m[NOPS];
};

/* A metered handle carries the wrapped backend's handle in the same
 * allocation (at INNER_AT, inner->ops->file_size bytes): an open is one
 * dispatch-layer open (path check, allocation, path copy) and one backend
 * open, not two of each; the inner handle shares the outer one's path. */
struct mfile {
	struct kaas_file base;
	struct kaas_file *inner;
};
#define INNER_AT ((sizeof(struct mfile) + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t))

#define MS(sub) ((struct metered *)(sub))
#define MF(f) ((struct mfile *)(f))

/* When an op began (0: metrics are off, nothing is recorded). */
static uint64_t begin(void)
{
	return kaas_metrics_enabled() ? kaas_metrics_now_ns() : 0;
}

/* Record an op begun at t0 that returned rc; returns rc. */
static long long done(struct metered *m, enum op op, uint64_t t0, long long rc)
{
	if (!t0)
		return rc;
	struct op_series *s = &m->m[op];
	kaas_metric_add(s->ops, 1);
	if (rc < 0)
		kaas_metric_add(s->errors, 1);
	kaas_metric_observe(s->seconds, kaas_metrics_now_ns() - t0);
	return rc;
}

static void m_destroy(struct kaas_substrate *sub)
{
	kaas_substrate_close(MS(sub)->inner);
	free(sub);
}

/* Open and close go to the wrapped backend's ops directly: the dispatch
 * layer has checked the path and flags and made both handles (zeroed);
 * the inner one is filled in here as kaas_sub_open would. */
static int m_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		  struct kaas_file *f)
{
	struct kaas_substrate *in = MS(sub)->inner;
	struct kaas_file *inner = (struct kaas_file *)((char *)f + INNER_AT);
	inner->ops = in->ops;
	inner->sub = in;
	inner->flags = flags;
	inner->path = f->path;
	uint64_t t0 = begin();
	int rc = (int)done(MS(sub), OP_OPEN, t0, in->ops->open(in, path, flags, mode, inner));
	if (rc >= 0)
		MF(f)->inner = inner;
	return rc;
}

static int m_close(struct kaas_file *f)
{
	struct kaas_file *inner = MF(f)->inner;
	uint64_t t0 = begin();
	int rc = (int)done(MS(f->sub), OP_CLOSE, t0, inner->ops->close(inner));
	if (inner->poisoned) /* as kaas_sub_close: a failed fsync is the close's answer */
		rc = inner->poisoned;
	return rc < 0 ? rc : 0;
}

static ssize_t m_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	uint64_t t0 = begin();
	return (ssize_t)done(MS(f->sub), OP_PREAD, t0, kaas_sub_pread(MF(f)->inner, buf, len, off));
}

static ssize_t m_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	uint64_t t0 = begin();
	return (ssize_t)done(MS(f->sub), OP_PWRITE, t0, kaas_sub_pwrite(MF(f)->inner, buf, len, off));
}

/* Counted as a pwrite: it is one write of the buffers' concatenation. */
static ssize_t m_pwritev(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off)
{
	uint64_t t0 = begin();
	return (ssize_t)done(MS(f->sub), OP_PWRITE, t0,
			     kaas_sub_pwritev(MF(f)->inner, iov, iovcnt, off));
}

static int m_fsync(struct kaas_file *f)
{
	uint64_t t0 = begin();
	return (int)done(MS(f->sub), OP_FSYNC, t0, kaas_sub_fsync(MF(f)->inner));
}

static int m_ftruncate(struct kaas_file *f, uint64_t size)
{
	uint64_t t0 = begin();
	return (int)done(MS(f->sub), OP_FTRUNCATE, t0, kaas_sub_ftruncate(MF(f)->inner, size));
}

static int m_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	uint64_t t0 = begin();
	return (int)done(MS(f->sub), OP_FSTAT, t0, kaas_sub_fstat(MF(f)->inner, st));
}

static int m_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_STAT, t0, kaas_sub_stat(MS(sub)->inner, path, st));
}

static int m_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_RENAME, t0, kaas_sub_rename(MS(sub)->inner, from, to));
}

static int m_unlink(struct kaas_substrate *sub, const char *path)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_UNLINK, t0, kaas_sub_unlink(MS(sub)->inner, path));
}

static int m_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_MKDIR, t0, kaas_sub_mkdir(MS(sub)->inner, path, mode));
}

static int m_rmdir(struct kaas_substrate *sub, const char *path)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_RMDIR, t0, kaas_sub_rmdir(MS(sub)->inner, path));
}

static int m_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_READDIR, t0, kaas_sub_readdir(MS(sub)->inner, path, cb, arg));
}

static int m_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_FSYNC_DIR, t0, kaas_sub_fsync_dir(MS(sub)->inner, path));
}

static int m_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	uint64_t t0 = begin();
	return (int)done(MS(sub), OP_STATFS, t0, kaas_sub_statfs(MS(sub)->inner, path, out));
}

static ssize_t m_sendfile(struct kaas_file *f, int sockfd, uint64_t off, size_t len)
{
	uint64_t t0 = begin();
	return (ssize_t)done(MS(f->sub), OP_SENDFILE, t0,
			     kaas_sub_sendfile(MF(f)->inner, sockfd, off, len));
}

static int m_fallocate(struct kaas_file *f, uint64_t off, uint64_t len)
{
	uint64_t t0 = begin();
	return (int)done(MS(f->sub), OP_FALLOCATE, t0, kaas_sub_fallocate(MF(f)->inner, off, len));
}

static int m_readahead(struct kaas_file *f, uint64_t off, uint64_t len)
{
	uint64_t t0 = begin();
	return (int)done(MS(f->sub), OP_READAHEAD, t0, kaas_sub_readahead(MF(f)->inner, off, len));
}

static const struct kaas_substrate_ops metered_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "metered",
	.file_size = sizeof(struct mfile),
	.destroy = m_destroy,
	.open = m_open,
	.close = m_close,
	.pread = m_pread,
	.pwrite = m_pwrite,
	.fsync = m_fsync,
	.ftruncate = m_ftruncate,
	.fstat = m_fstat,
	.stat = m_stat,
	.rename = m_rename,
	.unlink = m_unlink,
	.mkdir = m_mkdir,
	.rmdir = m_rmdir,
	.readdir = m_readdir,
	.fsync_dir = m_fsync_dir,
	.statfs = m_statfs,
	.sendfile = m_sendfile,
	.fallocate = m_fallocate,
	.readahead = m_readahead,
};

int kaas_metered_wrap(struct kaas_substrate *inner, struct kaas_substrate **out)
{
	*out = NULL;
	struct metered *m = calloc(1, sizeof(*m));
	char *url = m ? strdup(inner->url ? inner->url : "") : NULL;
	if (!url) {
		free(m);
		return -ENOMEM;
	}
	m->ops = metered_ops;
	size_t isz = inner->ops->file_size > sizeof(struct kaas_file) ? inner->ops->file_size
								       : sizeof(struct kaas_file);
	m->ops.file_size = INNER_AT + isz;
	/* A gathered write is native only if the wrapped backend's is. */
	m->ops.pwritev = inner->ops->pwritev ? m_pwritev : NULL;
	m->base.ops = &m->ops;
	m->base.url = url;
	memcpy(m->base.host, inner->host, sizeof(m->base.host));
	m->inner = inner;
	for (int i = 0; i < NOPS; i++) {
		const char *labels[] = { inner->ops->name, op_names[i] };
		m->m[i].ops = kaas_metric_series(&ops_total, labels);
		m->m[i].errors = kaas_metric_series(&errors_total, labels);
		m->m[i].seconds = kaas_metric_series(&op_seconds, labels);
	}
	*out = &m->base;
	return 0;
}
