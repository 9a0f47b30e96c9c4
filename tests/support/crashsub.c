/* crashsub.c — fail-the-Nth-op / crash-at-the-Nth-sync substrate wrapper. */
#include "tests/support/crashsub.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct undo {
	struct undo *next;      /* newer records first */
	uint64_t off;           /* region overwritten */
	uint64_t oldsize;       /* file size before the op */
	size_t savedlen;        /* bytes saved from [off, off+savedlen) (within oldsize) */
	unsigned char *saved;
	uint64_t writer;        /* id of the handle that made the change (0: open) */
};

struct pathrec {
	struct pathrec *next;
	char *path;
	struct undo *undo;
};

struct crash_sub {
	struct kaas_substrate base;
	struct kaas_substrate *lower;
	struct kaas_crashsub_opts o;
	unsigned ops, fsyncs, renames, unlinks, rmdirs;
	int crashed;
	uint64_t rng;
	struct pathrec *paths;
	uint64_t next_handle_id;
	pthread_mutex_t mu;     /* one op at a time (callers may use threads) */
};

struct crash_file {
	struct kaas_file base;
	struct kaas_file *lower;
	uint64_t id;            /* unique per handle, never reused */
};

#define CS(s) ((struct crash_sub *)(s))
#define CF(f) ((struct crash_file *)(f))

static uint64_t rnd(struct crash_sub *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static struct pathrec *find_path(struct crash_sub *s, const char *path, int create)
{
	for (struct pathrec *p = s->paths; p; p = p->next)
		if (!strcmp(p->path, path))
			return p;
	if (!create)
		return NULL;
	struct pathrec *p = calloc(1, sizeof *p);
	p->path = strdup(path);
	p->next = s->paths;
	s->paths = p;
	return p;
}

static void free_undo(struct undo *u)
{
	while (u) {
		struct undo *n = u->next;
		free(u->saved);
		free(u);
		u = n;
	}
}

static void drop_path(struct crash_sub *s, const char *path)
{
	for (struct pathrec **pp = &s->paths; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->path, path)) {
			struct pathrec *p = *pp;
			*pp = p->next;
			free_undo(p->undo);
			free(p->path);
			free(p);
			return;
		}
}

/* Apply every undo record: the lower then holds only what was synced. */
static void apply_crash(struct crash_sub *s)
{
	if (s->crashed)
		return;
	s->crashed = 1;
	while (s->paths) {
		struct pathrec *p = s->paths;
		s->paths = p->next;
		struct kaas_file *f;
		if (kaas_sub_open(s->lower, p->path, KAAS_O_READ | KAAS_O_WRITE, 0, &f) == 0) {
			struct kaas_stat st;
			uint64_t cur = kaas_sub_fstat(f, &st) == 0 ? st.size : 0;
			uint64_t base = cur;
			for (struct undo *u = p->undo; u; u = u->next) { /* newest first */
				if (u->savedlen)
					kaas_sub_pwrite_full(f, u->saved, u->savedlen, u->off);
				if (u->oldsize < base)
					base = u->oldsize;
			}
			uint64_t keep = base;
			if (s->o.torn_tail && cur > base)
				keep = base + rnd(s) % (cur - base + 1);
			kaas_sub_ftruncate(f, keep);
			kaas_sub_fsync(f);
			kaas_sub_close(f);
		}
		free_undo(p->undo);
		free(p->path);
		free(p);
	}
}

/* Count an op; returns 0 to go ahead or -errno. */
static int gate(struct crash_sub *s)
{
	if (s->crashed)
		return kaas_sub_fail(EIO, "crashsub: host crashed");
	s->ops++;
	if (s->o.fail_op_at && s->ops == s->o.fail_op_at)
		return kaas_sub_fail(s->o.fail_errno ? s->o.fail_errno : EIO,
				     "crashsub: injected failure of op %u", s->ops);
	return 0;
}

/* gate, then the at-th op of one kind (counted in *count while `at` is set)
 * fails with fail_errno: 0 to go ahead or -errno. */
static int gate_nth(struct crash_sub *s, unsigned at, unsigned *count, const char *op,
		    const char *path)
{
	int rc = gate(s);
	if (rc < 0)
		return rc;
	if (at && ++*count == at)
		return kaas_sub_fail(s->o.fail_errno ? s->o.fail_errno : EIO,
				     "crashsub: injected failure of %s %u (%s)", op, *count, path);
	return 0;
}

