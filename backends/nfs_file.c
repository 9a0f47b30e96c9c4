/*
 * nfs_file.c — the file-handle ops of the libnfs backend: open (with the
 * look-up-again rules for names another host replaced), close, read, write,
 * fsync, truncate and fstat, and how a failed READ/WRITE is told apart
 * (stale handle, dead connection, full volume).
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
#include "backends/posix.h"

/* GETATTR on a handle the server just gave us (or that just failed a
 * READ/WRITE).  nfs-ganesha 4.3 sometimes drops (never answers) an RPC on a
 * handle whose file another client replaced a moment ago, so this one RPC
 * gets a short timeout: the caller looks the name up again instead of
 * waiting the full timeout.  A dead server is still caught by the next
 * RPC, which has the full timeout. */
int probe_getattr(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, struct nfsfh *fh, struct nfs_stat_64 *st)
{
	int short_ms = s->timeout_ms < 2000 ? s->timeout_ms : 2000;
	nfs_set_timeout(c->nfs, short_ms);
	int rc = nfs_fstat64(c->nfs, fh, st);
	nfs_set_timeout(c->nfs, s->timeout_ms);
	return rc;
}

/* libnfs 4.0.0 cannot resynchronise an NFSv4 open-owner whose seqid the
 * server no longer accepts (NFS4ERR_BAD_SEQID: every later OPEN on that
 * context fails).  If the last error says so and no handle is bound to the
 * context but the one being opened, replace the context (a new NFSv4
 * client) and say so, so the open is tried again.  c->lock held. */
int seqid_broken(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c)
{
	const char *msg = nfs_get_error(c->nfs);
	if (!msg || !strstr(msg, "BAD_SEQID"))
		return 0;
	if (kaas_nfs_conn_bound(s, c) > 1)
		return 0;
	return kaas_nfs_conn_reconnect(s, c) == 0;
}

/* A short pause before looking a name up again (0, 1, 2, 4 ... 64 ms). */
static void backoff(int attempt)
{
	if (attempt > 0)
		usleep(1000u << (attempt < 7 ? attempt - 1 : 6));
}

/* An open that failed this way looked up a name whose file another host
 * replaced or removed before the next RPC: look the name up again.
 * nfs-ganesha 4.3 answers some RPCs on such a handle NFS3ERR_IO instead of
 * NFS3ERR_STALE ("nfs3_FhandleToCache"), so EIO counts too, except for an
 * exclusive create (where an EIO may come from the CREATE itself). */
static int stale_like(int rc, int flags)
{
	if (rc == -ESTALE)
		return 1;
	if (flags & KAAS_O_EXCL)
		return 0;
	/* EAGAIN: NFS3ERR_JUKEBOX, the server asks to try again later. */
	return rc == -EIO || rc == -EAGAIN;
}

