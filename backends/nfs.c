/* nfs.c — the substrate over libnfs (no mount); see nfs.h for the contract. */
#include "backends/nfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "backends/nfs_rpc.h"
#include "backends/nfs_sub.h"
#include "backends/nfs_url.h"

/* The files of this substrate that are open, by server file id, for silly
 * rename (under sub->lock). */
struct open_ino {
	struct open_ino *next;
	uint64_t ino;
	unsigned refs;
	char *silly; /* set once unlinked while open: remove at last close */
};

/* Whether to send an op by name again after it failed with rc: ESTALE
 * (a name looked up just before another host replaced it: look it up
 * again, a few times) or, once, a connection error on an op safe to repeat
 * (idem).  The server answers ESTALE only for a handle in the request, so
 * the op itself did not happen and repeating it is safe. */
static int again(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, int attempt, int idem)
{
	int e = -kaas_nfs_map_err(rc, nfs_get_error(c->nfs));
	if (e == -ESTALE)
		return attempt < 4;
	return idem && attempt == 0 && kaas_nfs_redrive(s, c, e);
}

/* ------------------------------------------------------------------ */
/* Open files by server file id (silly rename)                          */

static struct open_ino *ino_find(struct kaas_nfs_sub *s, uint64_t ino)
{
	for (struct open_ino *o = s->inos; o; o = o->next)
		if (o->ino == ino)
			return o;
	return NULL;
}