/* gate, then count one op of a kind in *count: the at-th (at set) crashes
 * the host and fails with -EIO.  0 to go ahead or -errno. */
static int gate_crash(struct crash_sub *s, unsigned at, unsigned *count, const char *op)
{
	int rc = gate(s);
	if (rc < 0)
		return rc;
	++*count;
	if (at && *count == at) {
		apply_crash(s);
		return kaas_sub_fail(EIO, "crashsub: crashed at %s %u", op, *count);
	}
	return 0;
}

static int gate_sync(struct crash_sub *s)
{
	return gate_crash(s, s->o.crash_at_fsync, &s->fsyncs, "fsync");
}

static void cs_destroy(struct kaas_substrate *sub)
{
	struct crash_sub *s = CS(sub);
	while (s->paths) {
		struct pathrec *p = s->paths;
		s->paths = p->next;
		free_undo(p->undo);
		free(p->path);
		free(p);
	}
	kaas_substrate_close(s->lower);
	free(s);
}

static int cs_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		   struct kaas_file *f)
{
	struct crash_sub *s = CS(sub);
	int rc = gate(s);
	if (rc < 0)
		return rc;
	if (flags & KAAS_O_TRUNC) {
		/* Record the truncation as an overwrite of the whole old content. */
		struct kaas_stat st;
		if (kaas_sub_stat(s->lower, path, &st) == 0 && st.size > 0) {
			struct kaas_file *rf;
			if (kaas_sub_open(s->lower, path, KAAS_O_READ, 0, &rf) == 0) {
				struct undo *u = calloc(1, sizeof *u);
				u->saved = malloc(st.size);
				u->savedlen = (size_t)st.size;
				u->off = 0;
				u->oldsize = st.size;
				kaas_sub_pread_full(rf, u->saved, u->savedlen, 0);
				kaas_sub_close(rf);
				struct pathrec *p = find_path(s, path, 1);
				u->next = p->undo;
				p->undo = u;
			}
		}
	}
	CF(f)->id = ++s->next_handle_id;
	return kaas_sub_open(s->lower, path, flags, mode, &CF(f)->lower);
}

static int cs_close(struct kaas_file *f)
{
	/* Closing is allowed after a crash: the handle must be released. */
	return kaas_sub_close(CF(f)->lower);
}

static ssize_t cs_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	int rc = gate(CS(f->sub));
	if (rc < 0)
		return rc;
	return kaas_sub_pread(CF(f)->lower, buf, len, off);
}

/* Record how to undo a change of f's file at [off, off+len) (a write, or a
 * truncate: len 0 when it grows the file) made while the file is oldsize
 * bytes long: the bytes it overwrites, and the old size.  0 or -errno. */
static int save_undo(struct crash_sub *s, struct kaas_file *f, uint64_t off, uint64_t len,
		     uint64_t oldsize)
{
	struct undo *u = calloc(1, sizeof *u);
	if (!u)
		return -ENOMEM;
	u->off = off;
	u->oldsize = oldsize;
	if (off < oldsize) {
		u->savedlen = (size_t)((off + len <= oldsize) ? len : oldsize - off);
		u->saved = malloc(u->savedlen);
		if (!u->saved || kaas_sub_pread_full(CF(f)->lower, u->saved, u->savedlen, off) !=
					 (ssize_t)u->savedlen) {
			free(u->saved);
			free(u);
			return kaas_sub_fail(EIO, "crashsub: cannot save undo bytes of %s", f->path);
		}
	}
	u->writer = CF(f)->id;
	struct pathrec *p = find_path(s, f->path, 1);
	u->next = p->undo;
	p->undo = u;
	return 0;
}

/* gate, then save_undo for a write of len bytes at off or (truncate) a
 * truncate to size off, measured against the file's size now. */
static int gate_change(struct kaas_file *f, uint64_t off, uint64_t len, int truncate)
{
	struct crash_sub *s = CS(f->sub);
	int rc = gate(s);
	if (rc < 0)
		return rc;
	struct kaas_stat st;
	rc = kaas_sub_fstat(CF(f)->lower, &st);
	if (rc < 0)
		return rc;
	if (truncate) {
		len = off < st.size ? st.size - off : 0;
		off = off < st.size ? off : st.size;
	}
	return save_undo(s, f, off, len, st.size);
}

