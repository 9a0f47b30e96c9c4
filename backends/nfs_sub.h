/*
 * nfs_sub.h — what the files of the libnfs backend share (private to
 * backends/nfs*.c): the substrate and handle structs, the pool of libnfs
 * contexts (nfs_conn.c) and error mapping.  See nfs.h for the contract.
 */
#ifndef KAAS_BACKEND_NFS_SUB_H
#define KAAS_BACKEND_NFS_SUB_H

#include <pthread.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "backends/nfs.h"
#include "backends/nfs_url.h"

/* One libnfs context: one TCP connection, used by one thread at a time. */
struct kaas_nfs_conn {
	pthread_mutex_t lock;
	struct nfs_context *nfs; /* NULL when it could not be (re)connected */
	unsigned nfiles;         /* open handles bound to it (under sub->lock) */
	uint64_t writemax;
};

/* The files of this substrate that are open, by server file id, for silly
 * rename (under sub->lock; nfs_unlink.c). */
struct open_ino {
	struct open_ino *next;
	uint64_t ino;
	unsigned refs;
	char *silly; /* set once unlinked while open: remove at last close */
};

struct kaas_nfs_sub {
	struct kaas_substrate base;
	char *root;      /* "nfs://server/export/path" for messages */
	char *liburl;    /* the URL handed to libnfs (our own arguments removed) */
	int version;
	int timeout_ms;
	int nfsport, mountport; /* 0: ask the portmapper */
	unsigned maxconns;
	pthread_mutex_t lock; /* guards nconns, conns[], nfiles, inos, silly_seq */
	unsigned nconns;
	struct kaas_nfs_conn *conns[KAAS_NFS_MAX_CONNS];
	unsigned rr;
	struct open_ino *inos;
	unsigned silly_seq;
};

struct kaas_nfs_file {
	struct kaas_file base;
	struct kaas_nfs_conn *c;
	struct nfsfh *fh;
	uint64_t ino;
	/* NFSv3 write verifier of the UNSTABLE writes since the last COMMIT:
	 * the server changes it when it restarts and loses unstable data. */
	int unstable;           /* UNSTABLE writes not yet COMMITted */
	int verf_changed;       /* two of them came back with different verifiers */
	char verf[NFS3_WRITEVERFSIZE];
};

#define S(sub) ((struct kaas_nfs_sub *)(sub))
#define F(f) ((struct kaas_nfs_file *)(f))

/* ---- errors (nfs_conn.c) ---- */

/* libnfs's -errno (or odd values: EINTR for a timeout, EFAULT for a broken
 * transport, ERANGE for a mangled EEXIST) as the substrate's positive errno. */
int kaas_nfs_map_err(int rc, const char *msg);
/* Is -e a connection-class error (timeout, reset, refused)? */
int kaas_nfs_is_conn_err(int e);
/* Record "<what> <root>/<path>: <strerror> (libnfs: <nfs_get_error>)" for
 * libnfs's rc and return the mapped -errno (c may be NULL). */
int kaas_nfs_fail(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, const char *what, const char *path);
/* "/" + path, malloc'd (libnfs paths are relative to the mount); NULL on ENOMEM. */
char *kaas_nfs_abspath(const char *path);

/* ---- the pool of contexts (nfs_conn.c) ---- */

/* A new connected, mounted context: the conn, or NULL with *err set (the
 * detail names the URL; -ECONNREFUSED naming the port, -ETIMEDOUT, -EACCES
 * for an export that is not exported, -EHOSTUNREACH ...). */
struct kaas_nfs_conn *kaas_nfs_conn_new(struct kaas_nfs_sub *s, int *err);
/* Replace c's context by a fresh one (c->lock held, no handle bound):
 * 0 or -errno. */
int kaas_nfs_conn_reconnect(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c);
/* A context for an op by name, returned locked: an idle one, a new one
 * while the pool has room, else the next in turn.  NULL with *err set. */
struct kaas_nfs_conn *kaas_nfs_conn_borrow(struct kaas_nfs_sub *s, int *err);
/* The context a new handle is bound to (the least loaded; a new one while
 * every existing one has handles and there is room), returned locked with
 * the handle counted.  NULL with *err set. */
struct kaas_nfs_conn *kaas_nfs_conn_for_file(struct kaas_nfs_sub *s, int *err);
/* Forget a handle bound to c. */
void kaas_nfs_conn_unbind(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c);
/* How many handles are bound to c. */
unsigned kaas_nfs_conn_bound(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c);
/* After an op that is safe to repeat failed with -rc: reconnect c if no
 * handle is bound to it, and say (1/0) whether to send the op again. */
int kaas_nfs_redrive(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc);