static int ino_ref(struct kaas_nfs_sub *s, uint64_t ino)
{
	pthread_mutex_lock(&s->lock);
	struct open_ino *o = ino_find(s, ino);
	if (!o) {
		o = calloc(1, sizeof *o);
		if (!o) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		o->ino = ino;
		o->next = s->inos;
		s->inos = o;
	}
	o->refs++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Drop a reference; returns the silly name to remove (malloc'd) if this was
 * the last handle on an unlinked-while-open file, else NULL. */
static char *ino_unref(struct kaas_nfs_sub *s, uint64_t ino)
{
	char *silly = NULL;
	pthread_mutex_lock(&s->lock);
	for (struct open_ino **pp = &s->inos; *pp; pp = &(*pp)->next) {
		struct open_ino *o = *pp;
		if (o->ino != ino)
			continue;
		if (--o->refs == 0) {
			silly = o->silly;
			*pp = o->next;
			free(o);
		}
		break;
	}
	pthread_mutex_unlock(&s->lock);
	return silly;
}

/* ------------------------------------------------------------------ */
/* NFSv3 WRITE/COMMIT with write verifiers, exclusive CREATE (nfs_rpc.h)  */

/* libnfs 4.0.0's nfs_pwrite/nfs_fsync send UNSTABLE writes and a COMMIT but
 * never look at the write verifiers, so a server that restarts between
 * them (losing its unstable data) goes unnoticed and the COMMIT "succeeds".
 * With NFSv3 this backend sends WRITE and COMMIT itself (nfs_rpc.c) and
 * compares the verifiers, as the kernel client does.  If a handle does not
 * look like libnfs's (a future libnfs), the libnfs calls are used instead. */

/* The errno of a finished call (0 on success), detail recorded. */
static int call_result(struct kaas_nfs_sub *s, const char *path, const char *what, const struct kaas_nfs_call *r)
{
	int e = kaas_nfs_call_errno(r);
	if (e == 0)
		return 0;
	if (e == ETIMEDOUT || e == ECONNRESET)
		return kaas_sub_fail(e, "%s %s/%s: %s (%s)", what, s->root, path, strerror(e), r->err);
	return kaas_sub_fail(e, "%s %s/%s: %s (the server answered NFS3 status %d)", what, s->root, path,
			     strerror(e), r->nfs_status);
}

/* NFSv3 exclusive create, the real one: CREATE in EXCLUSIVE mode with a
 * verifier unique to this attempt.  The server creates the name only if it
 * does not exist, atomically, and remembers the verifier, so a CREATE that
 * libnfs re-sends after a dropped connection is answered "created" for the
 * client that created it (GUARDED, what libnfs's O_EXCL sends, would answer
 * EEXIST and make the winner believe it lost).  EXCLUSIVE carries no
 * attributes, so a SETATTR then sets the mode and resets the times the
 * server used to store the verifier.  Finally the new file is opened by
 * name and checked to be the one created.  c->lock held.  Returns 0 with
 * *fh, or the final -errno with the detail recorded. */
static int v3_excl_create(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, const char *path, const char *ap, int o, int mode,
			  struct nfsfh **fh)
{
	static unsigned seq;
	char *dir = kaas_path_dirname(path);
	char *adir = dir ? kaas_nfs_abspath(dir) : NULL;
	free(dir);
	if (!adir)
		return kaas_sub_fail(ENOMEM, "open %s/%s: out of memory", s->root, path);
	struct nfsfh *dfh = NULL;
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = nfs_open2(c->nfs, adir, O_RDONLY, 0, &dfh);
		if (rc >= 0 || !again(s, c, rc, attempt, 1))
			break;
	}
	free(adir);
	if (rc < 0)
		return kaas_nfs_fail(s, c, rc, "open (parent directory)", path);
	nfs_fh3 d3;
	if (kaas_nfs_fh3(dfh, &d3) < 0) { /* unknown libnfs layout: libnfs's GUARDED create */
		nfs_close(c->nfs, dfh);
		rc = nfs_open2(c->nfs, ap, o, mode, fh);
		return rc < 0 ? kaas_nfs_fail(s, c, rc, "open", path) : 0;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t v = ((uint64_t)getpid() << 40) ^ ((uint64_t)__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED) << 20) ^
		     (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)s;
	char verf[NFS3_CREATEVERFSIZE];
	memcpy(verf, &v, sizeof verf);
	struct kaas_nfs_call r;
	rc = kaas_nfs_create3_exclusive(c->nfs, &d3, kaas_path_basename(path), verf, &r);
	nfs_close(c->nfs, dfh);
	if (rc < 0)
		return kaas_sub_fail(ENOMEM, "open %s/%s: cannot queue the CREATE", s->root, path);
	rc = call_result(s, path, "create (exclusive)", &r);
	if (rc < 0)
		return rc;
	/* Set the mode; reset the times that held the verifier. */
	if (r.fh_len) {
		struct kaas_nfs_call r2;
		if (kaas_nfs_setattr3_mode_now(c->nfs, r.fh, r.fh_len, (uint32_t)mode, &r2) < 0)
			return kaas_sub_fail(ENOMEM, "open %s/%s: cannot queue the SETATTR", s->root, path);
		rc = call_result(s, path, "create (exclusive, setattr)", &r2);
		if (rc < 0)
			return rc;
	}
	rc = nfs_open2(c->nfs, ap, o & ~(O_CREAT | O_EXCL | O_TRUNC), 0, fh);
	if (rc < 0)
		return kaas_nfs_fail(s, c, rc, "open (after exclusive create)", path);
	if (r.have_fileid) {
		struct nfs_stat_64 st;
		rc = nfs_fstat64(c->nfs, *fh, &st);
		if (rc < 0 || st.nfs_ino != r.fileid) {
			int e = rc < 0 ? kaas_nfs_fail(s, c, rc, "open (after exclusive create)", path)
				       : kaas_sub_fail(ESTALE, "open %s/%s: created it, but another host replaced "
							       "it before it could be opened", s->root, path);
			nfs_close(c->nfs, *fh);
			*fh = NULL;
			return e;
		}
	}
	return 0;
}

/* One UNSTABLE WRITE; returns bytes written or -errno.  c->lock held. */
static ssize_t v3_write(struct kaas_nfs_sub *s, struct kaas_file *f, const void *buf, size_t len, uint64_t off,
			const nfs_fh3 *fh3)
{
	struct kaas_nfs_call r;
	if (kaas_nfs_write3(F(f)->c->nfs, fh3, buf, len, off, &r) < 0)
		return kaas_sub_fail(ENOMEM, "write %s/%s: cannot queue the WRITE", s->root, f->path);
	int e = call_result(s, f->path, "write", &r);
	if (e < 0)
		return e;
	if (r.committed != FILE_SYNC) {
		if (!F(f)->unstable)
			memcpy(F(f)->verf, r.verf, sizeof r.verf);
		else if (memcmp(F(f)->verf, r.verf, sizeof r.verf) != 0)
			F(f)->verf_changed = 1;
		F(f)->unstable = 1;
	}
	return (ssize_t)r.count;
}

/* COMMIT, then check the verifier against the writes'.  c->lock held. */
static int v3_commit(struct kaas_nfs_sub *s, struct kaas_file *f, const nfs_fh3 *fh3)
{
	struct kaas_nfs_call r;
	if (kaas_nfs_commit3(F(f)->c->nfs, fh3, &r) < 0)
		return kaas_sub_fail(ENOMEM, "fsync (COMMIT) %s/%s: cannot queue the COMMIT", s->root, f->path);
	int e = call_result(s, f->path, "fsync (COMMIT)", &r);
	if (e < 0)
		return e;
	if (F(f)->unstable && (F(f)->verf_changed || memcmp(F(f)->verf, r.verf, sizeof r.verf) != 0))
		return kaas_sub_fail(EIO, "fsync (COMMIT) %s/%s: the server's write verifier changed since the "
				     "unstable writes (it restarted): they may be lost", s->root, f->path);
	F(f)->unstable = 0;
	F(f)->verf_changed = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Ops                                                                  */

static void fill_stat(const struct nfs_stat_64 *n, struct kaas_stat *st)
{
	st->size = n->nfs_size;
	st->mtime_ns = (int64_t)n->nfs_mtime * 1000000000 + (int64_t)n->nfs_mtime_nsec;
	st->ino = n->nfs_ino;
	st->mode = (uint32_t)(n->nfs_mode & 07777);
	st->nlink = (uint32_t)n->nfs_nlink;
	st->type = S_ISDIR(n->nfs_mode) ? KAAS_FT_DIR : S_ISREG(n->nfs_mode) ? KAAS_FT_FILE : KAAS_FT_OTHER;
}

static void nfs_sub_destroy(struct kaas_substrate *sub)
{
	struct kaas_nfs_sub *s = S(sub);
	for (unsigned i = 0; i < s->nconns; i++) {
		struct kaas_nfs_conn *c = s->conns[i];
		if (c->nfs)
			nfs_destroy_context(c->nfs);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
	while (s->inos) {
		struct open_ino *o = s->inos;
		s->inos = o->next;
		free(o->silly);
		free(o);
	}
	pthread_mutex_destroy(&s->lock);
	free(s->root);
	free(s->liburl);
	free(s);
}

/* GETATTR on a handle the server just gave us (or that just failed a
 * READ/WRITE).  nfs-ganesha 4.3 sometimes drops (never answers) an RPC on a
 * handle whose file another client replaced a moment ago, so this one RPC
 * gets a short timeout: the caller looks the name up again instead of
 * waiting the full timeout.  A dead server is still caught by the next
 * RPC, which has the full timeout. */
static int probe_getattr(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, struct nfsfh *fh, struct nfs_stat_64 *st)
{
	int short_ms = s->timeout_ms < 2000 ? s->timeout_ms : 2000;
	nfs_set_timeout(c->nfs, short_ms);
	int rc = nfs_fstat64(c->nfs, fh, st);
	nfs_set_timeout(c->nfs, s->timeout_ms);
	return rc;
}

/* NFSv4 exclusive create.  libnfs 4.0.0's NFSv4 open with O_EXCL looks the
 * name up and then creates it unchecked, so racing clients can all "win"
 * (kaasctl substrate-check saw four winners in one round).  Instead: create
 * a file under a name private to this client in the target's directory,
 * LINK it to the target name (the server fails a LINK onto an existing name
 * atomically: the classic exclusive create of NFSv2 days), then remove the
 * private name.  The handle stays open on the file that won.  A private
 * name left by a crash between CREATE and REMOVE is ".kaas-excl.*" garbage
 * that no reader takes for data; sweeps remove it by its incarnation
 * (contract.h: kaas_sweep_temps, kaas_sweep_stale).
 * The private name must be a NEW file: a leftover one may be a hard link to
 * a live document (a crash after the LINK, before the REMOVE), and opening
 * it would hand out that document's inode to be overwritten in place.  So
 * the name carries this process's incarnation (an earlier life with the same
 * pid, PID 1 in a container, never made it), and it is opened with O_EXCL
 * (with libnfs's look-up-then-create, enough for a name no one else makes),
 * trying the next sequence number if it exists.  Called with c->lock held;
 * returns 0 or libnfs's -errno. */
static int v4_excl_create(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, const char *path, const char *ap, int o, int mode,
			  struct nfsfh **fh)
{
	char *dir = kaas_path_dirname(path);
	if (!dir)
		return -ENOMEM;
	char *atmp = NULL;
	int rc = -EEXIST;
	for (int attempt = 0; attempt < 8 && rc == -EEXIST; attempt++) {
		char name[160];
		if (kaas_private_name(name, sizeof name, KAAS_EXCL_PREFIX,
				      s->base.host[0] ? s->base.host : "host") < 0) {
			rc = -ENAMETOOLONG;
			break;
		}
		char *tmp = kaas_path_join(dir, name);
		free(atmp);
		atmp = tmp ? kaas_nfs_abspath(tmp) : NULL;
		free(tmp);
		if (!atmp) {
			rc = -ENOMEM;
			break;
		}
		rc = nfs_open2(c->nfs, atmp, (o & ~O_TRUNC) | O_CREAT | O_EXCL, mode, fh);
	}
	free(dir);
	if (rc < 0) {
		free(atmp);
		return rc;
	}
	/* libnfs 4.0.0's NFSv4 create does not apply the mode: set it. */
	rc = nfs_fchmod(c->nfs, *fh, mode);
	if (rc == 0)
		rc = nfs_link(c->nfs, atmp, ap);
	char keep[256] = "";
	if (rc < 0)
		snprintf(keep, sizeof keep, "%s", nfs_get_error(c->nfs));
	nfs_unlink(c->nfs, atmp);
	free(atmp);
	if (rc < 0) {
		nfs_close(c->nfs, *fh);
		*fh = NULL;
		/* keep the LINK's error text for the caller's message */
		if (keep[0])
			kaas_sub_fail(EIO, "%s", keep);
		return rc;
	}
	return 0;
}

/* libnfs 4.0.0 cannot resynchronise an NFSv4 open-owner whose seqid the
 * server no longer accepts (NFS4ERR_BAD_SEQID: every later OPEN on that
 * context fails).  If the last error says so and no handle is bound to the
 * context but the one being opened, replace the context (a new NFSv4
 * client) and say so, so the open is tried again.  c->lock held. */
static int seqid_broken(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c)
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

static int nfs_sub_openf(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
			 struct kaas_file *f)
{
	struct kaas_nfs_sub *s = S(sub);
	int o = 0;
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
			rc = v3_excl_create(s, c, path, ap, o, (int)(mode ? mode : 0644), &fh);
			if (rc < 0) { /* final, detail recorded */
				pthread_mutex_unlock(&c->lock);
				kaas_nfs_conn_unbind(s, c);
				free(ap);
				return rc;
			}
		} else if (s->version == 4 && (flags & KAAS_O_EXCL)) {
			rc = v4_excl_create(s, c, path, ap, o, (int)(mode ? mode : 0644), &fh);
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
	rc = ino_ref(s, st.nfs_ino);
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

static int nfs_sub_close(struct kaas_file *f)
{
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	if (!c) /* a directory handle */
		return 0;
	pthread_mutex_lock(&c->lock);
	int rc = nfs_close(c->nfs, F(f)->fh); /* no client cache: nothing to flush */
	pthread_mutex_unlock(&c->lock);
	kaas_nfs_conn_unbind(s, c);
	char *silly = ino_unref(s, F(f)->ino);
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
 * op failed; nothing says the handle is stale).  c->lock held. */
static int timed_out_probe(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, struct kaas_file *f, const char *what)
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
	return kaas_sub_fail(EIO, "%s %s/%s: the server refused the %s, then a GETATTR on the handle "
			     "timed out", what, s->root, f->path, op);
}

static int io_failure(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, struct kaas_file *f, int rc, const char *what,
		      size_t len)
{
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
			return timed_out_probe(s, c, f, what);
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

static ssize_t nfs_sub_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
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
		r = io_failure(s, c, f, rc, "read", len);
		/* A read is safe to send again once the connection is back. */
		if (attempt > 0 || !kaas_nfs_is_conn_err((int)r))
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

static ssize_t nfs_sub_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
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
		r = v3_write(s, f, buf, len, off, &fh3);
	} else {
		int rc = nfs_pwrite(c->nfs, F(f)->fh, off, len, buf);
		r = rc < 0 ? io_failure(s, c, f, rc, "write", len) : rc;
	}
	pthread_mutex_unlock(&c->lock);
	if (r == 0) /* the server accepted nothing: no progress */
		return kaas_sub_fail(EIO, "write %s/%s: server wrote 0 of %zu bytes", s->root, f->path, len);
	return r;
}

static int nfs_sub_fsync(struct kaas_file *f)
{
	if (!F(f)->c) /* directory: metadata ops are synchronous on NFS */
		return 0;
	struct kaas_nfs_sub *s = S(f->sub);
	struct kaas_nfs_conn *c = F(f)->c;
	pthread_mutex_lock(&c->lock);
	nfs_fh3 fh3;
	int r;
	if (s->version == 3 && kaas_nfs_fh3(F(f)->fh, &fh3) == 0) {
		r = v3_commit(s, f, &fh3); /* COMMIT + verifier check; never re-driven */
	} else {
		int rc = nfs_fsync(c->nfs, F(f)->fh); /* COMMIT; never re-driven */
		r = rc < 0 ? kaas_nfs_fail(s, c, rc, "fsync (COMMIT)", f->path) : 0;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

static int nfs_sub_ftruncate(struct kaas_file *f, uint64_t size)
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

static int nfs_sub_fstat(struct kaas_file *f, struct kaas_stat *st)
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
		fill_stat(&n, st);
	return r;
}

static int nfs_sub_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	struct nfs_stat_64 n;
	int r = 0;
	do {
		int err_ = 0;
		struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err_);
		if (!c) {
			r = err_;
			break;
		}
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_stat64(c->nfs, ap, &n);
			if (rc >= 0 || !again(s, c, rc, attempt, 1))
				break;
		}
		r = rc < 0 ? kaas_nfs_fail(s, c, rc, "stat", path) : 0;
		pthread_mutex_unlock(&c->lock);
	} while (0);
	free(ap);
	if (r == 0)
		fill_stat(&n, st);
	return r;
}