static ssize_t cs_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	int rc = gate_change(f, off, len, 0);
	return rc < 0 ? rc : kaas_sub_pwrite(CF(f)->lower, buf, len, off);
}

/* Has handle f itself unsynced changes to its file (commit_per_handle)? */
static int has_own_changes(struct crash_sub *s, struct kaas_file *f)
{
	struct pathrec *p = find_path(s, f->path, 0);
	for (struct undo *u = p ? p->undo : NULL; u; u = u->next)
		if (u->writer == CF(f)->id)
			return 1;
	return 0;
}

static int cs_fsync(struct kaas_file *f)
{
	struct crash_sub *s = CS(f->sub);
	int rc = gate_sync(s);
	if (rc < 0)
		return rc;
	/* A kernel NFS client sends no COMMIT for a handle that wrote nothing
	 * (no unstable pages): another handle's unsynced writes stay unsynced. */
	if (s->o.commit_per_handle && !has_own_changes(s, f))
		return 0;
	rc = kaas_sub_fsync(CF(f)->lower);
	if (rc == 0)
		drop_path(s, f->path);
	return rc;
}

static int cs_ftruncate(struct kaas_file *f, uint64_t size)
{
	int rc = gate_change(f, size, 0, 1);
	return rc < 0 ? rc : kaas_sub_ftruncate(CF(f)->lower, size);
}

static int cs_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	int rc = gate(CS(f->sub));
	return rc < 0 ? rc : kaas_sub_fstat(CF(f)->lower, st);
}

static int cs_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	int rc = gate(CS(sub));
	return rc < 0 ? rc : kaas_sub_stat(CS(sub)->lower, path, st);
}

static int cs_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	struct crash_sub *s = CS(sub);
	int rc = gate_crash(s, s->o.crash_at_rename, &s->renames, "rename");
	if (rc < 0)
		return rc;
	rc = kaas_sub_rename(s->lower, from, to);
	if (rc == 0) {
		drop_path(s, to);
		struct pathrec *p = find_path(s, from, 0);
		if (p) {
			free(p->path);
			p->path = strdup(to);
		}
	}
	return rc;
}

static int cs_unlink(struct kaas_substrate *sub, const char *path)
{
	struct crash_sub *s = CS(sub);
	int rc = gate_nth(s, s->o.fail_unlink_at, &s->unlinks, "unlink", path);
	if (rc < 0)
		return rc;
	rc = kaas_sub_unlink(s->lower, path);
	if (rc == 0)
		drop_path(s, path);
	return rc;
}

static int cs_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	int rc = gate(CS(sub));
	return rc < 0 ? rc : kaas_sub_mkdir(CS(sub)->lower, path, mode);
}

static int cs_rmdir(struct kaas_substrate *sub, const char *path)
{
	struct crash_sub *s = CS(sub);
	int rc = gate_nth(s, s->o.fail_rmdir_at, &s->rmdirs, "rmdir", path);
	return rc < 0 ? rc : kaas_sub_rmdir(s->lower, path);
}

static int cs_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	int rc = gate(CS(sub));
	return rc < 0 ? rc : kaas_sub_readdir(CS(sub)->lower, path, cb, arg);
}

static int cs_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	int rc = gate_sync(CS(sub));
	return rc < 0 ? rc : kaas_sub_fsync_dir(CS(sub)->lower, path);
}

static int cs_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	int rc = gate(CS(sub));
	return rc < 0 ? rc : kaas_sub_statfs(CS(sub)->lower, path, out);
}

/* Every op runs under the wrapper's lock, so that code using the substrate
 * from several threads (as the partition log's sync and ack threads do) sees
 * one consistent sequence of ops, counted and crashed in that order. */
#define LOCKED_SUB(s) pthread_mutex_t *mu_ = &CS(s)->mu; pthread_mutex_lock(mu_)
#define UNLOCK() pthread_mutex_unlock(mu_)

