/*
 * nfs.h — the substrate over an NFS server through libnfs: no mount, no
 * kernel client, no privileges.
 *
 * URL:  nfs://SERVER/EXPORT[/SUBDIR]?version=3|4&nfsport=N&mountport=M
 *                                    [&conns=C][&timeout=S][&uid=U&gid=G]
 *   SERVER     host name or address of the NFS server.
 *   EXPORT     NFSv3: the exported path (the server-side directory), and
 *              the substrate's root may be a directory below it.
 *              NFSv4: the pseudo path (e.g. /export).
 *   version    3 (default) or 4.  See "NFSv4" below.
 *   nfsport    the NFS port; mountport the MOUNT port (NFSv3).  Without
 *              them libnfs asks the server's portmapper.
 *   conns      how many NFS connections (libnfs contexts) this substrate may
 *              open, 1..64, default 4.  See "Threads".
 *   timeout    seconds one RPC may take before the op fails with -ETIMEDOUT
 *              (1..3600, default 10).  Connecting is bounded by it too.
 *   Any other libnfs URL argument (uid, gid, readahead...) is passed on.
 *
 * Each substrate instance is its own NFS client: its own TCP connections,
 * its own libnfs contexts, nothing shared with another instance, so two
 * instances over one export behave like two hosts.  libnfs keeps no data
 * or attribute cache here (page cache off, directory cache switched off), so
 * every open, read and stat goes to the server: close-to-open (guarantee 3)
 * holds, and more.
 *
 * Ops and their NFS procedures:
 *   open       LOOKUP (+ CREATE, + SETATTR for TRUNC) + ACCESS + GETATTR.
 *              KAAS_O_CREAT|KAAS_O_EXCL over NFSv3 is the protocol's own
 *              exclusive create: CREATE in EXCLUSIVE mode with a verifier
 *              unique to the attempt (libnfs's O_EXCL would send GUARDED),
 *              then SETATTR (mode, and the times that held the verifier),
 *              then LOOKUP/ACCESS and a check that the file opened is the
 *              one created.  The server creates the name only if it does
 *              not exist, atomically, so exactly one racer on any client
 *              wins (tests/nfs race processes for it); and unlike GUARDED,
 *              a CREATE re-sent after a dropped connection is recognised by
 *              its verifier, so the creator is not told EEXIST.
 *   pread/pwrite  READ / WRITE (UNSTABLE), at most the server's rsize/wsize
 *              per call (callers loop: kaas_sub_pread_full/pwrite_full).
 *   fsync      COMMIT, with the write-verifier check below.  A failed
 *              COMMIT poisons the handle (dispatch layer).
 *   close      nothing to flush (no client cache): releases the handle.
 *   rename, unlink, mkdir, rmdir  RENAME, REMOVE, MKDIR, RMDIR: synchronous
 *              on the server; fsync_dir is therefore a GETATTR that checks
 *              the directory exists.
 *   statfs     FSSTAT.   sendfile, fallocate: not provided (the dispatch
 *              layer's pread+send fallback and -ENOTSUP).
 *
 * Silly rename: unlinking a file that a handle of THIS substrate has open
 * renames it to ".nfs<fileid:016x><n:08x>" in the same directory instead,
 * and the last close of that file removes it, as the kernel client does;
 * unlinking such a silly name while it is open is -EBUSY, and the directory
 * is not empty (-ENOTEMPTY) until the handle closes.  A file removed by
 * ANOTHER client (another substrate instance) while open here gives -ESTALE
 * on the next op through this handle (the server reports NFS3ERR_STALE).
 * A rename over a file open here is NOT silly-renamed (that would break the
 * rename's atomicity for other hosts): the open handle may then see -ESTALE.
 *
 * Errors: libnfs's status is mapped to -errno (NFS3ERR_* to their errno,
 * RPC timeouts to -ETIMEDOUT, a broken connection to -ECONNRESET), and the
 * detail (kaas_sub_errdetail) is "<op> nfs://server/export/path: <libnfs's
 * nfs_get_error text>".  Opening a substrate on an unreachable server, a
 * wrong export or a wrong port fails within about `timeout` seconds with
 * -ETIMEDOUT, -ENOENT/-EACCES or -ECONNREFUSED and a detail naming the URL.
 *
 * Reconnecting: libnfs re-connects a dropped TCP connection by itself and
 * re-sends the RPCs that were in flight (as a hard NFS mount does), so a
 * server restart is invisible to callers as long as it is shorter than the
 * timeout.  When an RPC fails with a connection error (-ECONNRESET or
 * -ETIMEDOUT), ops that are safe to repeat (stat, readdir, statfs, fstat,
 * pread, open without CREAT, fsync_dir) are re-driven once on a freshly
 * connected context before the error is returned; ops that are not
 * (create, write, COMMIT, rename, unlink, mkdir, rmdir, truncate) return the
 * error and leave re-driving to the caller, which knows whether it can.
 *
 * Write verifiers (NFSv3): libnfs 4.0.0's nfs_pwrite/nfs_fsync ignore them,
 * so this backend sends WRITE (UNSTABLE) and COMMIT itself on the context's
 * RPC connection and compares verifiers like the kernel client: if the
 * server restarted between the writes and the COMMIT (the verifier changed),
 * fsync fails with -EIO ("they may be lost"), the handle is poisoned and the
 * caller fences the partition.  (NFSv4 goes through libnfs unchecked.)
 * This relies on libnfs's private struct nfs_fh being { int len; char *val; }
 * (true of every libnfs with nfs_get_fh); a handle that does not look like
 * that falls back to the unchecked libnfs calls.
 *
 * NFSv4: Debian's libnfs 4.0.0 fails NFSv4 WRITEs larger than about 3.5 KiB
 * (fixed upstream after 4.0.0).  With version=4 this backend therefore
 * writes at most 3072 bytes per WRITE (pwrite returns short counts that
 * kaas_sub_pwrite_full loops over), which is correct but slow.  libnfs
 * 4.0.0's NFSv4 O_EXCL is also not atomic (a lookup, then an unchecked
 * create: racing clients all win), so with version=4 an exclusive create is
 * a CREATE under a name private to this client, a LINK of it to the target
 * name (atomic: the server refuses a LINK onto an existing name), and a
 * REMOVE of the private name (".kaas-excl.<host>.<pid>.<n>"; one left by a
 * crash in between is garbage).  Each context is its own NFSv4 client (its
 * own client name).  A file removed by another client while open here stays
 * readable over NFSv4 (the open state keeps it) rather than giving ESTALE.
 * NFSv3 is the supported, fast path; both pass the conformance suite.
 *
 * Threads: a libnfs context is not thread-safe, so the substrate keeps a
 * small pool of contexts (up to `conns`), each behind its own mutex.  An
 * open handle is bound to one context for its life (the least loaded one
 * when it was opened, so the partitions' files spread over the pool); ops
 * by name borrow any idle context.  So a substrate may be used by any number
 * of threads at once, and I/O on files bound to different contexts runs in
 * parallel; files sharing a context take turns, one RPC round trip at a
 * time.  One kaas_file is used by one thread at a time (as for every
 * backend).
 */
#ifndef KAAS_BACKEND_NFS_H
#define KAAS_BACKEND_NFS_H

#include "substrate/substrate.h"

extern const struct kaas_backend kaas_backend_nfs;

/* Largest write per call with version=4 (see "NFSv4" above). */
#define KAAS_NFS4_MAX_WRITE 3072

#endif