static int nfs_sub_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	struct kaas_nfs_sub *s = S(sub);
	char *af = kaas_nfs_abspath(from), *at = kaas_nfs_abspath(to);
	int r = 0;
	if (!af || !at) {
		r = -ENOMEM;
	} else {
		int err = 0;
		struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
		if (!c) {
			r = err;
		} else {
			int rc;
			for (int attempt = 0;; attempt++) {
				rc = nfs_rename(c->nfs, af, at);
				if (rc >= 0 || !again(s, c, rc, attempt, 0))
					break;
			}
			if (rc < 0) {
				const char *msg = nfs_get_error(c->nfs);
				int e = kaas_nfs_map_err(rc, msg);
				r = kaas_sub_fail(e, "rename %s/%s -> %s: %s", s->root, from, to,
						  msg && *msg ? msg : strerror(e));
			}
			pthread_mutex_unlock(&c->lock);
		}
	}
	free(af);
	free(at);
	return r;
}

static int silly_name(struct kaas_nfs_sub *s, const char *path, uint64_t ino, char **out)
{
	char *dir = kaas_path_dirname(path);
	if (!dir)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	unsigned n = ++s->silly_seq;
	pthread_mutex_unlock(&s->lock);
	char name[64];
	snprintf(name, sizeof name, ".nfs%016" PRIx64 "%08x", ino, n);
	char *p = kaas_path_join(dir, name);
	free(dir);
	if (!p)
		return -ENOMEM;
	*out = p;
	return 0;
}