static int L_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		  struct kaas_file *f)
{ LOCKED_SUB(sub); int rc = cs_open(sub, path, flags, mode, f); UNLOCK(); return rc; }
static int L_close(struct kaas_file *f)
{ LOCKED_SUB(f->sub); int rc = cs_close(f); UNLOCK(); return rc; }
static ssize_t L_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{ LOCKED_SUB(f->sub); ssize_t rc = cs_pread(f, buf, len, off); UNLOCK(); return rc; }
static ssize_t L_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{ LOCKED_SUB(f->sub); ssize_t rc = cs_pwrite(f, buf, len, off); UNLOCK(); return rc; }
static int L_fsync(struct kaas_file *f)
{ LOCKED_SUB(f->sub); int rc = cs_fsync(f); UNLOCK(); return rc; }
static int L_ftruncate(struct kaas_file *f, uint64_t size)
{ LOCKED_SUB(f->sub); int rc = cs_ftruncate(f, size); UNLOCK(); return rc; }
static int L_fstat(struct kaas_file *f, struct kaas_stat *st)
{ LOCKED_SUB(f->sub); int rc = cs_fstat(f, st); UNLOCK(); return rc; }
static int L_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{ LOCKED_SUB(sub); int rc = cs_stat(sub, path, st); UNLOCK(); return rc; }
static int L_rename(struct kaas_substrate *sub, const char *from, const char *to)
{ LOCKED_SUB(sub); int rc = cs_rename(sub, from, to); UNLOCK(); return rc; }
static int L_unlink(struct kaas_substrate *sub, const char *path)
{ LOCKED_SUB(sub); int rc = cs_unlink(sub, path); UNLOCK(); return rc; }
static int L_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{ LOCKED_SUB(sub); int rc = cs_mkdir(sub, path, mode); UNLOCK(); return rc; }
static int L_rmdir(struct kaas_substrate *sub, const char *path)
{ LOCKED_SUB(sub); int rc = cs_rmdir(sub, path); UNLOCK(); return rc; }
static int L_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{ LOCKED_SUB(sub); int rc = cs_readdir(sub, path, cb, arg); UNLOCK(); return rc; }
static int L_fsync_dir(struct kaas_substrate *sub, const char *path)
{ LOCKED_SUB(sub); int rc = cs_fsync_dir(sub, path); UNLOCK(); return rc; }
static int L_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{ LOCKED_SUB(sub); int rc = cs_statfs(sub, path, out); UNLOCK(); return rc; }

static void L_destroy(struct kaas_substrate *sub)
{
	pthread_mutex_destroy(&CS(sub)->mu);
	cs_destroy(sub);
}

static const struct kaas_substrate_ops crash_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "crashsub",
	.file_size = sizeof(struct crash_file),
	.destroy = L_destroy,
	.open = L_open,
	.close = L_close,
	.pread = L_pread,
	.pwrite = L_pwrite,
	.fsync = L_fsync,
	.ftruncate = L_ftruncate,
	.fstat = L_fstat,
	.stat = L_stat,
	.rename = L_rename,
	.unlink = L_unlink,
	.mkdir = L_mkdir,
	.rmdir = L_rmdir,
	.readdir = L_readdir,
	.fsync_dir = L_fsync_dir,
	.statfs = L_statfs,
};

int kaas_crashsub_wrap(struct kaas_substrate *lower, const struct kaas_crashsub_opts *opts,
		       struct kaas_substrate **out)
{
	struct crash_sub *s = calloc(1, sizeof *s);
	if (!s) {
		kaas_substrate_close(lower);
		return -ENOMEM;
	}
	s->base.ops = &crash_ops;
	s->base.url = strdup(lower->url ? lower->url : "crashsub");
	memcpy(s->base.host, lower->host, sizeof s->base.host);
	s->lower = lower;
	pthread_mutex_init(&s->mu, NULL);
	if (opts)
		s->o = *opts;
	s->rng = s->o.seed ? s->o.seed : 0x9e3779b97f4a7c15ull;
	*out = &s->base;
	return 0;
}

int kaas_crashsub_crashed(struct kaas_substrate *sub)
{
	LOCKED_SUB(sub);
	int c = CS(sub)->crashed;
	UNLOCK();
	return c;
}

void kaas_crashsub_crash_now(struct kaas_substrate *sub)
{
	LOCKED_SUB(sub);
	apply_crash(CS(sub));
	UNLOCK();
}

unsigned kaas_crashsub_count(struct kaas_substrate *sub, enum kaas_crashsub_counter c)
{
	struct crash_sub *s = CS(sub);
	LOCKED_SUB(sub);
	unsigned v = c == KAAS_CS_OPS ? s->ops : c == KAAS_CS_FSYNCS ? s->fsyncs : s->renames;
	UNLOCK();
	return v;
}