int kaas_nfs_op_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
			 struct kaas_file *f)
{
	struct kaas_nfs_sub *s = S(sub);
	int o = kaas_posix_open_flags(flags); /* O_DIRECTORY: handled below, by name */
	if (flags & KAAS_O_DIRECTORY) {
		/* A directory handle carries no NFS file handle (libnfs's NFSv4
		 * open refuses directories): fstat goes by name, data ops fail
		 * with -EISDIR, fsync is a no-op (metadata ops are synchronous). */
		struct kaas_stat st;
		int rc = s->base.ops->stat(sub, path, &st);
		if (rc < 0)
			return rc;
		if (st.type != KAAS_FT_DIR)
			return kaas_sub_fail(ENOTDIR, "open %s/%s: not a directory", s->root, path);
		if (flags & KAAS_O_WRITE)
			return kaas_sub_fail(EISDIR, "open %s/%s: a directory cannot be opened for writing", s->root,
					     path);
		F(f)->c = NULL;
		F(f)->fh = NULL;
		return 0;
	}
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return kaas_sub_fail(ENOMEM, "open %s/%s: out of memory", s->root, path);
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_for_file(s, &err);
	if (!c) {
		free(ap);
		return err;
	}
	struct nfsfh *fh = NULL;
	struct nfs_stat_64 st;
	int rc;
	const char *stage = "open";
	for (int attempt = 0;; attempt++) {
		/* A name looked up just before another host replaced or removed
		 * the file it named gives ESTALE on the next RPC: look the name up
		 * again, as the kernel client does.  A connection error re-drives
		 * only a plain open (a create may have happened). */
		stage = "open";
		/* The first tries of a plain open get a short timeout, for the
		 * same dropped-RPC reason as probe_getattr; the last has the
		 * full one, so a dead server still fails in bounded time.  Not
		 * over NFSv4: an OPEN the client gave up on but the server
		 * carried out would desynchronise the open-owner's seqid. */
		int quick = s->version == 3 && !(flags & KAAS_O_EXCL) && attempt < 3;
		if (quick)
			nfs_set_timeout(c->nfs, s->timeout_ms < 2000 ? s->timeout_ms : 2000);
		if (s->version == 3 && (flags & KAAS_O_EXCL)) {
			rc = kaas_nfs_v3_excl_create(s, c, path, ap, o, (int)(mode ? mode : 0644), &fh);
			if (rc < 0) { /* final, detail recorded */
				pthread_mutex_unlock(&c->lock);
				kaas_nfs_conn_unbind(s, c);
				free(ap);
				return rc;
			}
		} else if (s->version == 4 && (flags & KAAS_O_EXCL)) {
			rc = kaas_nfs_v4_excl_create(s, c, path, ap, o, (int)(mode ? mode : 0644), &fh);
		} else {
			rc = nfs_open2(c->nfs, ap, o, (int)(mode ? mode : 0644), &fh);
		}
		if (quick)
			nfs_set_timeout(c->nfs, s->timeout_ms);
		if (rc < 0) {
			rc = -kaas_nfs_map_err(rc, nfs_get_error(c->nfs));
			if (attempt < 10 && stale_like(rc, flags)) {
				backoff(attempt);
				continue;
			}
			if (quick && rc == -ETIMEDOUT)
				continue;
			if (s->version == 4 && attempt < 2 && seqid_broken(s, c))
				continue;
			if (attempt < 1 && !(flags & KAAS_O_CREAT) && kaas_nfs_is_conn_err(rc))
				continue;
			break;
		}
		stage = "open (getattr)";
		rc = probe_getattr(s, c, fh, &st);
		if (rc >= 0)
			break;
		rc = -kaas_nfs_map_err(rc, nfs_get_error(c->nfs));
		char keep[256];
		snprintf(keep, sizeof keep, "%s", nfs_get_error(c->nfs));
		nfs_close(c->nfs, fh);
		fh = NULL;
		/* Never after an exclusive create: it happened, a second try
		 * would answer EEXIST to the creator. */
		if (attempt < 10 && !(flags & KAAS_O_EXCL) && (stale_like(rc, flags) || rc == -ETIMEDOUT)) {
			backoff(attempt);
			continue;
		}
		pthread_mutex_unlock(&c->lock);
		kaas_nfs_conn_unbind(s, c);
		free(ap);
		return kaas_sub_fail(-rc, "%s %s/%s: %s (libnfs: %s)", stage, s->root, path, strerror(-rc), keep);
	}
	if (rc < 0) {
		int e = kaas_nfs_fail(s, c, rc, stage, path);
		pthread_mutex_unlock(&c->lock);
		kaas_nfs_conn_unbind(s, c);
		free(ap);
		return e;
	}
	int e = S_ISDIR(st.nfs_mode) ? EISDIR : 0;
	if (e) {
		nfs_close(c->nfs, fh);
		pthread_mutex_unlock(&c->lock);
		kaas_nfs_conn_unbind(s, c);
		free(ap);
		return kaas_sub_fail(e, "open %s/%s: %s", s->root, path, strerror(e));
	}
	pthread_mutex_unlock(&c->lock);
	free(ap);
	rc = kaas_nfs_ino_ref(s, st.nfs_ino);
	if (rc < 0) {
		pthread_mutex_lock(&c->lock);
		nfs_close(c->nfs, fh);
		pthread_mutex_unlock(&c->lock);
		kaas_nfs_conn_unbind(s, c);
		return kaas_sub_fail(ENOMEM, "open %s/%s: out of memory", s->root, path);
	}
	F(f)->c = c;
	F(f)->fh = fh;
	F(f)->ino = st.nfs_ino;
	return 0;
}