static int nfs_sub_unlink(struct kaas_substrate *sub, const char *path)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		free(ap);
		return err;
	}
	int r = 0;
	pthread_mutex_lock(&s->lock);
	int any_open = s->inos != NULL;
	pthread_mutex_unlock(&s->lock);
	struct nfs_stat_64 n;
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = nfs_stat64(c->nfs, ap, &n); /* also tells a directory from a file */
		if (rc >= 0 || !again(s, c, rc, attempt, 1))
			break;
	}
	if (rc < 0) {
		r = kaas_nfs_fail(s, c, rc, "unlink", path);
		goto out;
	}
	if (S_ISDIR(n.nfs_mode)) {
		r = kaas_sub_fail(EISDIR, "unlink %s/%s: is a directory", s->root, path);
		goto out;
	}
	if (any_open) {
		pthread_mutex_lock(&s->lock);
		struct open_ino *o = ino_find(s, n.nfs_ino);
		int open_here = o != NULL, already_silly = o && o->silly;
		pthread_mutex_unlock(&s->lock);
		if (open_here && already_silly) {
			r = kaas_sub_fail(EBUSY, "unlink %s/%s: a silly-renamed file still open on this host",
					  s->root, path);
			goto out;
		}
		if (open_here) {
			/* Open on this host: rename it aside; the last close removes it. */
			char *silly = NULL;
			r = silly_name(s, path, n.nfs_ino, &silly);
			if (r < 0)
				goto out;
			char *asilly = kaas_nfs_abspath(silly);
			rc = asilly ? nfs_rename(c->nfs, ap, asilly) : -ENOMEM;
			free(asilly);
			if (rc < 0) {
				r = kaas_nfs_fail(s, c, rc, "unlink (silly rename)", path);
				free(silly);
				goto out;
			}
			pthread_mutex_lock(&s->lock);
			o = ino_find(s, n.nfs_ino);
			if (o && !o->silly) {
				o->silly = kaas_nfs_abspath(silly);
			} else if (!o) {
				/* Closed meanwhile: remove it now. */
				pthread_mutex_unlock(&s->lock);
				char *asl = kaas_nfs_abspath(silly);
				if (asl)
					nfs_unlink(c->nfs, asl);
				free(asl);
				pthread_mutex_lock(&s->lock);
			}
			pthread_mutex_unlock(&s->lock);
			free(silly);
			goto out;
		}
	}
	for (int attempt = 0;; attempt++) {
		rc = nfs_unlink(c->nfs, ap);
		if (rc >= 0 || !again(s, c, rc, attempt, 0))
			break;
	}
	if (rc < 0)
		r = kaas_nfs_fail(s, c, rc, "unlink", path);
