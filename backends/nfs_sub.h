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

struct open_ino; /* nfs.c: open files by file id, for silly rename */

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

#endif
