/*
 * nfs_rawio.c — the calls this backend sends itself where libnfs 4.0.0's
 * own are not enough: NFSv3 WRITE/COMMIT that compare write verifiers, and
 * the two exclusive creates (NFSv3 CREATE EXCLUSIVE; NFSv4 private create +
 * LINK).  Contracts in nfs_sub.h.
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
#include "util/assert_held.h"

/* ------------------------------------------------------------------ */
/* NFSv3 WRITE/COMMIT with write verifiers, exclusive CREATE (nfs_rpc.h)  */

/* libnfs 4.0.0's nfs_pwrite/nfs_fsync send UNSTABLE writes and a COMMIT but
 * never look at the write verifiers, so a server that restarts between
 * them (losing its unstable data) goes unnoticed and the COMMIT "succeeds".
 * With NFSv3 this backend sends WRITE and COMMIT itself (nfs_rpc.c) and
 * compares the verifiers, as the kernel client does.  If a handle does not
 * look like libnfs's (a future libnfs), the libnfs calls are used instead. */

/* The errno of a finished call (0 on success), detail recorded. */
int call_result(struct kaas_nfs_sub *s, const char *path, const char *what, const struct kaas_nfs_call *r)
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
int kaas_nfs_v3_excl_create(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, const char *path, const char *ap, int o, int mode,
			  struct nfsfh **fh)
{
	assert_held(&c->lock);
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
		if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 1))
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
ssize_t kaas_nfs_v3_write(struct kaas_nfs_sub *s, struct kaas_file *f, const void *buf, size_t len, uint64_t off,
			const nfs_fh3 *fh3)
{
	assert_held(&F(f)->c->lock);
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
int kaas_nfs_v3_commit(struct kaas_nfs_sub *s, struct kaas_file *f, const nfs_fh3 *fh3)
{
	assert_held(&F(f)->c->lock);
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
int kaas_nfs_v4_excl_create(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, const char *path, const char *ap, int o, int mode,
			  struct nfsfh **fh)
{
	assert_held(&c->lock);
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
