/*
 * nfs_rpc.h — the few NFSv3 calls backends/nfs.c sends itself on a libnfs
 * context's RPC connection, because libnfs 4.0.0's file API hides what they
 * return: WRITE and COMMIT (their write verifiers), CREATE in EXCLUSIVE
 * mode (libnfs's O_EXCL sends GUARDED), and the SETATTR that follows it.
 *
 * Each call is queued on the context and driven to its end (reply, RPC
 * timeout as set by nfs_set_timeout, or a broken connection); libnfs
 * re-connects and re-sends underneath.  The caller holds the context (one
 * thread per context).  Functions return 0 when the call finished (the
 * outcome is in *r: see kaas_nfs_call_errno) or -ENOMEM when it could not
 * be queued.
 */
#ifndef KAAS_BACKEND_NFS_RPC_H
#define KAAS_BACKEND_NFS_RPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

struct kaas_nfs_call {
	int done;
	int rpc_status;           /* RPC_STATUS_* */
	int nfs_status;           /* nfsstat3 (NFS3_OK ...) when rpc_status is SUCCESS */
	uint32_t count;           /* WRITE: bytes written */
	int committed;            /* WRITE: stable_how the server gave */
	char verf[NFS3_WRITEVERFSIZE]; /* WRITE, COMMIT: the write verifier */
	uint64_t fileid;          /* CREATE: the new file's id, if returned */
	int have_fileid;
	char fh[NFS3_FHSIZE];     /* CREATE: the new file's handle, if returned */
	unsigned fh_len;
	char err[160];            /* transport-level failure text */
};

/* The NFSv3 handle of an open libnfs file: 0, or -1 if the handle does not
 * look like one (libnfs keeps struct nfs_fh private; its layout has been
 * { int len; char *val; } in every release with nfs_get_fh()). */
int kaas_nfs_fh3(struct nfsfh *fh, nfs_fh3 *out);

/* WRITE len bytes at off, UNSTABLE. */
int kaas_nfs_write3(struct nfs_context *nfs, const nfs_fh3 *fh, const void *buf, size_t len, uint64_t off,
		    struct kaas_nfs_call *r);
/* COMMIT the whole file. */
int kaas_nfs_commit3(struct nfs_context *nfs, const nfs_fh3 *fh, struct kaas_nfs_call *r);
/* CREATE name in dir, EXCLUSIVE mode with verifier verf. */
int kaas_nfs_create3_exclusive(struct nfs_context *nfs, const nfs_fh3 *dir, const char *name,
			       const char verf[NFS3_CREATEVERFSIZE], struct kaas_nfs_call *r);
/* SETATTR mode, and atime and mtime to the server's clock. */
int kaas_nfs_setattr3_mode_now(struct nfs_context *nfs, const char *fh, unsigned fh_len, uint32_t mode,
			       struct kaas_nfs_call *r);

/* The outcome of a finished call as a positive errno (0: success):
 * ETIMEDOUT (RPC timeout), ECONNRESET (transport failure), or the NFS3
 * status as errno (BADHANDLE -> ESTALE, JUKEBOX -> EAGAIN, others past the
 * errno range -> EIO). */
int kaas_nfs_call_errno(const struct kaas_nfs_call *r);

#endif