out:
	pthread_mutex_unlock(&c->lock);
	free(ap);
	return r;
}

static int nfs_sub_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int r = 0;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		r = err;
	} else {
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_mkdir2(c->nfs, ap, (int)(mode ? mode : 0755));
			if (rc >= 0 || !again(s, c, rc, attempt, 0))
				break;
		}
		if (rc < 0)
			r = kaas_nfs_fail(s, c, rc, "mkdir", path);
		pthread_mutex_unlock(&c->lock);
	}
	free(ap);
	return r;
}

static int nfs_sub_rmdir(struct kaas_substrate *sub, const char *path)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int r = 0;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		r = err;
	} else {
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_rmdir(c->nfs, ap);
			if (rc >= 0 || !again(s, c, rc, attempt, 0))
				break;
		}
		if (rc < 0) {
			const char *msg = nfs_get_error(c->nfs);
			int e = kaas_nfs_map_err(rc, msg);
			if (e == EEXIST)
				e = ENOTEMPTY;
			r = kaas_sub_fail(e, "rmdir %s/%s: %s", s->root, path, msg && *msg ? msg : strerror(e));
		}
		pthread_mutex_unlock(&c->lock);
	}
	free(ap);
	return r;
}

static enum kaas_file_type dirent_type(const struct nfsdirent *d)
{
	if (S_ISDIR(d->mode) || d->type == NF3DIR)
		return KAAS_FT_DIR;
	if (S_ISREG(d->mode) || d->type == NF3REG)
		return KAAS_FT_FILE;
	return KAAS_FT_OTHER;
}