int kaas_nfs_op_close(struct kaas_file *f)
{
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	if (!c) /* a directory handle */
		return 0;
	pthread_mutex_lock(&c->lock);
	int rc = nfs_close(c->nfs, F(f)->fh); /* no client cache: nothing to flush */
	pthread_mutex_unlock(&c->lock);
	kaas_nfs_conn_unbind(s, c);
	char *silly = kaas_nfs_ino_unref(s, F(f)->ino);
	if (silly) {
		int err = 0;
		struct kaas_nfs_conn *b = kaas_nfs_conn_borrow(s, &err);
		if (b) {
			int u = nfs_unlink(b->nfs, silly);
			pthread_mutex_unlock(&b->lock);
			/* A silly file left behind (server gone) is removed by
			 * the next convergent sweep of the directory. */
			(void)u;
		}
		free(silly);
	}
	return rc < 0 ? kaas_nfs_fail(s, NULL, rc, "close", f->path) : 0;
}

/* libnfs 4.0.0 reports every failed READ or WRITE as -EFAULT with no
 * status text, whether the server answered NFS3ERR_STALE, NFS3ERR_NOSPC or
 * the connection broke.  Find out which: a GETATTR on the same handle tells
 * a stale handle and a dead connection apart; for a write, the volume's free
 * space tells ENOSPC.  Called with c->lock held; records the detail. */
/* After a failed READ/WRITE whose GETATTR timed out: look the handle's
 * name up again.  -ESTALE if it is gone or names another file id (another
 * host removed or replaced it: the caller re-opens by name), else -EIO (the
 * op failed; nothing says the handle is stale) with *silent set: the server
 * may only have dropped the two RPCs (see probe_getattr), and a read may
 * be sent once more.  c->lock held. */
int timed_out_probe(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, struct kaas_file *f, const char *what,
		    int *silent)
{
	const char *op = !strcmp(what, "write") ? "WRITE" : "READ";
	char *ap = kaas_nfs_abspath(f->path);
	struct nfs_stat_64 n;
	int rc = ap ? nfs_stat64(c->nfs, ap, &n) : -ENOMEM;
	free(ap);
	if (rc == 0 && F(f)->ino && n.nfs_ino != F(f)->ino)
		return kaas_sub_fail(ESTALE, "%s %s/%s: the server refused the %s and the name now names "
				     "another file (replaced: stale)", what, s->root, f->path, op);
	if (rc < 0 && kaas_nfs_map_err(rc, nfs_get_error(c->nfs)) == ENOENT)
		return kaas_sub_fail(ESTALE, "%s %s/%s: the server refused the %s and the name is gone "
				     "(removed: stale)", what, s->root, f->path, op);
	*silent = 1;
	return kaas_sub_fail(EIO, "%s %s/%s: the server refused the %s, then a GETATTR on the handle "
			     "timed out", what, s->root, f->path, op);
}

int io_failure(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, struct kaas_file *f, int rc, const char *what,
		      size_t len, int *silent)
{
	*silent = 0;
	if (rc != -EFAULT)
		return kaas_nfs_fail(s, c, rc, what, f->path);
	struct nfs_stat_64 n;
	int g = probe_getattr(s, c, F(f)->fh, &n);
	if (g < 0) {
		const char *msg = nfs_get_error(c->nfs);
		int e = kaas_nfs_map_err(g, msg);
		/* The server answered the READ/WRITE with an error libnfs
		 * cannot name, then did not answer a GETATTR on the same handle
		 * (ETIMEDOUT): maybe the dropped-request behaviour on a stale
		 * handle (see probe_getattr), maybe a slow or failing server.
		 * A silence proves nothing: ESTALE only if the name now names
		 * another file (or none), else EIO. */
		if (e == ETIMEDOUT)
			return timed_out_probe(s, c, f, what, silent);
		/* nfs-ganesha 4.3 answers some RPCs on the handle of a removed
		 * file NFS3ERR_IO ("nfs3_FhandleToCache"): a READ/WRITE failure
		 * whose handle cannot even be GETATTRed is reported as ESTALE, so
		 * the caller re-opens by name (and meets a real EIO again there). */
		if (e == EIO)
			return kaas_sub_fail(ESTALE, "%s %s/%s: %s (the handle cannot be resolved: stale)", what,
					     s->root, f->path, msg && *msg ? msg : strerror(e));
		return kaas_sub_fail(e, "%s %s/%s: %s", what, s->root, f->path, msg && *msg ? msg : strerror(e));
	}
	if (!strcmp(what, "write")) {
		struct nfs_statvfs_64 v;
		if (nfs_statvfs64(c->nfs, "/", &v) == 0 && v.f_bavail * v.f_frsize < len)
			return kaas_sub_fail(ENOSPC, "%s %s/%s: the server refused the WRITE and the volume is full",
					     what, s->root, f->path);
	}
	return kaas_sub_fail(EIO, "%s %s/%s: the server refused the %s (libnfs 4.0 does not say why)", what,
			     s->root, f->path, !strcmp(what, "write") ? "WRITE" : "READ");
}