/* ---- shared by the ops (nfs.c) ---- */

/* Whether to send an op by name again after it failed with libnfs's rc on
 * attempt (0, 1, ...): ESTALE (a name looked up just before another host
 * replaced it) a few times, or once a connection error on an op safe to
 * repeat (idem).  1 or 0. */
int kaas_nfs_again(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, int attempt, int idem);
/* For an op by name: "/" + path (*ap, malloc'd) and a borrowed context
 * (*c, returned locked).  0, or -errno with nothing to give back. */
int kaas_nfs_borrow_for(struct kaas_nfs_sub *s, const char *path, char **ap, struct kaas_nfs_conn **c);
/* One libnfs call by name on context nfs (ap: "/" + the path; arg: the op's). */
typedef int (*kaas_nfs_call_fn)(struct nfs_context *nfs, const char *ap, void *arg);
/* What an op by name makes of libnfs's failure rc on c (c->lock held):
 * the -errno, with the detail recorded. */
typedef int (*kaas_nfs_fail_fn)(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, void *arg);
/* An op by name: a borrowed context, fn(ap, arg) sent again by the rules of
 * kaas_nfs_again (idem: also once after a connection error), the context
 * given back.  0 (fn returned >= 0), or -errno: fail(s, c, rc, arg) when
 * given, else kaas_nfs_fail(s, c, rc, what, path). */
int kaas_nfs_by_name(struct kaas_nfs_sub *s, const char *path, const char *what, int idem,
		     kaas_nfs_call_fn fn, kaas_nfs_fail_fn fail, void *arg);
/* libnfs's attributes as a kaas_stat. */
void kaas_nfs_fill_stat(const struct nfs_stat_64 *n, struct kaas_stat *st);

/* ---- the substrate ops (substrate.h has their contracts) ---- */

/* nfs_file.c */
int kaas_nfs_op_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		     struct kaas_file *f);
int kaas_nfs_op_close(struct kaas_file *f);
ssize_t kaas_nfs_op_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off);
ssize_t kaas_nfs_op_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off);
int kaas_nfs_op_fsync(struct kaas_file *f);
int kaas_nfs_op_ftruncate(struct kaas_file *f, uint64_t size);
int kaas_nfs_op_fstat(struct kaas_file *f, struct kaas_stat *st);
/* nfs_names.c */
int kaas_nfs_op_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st);
int kaas_nfs_op_rename(struct kaas_substrate *sub, const char *from, const char *to);
int kaas_nfs_op_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode);
int kaas_nfs_op_rmdir(struct kaas_substrate *sub, const char *path);
int kaas_nfs_op_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg);
int kaas_nfs_op_fsync_dir(struct kaas_substrate *sub, const char *path);
int kaas_nfs_op_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out);
/* nfs_unlink.c */
int kaas_nfs_op_unlink(struct kaas_substrate *sub, const char *path);

/* ---- open files by file id, for silly rename (nfs_unlink.c) ---- */

/* Count a handle open on server file id ino: 0 or -ENOMEM. */
int kaas_nfs_ino_ref(struct kaas_nfs_sub *s, uint64_t ino);
/* Drop a reference; returns the silly name to remove (malloc'd) if this was
 * the last handle on an unlinked-while-open file, else NULL. */
char *kaas_nfs_ino_unref(struct kaas_nfs_sub *s, uint64_t ino);

/* ---- what libnfs gets wrong, sent by hand (nfs_rawio.c) ---- */

/* NFSv3 exclusive create with CREATE EXCLUSIVE and a verifier, then SETATTR
 * of the mode and an open by name checked to be the created file.
 * c->lock held.  0 with *fh, or the final -errno with the detail recorded. */
int kaas_nfs_v3_excl_create(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, const char *path,
			    const char *ap, int o, int mode, struct nfsfh **fh);
/* One UNSTABLE WRITE, its verifier compared with the handle's; bytes
 * written or -errno.  c->lock held. */
ssize_t kaas_nfs_v3_write(struct kaas_nfs_sub *s, struct kaas_file *f, const void *buf, size_t len,
			  uint64_t off, const nfs_fh3 *fh3);
/* COMMIT of the handle's unstable writes: 0, or -EIO when a verifier
 * changed (the server lost unstable data), or -errno.  c->lock held. */
int kaas_nfs_v3_commit(struct kaas_nfs_sub *s, struct kaas_file *f, const nfs_fh3 *fh3);
/* NFSv4 exclusive create: private new name, LINK to the target, REMOVE of
 * the private name.  c->lock held; 0 with *fh open, or libnfs's -errno. */
int kaas_nfs_v4_excl_create(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, const char *path,
			    const char *ap, int o, int mode, struct nfsfh **fh);

#endif