static int nfs_sub_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		free(ap);
		return err;
	}
	struct nfsdir *d = NULL;
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = nfs_opendir(c->nfs, ap, &d);
		if (rc >= 0 || !again(s, c, rc, attempt, 1))
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

static int nfs_sub_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	/* NFS metadata ops (CREATE, RENAME, REMOVE, MKDIR) are synchronous on
	 * the server: nothing to flush.  Report a missing directory though. */
	struct kaas_stat st;
	int rc = nfs_sub_stat(sub, path, &st);
	if (rc < 0)
		return rc;
	if (st.type != KAAS_FT_DIR)
		return kaas_sub_fail(ENOTDIR, "fsync dir %s/%s: not a directory", S(sub)->root, path);
	return 0;
}

static int nfs_sub_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap = kaas_nfs_abspath(path);
	if (!ap)
		return -ENOMEM;
	struct nfs_statvfs_64 v;
	int r = 0;
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_borrow(s, &err);
	if (!c) {
		r = err;
	} else {
		int rc;
		for (int attempt = 0;; attempt++) {
			rc = nfs_statvfs64(c->nfs, ap, &v);
			if (rc >= 0 || !again(s, c, rc, attempt, 1))
				break;
		}
		if (rc < 0)
			r = kaas_nfs_fail(s, c, rc, "statfs", path);
		pthread_mutex_unlock(&c->lock);
	}
	free(ap);
	if (r == 0) {
		out->total_bytes = v.f_blocks * v.f_frsize;
		out->free_bytes = v.f_bavail * v.f_frsize;
		out->total_files = v.f_files;
		out->free_files = v.f_favail;
	}
	return r;
}