ssize_t kaas_nfs_op_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	if (!F(f)->c)
		return kaas_sub_fail(EISDIR, "%s %s/%s: is a directory", "read", S(f->sub)->root, f->path);
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	if (len == 0)
		return 0;
	pthread_mutex_lock(&c->lock);
	uint64_t max = nfs_get_readmax(c->nfs);
	if (max && len > max)
		len = (size_t)max;
	ssize_t r;
	for (int attempt = 0;; attempt++) {
		int rc = nfs_pread(c->nfs, F(f)->fh, off, len, buf);
		if (rc >= 0) {
			r = rc;
			break;
		}
		int silent;
		r = io_failure(s, c, f, rc, "read", len, &silent);
		/* A read is safe to send again once the connection is back, or
		 * when the server fell silent on a handle whose name still
		 * names the same file (a dropped request, not a stale handle). */
		if (attempt > 0 || !(kaas_nfs_is_conn_err((int)r) || silent))
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

ssize_t kaas_nfs_op_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	if (!F(f)->c)
		return kaas_sub_fail(EISDIR, "%s %s/%s: is a directory", "write", S(f->sub)->root, f->path);
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	if (len == 0)
		return 0;
	if (len > c->writemax && c->writemax)
		len = (size_t)c->writemax;
	pthread_mutex_lock(&c->lock);
	nfs_fh3 fh3;
	ssize_t r;
	if (s->version == 3 && kaas_nfs_fh3(F(f)->fh, &fh3) == 0) {
		r = kaas_nfs_v3_write(s, f, buf, len, off, &fh3);
	} else {
		int rc = nfs_pwrite(c->nfs, F(f)->fh, off, len, buf);
		int silent;
		r = rc < 0 ? io_failure(s, c, f, rc, "write", len, &silent) : rc;
	}
	pthread_mutex_unlock(&c->lock);
	if (r == 0) /* the server accepted nothing: no progress */
		return kaas_sub_fail(EIO, "write %s/%s: server wrote 0 of %zu bytes", s->root, f->path, len);
	return r;
}

int kaas_nfs_op_fsync(struct kaas_file *f)
{
	if (!F(f)->c) /* directory: metadata ops are synchronous on NFS */
		return 0;
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	pthread_mutex_lock(&c->lock);
	nfs_fh3 fh3;
	int r;
	if (s->version == 3 && kaas_nfs_fh3(F(f)->fh, &fh3) == 0) {
		r = kaas_nfs_v3_commit(s, f, &fh3); /* COMMIT + verifier check; never re-driven */
	} else {
		int rc = nfs_fsync(c->nfs, F(f)->fh); /* COMMIT; never re-driven */
		r = rc < 0 ? kaas_nfs_fail(s, c, rc, "fsync (COMMIT)", f->path) : 0;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

int kaas_nfs_op_ftruncate(struct kaas_file *f, uint64_t size)
{
	if (!F(f)->c)
		return kaas_sub_fail(EISDIR, "%s %s/%s: is a directory", "truncate", S(f->sub)->root, f->path);
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	pthread_mutex_lock(&c->lock);
	int rc = nfs_ftruncate(c->nfs, F(f)->fh, size);
	int r = rc < 0 ? kaas_nfs_fail(s, c, rc, "truncate", f->path) : 0;
	pthread_mutex_unlock(&c->lock);
	return r;
}

int kaas_nfs_op_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	if (!F(f)->c)
		return f->sub->ops->stat(f->sub, f->path, st);
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	struct nfs_stat_64 n;
	pthread_mutex_lock(&c->lock);
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = nfs_fstat64(c->nfs, F(f)->fh, &n);
		if (rc >= 0 || attempt > 0 || !kaas_nfs_is_conn_err(-kaas_nfs_map_err(rc, nfs_get_error(c->nfs))))
			break;
	}
	int r = rc < 0 ? kaas_nfs_fail(s, c, rc, "fstat", f->path) : 0;
	pthread_mutex_unlock(&c->lock);
	if (r == 0)
		kaas_nfs_fill_stat(&n, st);
	return r;
}