static const struct kaas_substrate_ops nfs_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "nfs",
	.file_size = sizeof(struct kaas_nfs_file),
	.destroy = nfs_sub_destroy,
	.open = nfs_sub_openf,
	.close = nfs_sub_close,
	.pread = nfs_sub_pread,
	.pwrite = nfs_sub_pwrite,
	.fsync = nfs_sub_fsync,
	.ftruncate = nfs_sub_ftruncate,
	.fstat = nfs_sub_fstat,
	.stat = nfs_sub_stat,
	.rename = nfs_sub_rename,
	.unlink = nfs_sub_unlink,
	.mkdir = nfs_sub_mkdir,
	.rmdir = nfs_sub_rmdir,
	.readdir = nfs_sub_readdir,
	.fsync_dir = nfs_sub_fsync_dir,
	.statfs = nfs_sub_statfs,
	.sendfile = NULL,
	.fallocate = NULL,
};

/* ------------------------------------------------------------------ */
/* Opening from a URL                                                   */

static int nfs_sub_open(const char *url, struct kaas_substrate **out)
{
	struct kaas_nfs_sub *s = calloc(1, sizeof *s);
	if (!s)
		return kaas_sub_fail(ENOMEM, "%s: out of memory", url);
	pthread_mutex_init(&s->lock, NULL);
	s->base.ops = &nfs_ops;
	struct kaas_nfs_url u;
	int rc = kaas_nfs_url_parse(url, &u);
	s->root = u.root;
	s->liburl = u.liburl;
	s->version = u.version;
	s->timeout_ms = u.timeout_ms;
	s->maxconns = u.maxconns;
	s->nfsport = u.nfsport;
	s->mountport = u.mountport;
	if (rc < 0) {
		if (rc == -ENOMEM)
			kaas_sub_fail(ENOMEM, "%s: out of memory", url);
		nfs_sub_destroy(&s->base);
		return rc;
	}
	/* Connect one context now, so a bad URL fails here, and check that the
	 * root is a directory. */
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_new(s, &err);
	if (!c) {
		nfs_sub_destroy(&s->base);
		return err;
	}
	s->conns[s->nconns++] = c;
	struct nfs_stat_64 st;
	rc = nfs_stat64(c->nfs, "/", &st);
	if (rc < 0) {
		rc = kaas_nfs_fail(s, c, rc, "stat", "");
		nfs_sub_destroy(&s->base);
		return rc;
	}
	if (!S_ISDIR(st.nfs_mode)) {
		nfs_sub_destroy(&s->base);
		return kaas_sub_fail(ENOTDIR, "%s: not a directory", url);
	}
	*out = &s->base;
	return 0;
}

const struct kaas_backend kaas_backend_nfs = {
	.scheme = "nfs",
	.open = nfs_sub_open,
};
