/*
 * substrate.h — one view of one shared volume, as one host sees it.
 *
 * Every byte kaas keeps on the shared volume goes through this interface.
 * Only backends/ and faultfs/ implement it with the operating system's (or
 * libnfs's) file API; everything above calls the kaas_sub_* dispatch
 * functions below and never the OS.
 *
 * Shape (after SQLite's VFS and WiredTiger's WT_FILE_SYSTEM):
 *   - struct kaas_substrate and struct kaas_file each begin with a pointer to
 *     their backend's ops table; a backend embeds them as the FIRST member of
 *     its own structs and declares in the ops table how large its handle is.
 *   - The ops table carries a version.  New ops are appended at the end and
 *     the version is bumped; existing slots never move.
 *   - Optional ops may be NULL; the dispatch layer supplies the fallback (or
 *     returns -ENOTSUP).  Callers never test for NULL themselves (a caller
 *     that would do better than a fallback asks kaas_sub_has_pwritev).
 *
 * Return values: every op returns >= 0 on success or a negative errno.  A
 * human-readable detail for the last failure on the calling thread is kept
 * on the side (kaas_sub_errdetail()), in the manner of nfs_get_error().
 *
 * Paths: relative to the substrate's root, '/'-separated, no leading '/',
 * no empty, "." or ".." components.  The dispatch layer rejects anything
 * else with -EINVAL before a backend sees it, so a hostile name can never
 * escape the volume.
 *
 * Error classes (what a caller may do next):
 *   retryable : -EAGAIN, -EINTR (never surfaced by a backend: retried inside),
 *               -EBUSY (a silly-renamed .nfs file is still held open),
 *               -ESTALE (the file was removed or replaced by another host:
 *               close the handle and re-open by name; retrying the same
 *               handle is useless), -ETIMEDOUT / -ECONNRESET (network
 *               backends: the op may be re-driven if it is idempotent).
 *   final     : -ENOENT, -EEXIST, -ENOTEMPTY, -EISDIR, -ENOTDIR, -EINVAL,
 *               -EACCES, -EPERM, -EROFS, -ENOSPC, -EDQUOT, -EIO, -ENAMETOOLONG.
 *   fsync     : a failed fsync is NEVER retried.  The handle is poisoned by
 *               the dispatch layer: every later op on it returns the same
 *               error.  The caller must treat every unsynced write through
 *               that handle as lost and fence the partition it belongs to.
 *
 * Threads: a substrate may be used from several threads at once if its
 * backend says so in its own header (POSIX: yes; libnfs: see backends/nfs.h).
 * One kaas_file is used by one thread at a time.
 */
#ifndef KAAS_SUBSTRATE_H
#define KAAS_SUBSTRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

#define KAAS_SUBSTRATE_OPS_VERSION 2

/* The most buffers one pwritev op is given (Linux's IOV_MAX); the dispatch
 * helper kaas_sub_pwritev_full splits longer lists. */
#define KAAS_SUB_IOV_MAX 1024

/* Open flags (backend-neutral; a backend maps them to its own). */
#define KAAS_O_READ   0x01 /* open for reading */
#define KAAS_O_WRITE  0x02 /* open for writing (may be combined with READ) */
#define KAAS_O_CREAT  0x04 /* create if missing */
#define KAAS_O_EXCL   0x08 /* with CREAT: fail with -EEXIST if it exists (atomic) */
#define KAAS_O_TRUNC  0x10 /* truncate to zero on open */
#define KAAS_O_DIRECTORY 0x20 /* the path must be a directory (read only) */

enum kaas_file_type { KAAS_FT_OTHER = 0, KAAS_FT_FILE = 1, KAAS_FT_DIR = 2 };

struct kaas_stat {
	uint64_t size;          /* bytes */
	int64_t mtime_ns;       /* modification time, ns since the epoch (server clock) */
	uint64_t ino;           /* file id as the backend reports it (0 if none) */
	uint32_t mode;          /* permission bits */
	uint32_t nlink;
	enum kaas_file_type type;
};

struct kaas_statfs {
	uint64_t total_bytes;
	uint64_t free_bytes;    /* available to an unprivileged writer */
	uint64_t total_files;
	uint64_t free_files;
};

struct kaas_substrate;
struct kaas_file;

/* Called once per directory entry ("." and ".." are never passed).
 * Return 0 to continue, anything else to stop; readdir then returns it. */
typedef int (*kaas_dirent_cb)(void *arg, const char *name, enum kaas_file_type type);

struct kaas_substrate_ops {
	int version;            /* KAAS_SUBSTRATE_OPS_VERSION this table was built for */
	const char *name;       /* "posix", "nfs", "fault" ... */
	size_t file_size;       /* sizeof the backend's handle (>= sizeof(struct kaas_file)) */

	/* ---- version 1 ---- */

	/* Release the substrate.  All files must already be closed. */
	void (*destroy)(struct kaas_substrate *sub);

	/* Open `path` with KAAS_O_* flags; `mode` applies when a file is created.
	 * `f` points at file_size zeroed bytes whose base is already filled in;
	 * the backend initialises the rest.  KAAS_O_CREAT|KAAS_O_EXCL is the
	 * contract's exclusive create: exactly one racer on any host gets 0,
	 * the rest -EEXIST.  Errors: -ENOENT (missing, no CREAT), -EEXIST,
	 * -EISDIR (a directory opened for writing), -ENOTDIR, -EACCES, -EROFS,
	 * -ENOSPC, -ESTALE (retryable: re-open).  A new open on one host sees
	 * everything another host wrote to the file before its close (guarantee
	 * 3, close-to-open). */
	int (*open)(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		    struct kaas_file *f);

	/* Close the handle.  On NFS a close flushes dirty data; a failure here
	 * means data may be lost (like a failed fsync).  The handle is released
	 * whatever the result. */
	int (*close)(struct kaas_file *f);

	/* Read up to len bytes at off.  Returns bytes read (0 at end of file).
	 * May return fewer than asked; the dispatch helper kaas_sub_pread_full
	 * loops.  Errors: -EIO, -ESTALE (another host removed the file). */
	ssize_t (*pread)(struct kaas_file *f, void *buf, size_t len, uint64_t off);

	/* Write up to len bytes at off.  Returns bytes written (> 0).  Data is
	 * durable only after a successful fsync.  Errors: -ENOSPC, -EDQUOT,
	 * -EIO, -ESTALE, -EBADF (handle not opened for writing). */
	ssize_t (*pwrite)(struct kaas_file *f, const void *buf, size_t len, uint64_t off);

	/* Make every write through this handle durable (NFS: COMMIT).  A failure
	 * is final: never retried, the dispatch layer poisons the handle. */
	int (*fsync)(struct kaas_file *f);

	/* Set the file's size.  Errors as pwrite. */
	int (*ftruncate)(struct kaas_file *f, uint64_t size);

	/* Attributes of an open file (size as this host sees it). */
	int (*fstat)(struct kaas_file *f, struct kaas_stat *st);

	/* Attributes by name.  -ENOENT if missing.  Other hosts' changes may be
	 * seen late (attribute caching); only open() gives close-to-open. */
	int (*stat)(struct kaas_substrate *sub, const char *path, struct kaas_stat *st);

	/* Rename `from` to `to`, replacing `to` if it exists.  Atomic when both
	 * are in the same directory (guarantee 1): a reader sees the old target
	 * or the new one, never a mix and never neither.  Across directories it
	 * is not promised atomic.  -ENOENT if `from` is missing. */
	int (*rename)(struct kaas_substrate *sub, const char *from, const char *to);

	/* Remove a file.  -ENOENT if missing; -EISDIR for a directory; -EBUSY
	 * for a silly-renamed .nfs file that is still open (retryable).  If
	 * another handle on THIS host has the file open, an NFS-class substrate
	 * renames it to .nfsXXXX instead and removes it at that handle's close. */
	int (*unlink)(struct kaas_substrate *sub, const char *path);

	/* Create a directory.  -EEXIST if the name exists (atomic, like an
	 * exclusive create), -ENOENT if the parent is missing. */
	int (*mkdir)(struct kaas_substrate *sub, const char *path, uint32_t mode);

	/* Remove an empty directory.  -ENOTEMPTY (or -EEXIST on some servers;
	 * the dispatch layer folds that into -ENOTEMPTY) when it has entries,
	 * including silly-renamed ones (retryable once they drain); -ENOENT. */
	int (*rmdir)(struct kaas_substrate *sub, const char *path);

	/* Call cb for each entry of the directory, in no particular order.
	 * Entries created or removed during the listing may or may not appear;
	 * entries present throughout always appear exactly once. */
	int (*readdir)(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg);

	/* Make the directory's entries durable (creates, renames, unlinks in
	 * it).  On NFS, metadata operations are synchronous and this may be a
	 * no-op returning 0. */
	int (*fsync_dir)(struct kaas_substrate *sub, const char *path);

	/* Space on the volume holding `path` ("" for the root). */
	int (*statfs)(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out);

	/* OPTIONAL (may be NULL): copy len bytes at off of the file to a
	 * connected socket, zero-copy where possible.  Returns bytes sent (may be
	 * short), -EAGAIN when the socket would block.  Fallback: pread+send. */
	ssize_t (*sendfile)(struct kaas_file *f, int sockfd, uint64_t off, size_t len);

	/* OPTIONAL (may be NULL): reserve space for [off, off+len).  Fallback:
	 * -ENOTSUP (callers treat space reservation as advisory). */
	int (*fallocate)(struct kaas_file *f, uint64_t off, uint64_t len);

	/* OPTIONAL (may be NULL): advise that [off, off+len) will be read soon,
	 * so the backend may start reading it into its cache now (POSIX:
	 * posix_fadvise WILLNEED).  Advisory: changes no result; returns at
	 * once.  Fallback: nothing (0). */
	int (*readahead)(struct kaas_file *f, uint64_t off, uint64_t len);

	/* ---- version 2 ---- */

	/* OPTIONAL (may be NULL): write the iovcnt buffers (1..KAAS_SUB_IOV_MAX)
	 * one after the other at off, as pwrite of their concatenation would
	 * (POSIX: pwritev, one system call).  Returns bytes written (> 0; may be
	 * short, also in the middle of a buffer).  Errors as pwrite.  Fallback
	 * (kaas_sub_pwritev_full): one pwrite per buffer, which on a network
	 * backend is at least one WRITE per buffer; kaas_sub_has_pwritev tells a
	 * caller with many small buffers to gather them itself instead. */
	ssize_t (*pwritev)(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off);
};

/* Base of every substrate instance.  A backend embeds it first. */
struct kaas_substrate {
	const struct kaas_substrate_ops *ops;
	char *url;              /* the URL it was opened from (owned) */
	char host[48];          /* this view's host id: unique per instance, used
	                           in temp names so two hosts never collide */
};

/* Base of every open handle.  A backend embeds it first. */
struct kaas_file {
	const struct kaas_substrate_ops *ops;
	struct kaas_substrate *sub;
	int poisoned;           /* 0, or the negative errno of a failed fsync/close */
	int flags;              /* the KAAS_O_* flags it was opened with */
	char *path;             /* the path it was opened by (owned, for messages) */
};

/* ------------------------------------------------------------------ */
/* Incarnations and private names (src/substrate/incarnation.c)         */

/* This process's incarnation: a random 64-bit number (never 0) drawn once
 * per process (a forked child draws its own).  It tells a writer apart
 * from every earlier process that had the same pid on the same host (PID 1
 * in every container); the broker publishes it in brokers/<id>.json. */
uint64_t kaas_incarnation(void);

/* Private names, made by one writer for itself in a shared directory
 * (replace temps, the NFSv4 exclusive create's link name):
 *     <prefix><host>.<pid>.<incarnation:016x>.<seq>
 * where seq is a process-wide counter (kaas_private_seq_next).  No other
 * process, on any host, now or in an earlier incarnation, ever makes the
 * same name.  kaas_private_name takes the next seq; _fmt formats a given
 * one.  0, or -ENAMETOOLONG (buf too small). */
int kaas_private_name(char *buf, size_t size, const char *prefix, const char *host);
/* The prefix of an exclusive create's private link name (backends/nfs.c). */
#define KAAS_EXCL_PREFIX ".kaas-excl."
int kaas_private_name_fmt(char *buf, size_t size, const char *prefix, const char *host,
			  unsigned long seq);
unsigned long kaas_private_seq_next(void);

/* Parse a private name made with `prefix` (a replace temp's prefix may be
 * followed by a target name that holds dots: the fields are read from the
 * right).  0 with host, *pid and *inc; *inc is 0 for a name in the format
 * before incarnations (<prefix><host>.<pid>.<seq>).  -EINVAL if `name` is
 * neither. */
int kaas_private_name_parse(const char *name, const char *prefix, char *host, size_t hsize,
			    long *pid, uint64_t *inc);

/* ------------------------------------------------------------------ */
/* Opening substrates from URLs (src/substrate/registry.c)              */

/* Open a substrate from a URL:
 *   /abs/path, rel/path, file:///abs/path     POSIX (backends/posix.c)
 *   nfs://server/export/path?version=3&...    libnfs (backends/nfs.c)
 *   cephfs://name@mon/path?keyring=...        libcephfs (backends/cephfs.c)
 *   fault+<lower-url>?seed=S&host=H&...       the fault model (faultfs/)
 * Each call makes a new, independent view ("host").  Returns 0 and *out, or
 * -EINVAL (malformed URL), -EPROTONOSUPPORT (unknown scheme), or the
 * backend's error (-ENOENT: root missing, -ENOTDIR, -ECONNREFUSED ...); the
 * detail names the URL. */
int kaas_substrate_open(const char *url, struct kaas_substrate **out);

/* Close a substrate opened by kaas_substrate_open (NULL is a no-op). */
void kaas_substrate_close(struct kaas_substrate *sub);

/* How a backend plugs into the registry. */
struct kaas_backend {
	const char *scheme;     /* "file", "nfs", "fault" ; NULL ends a table */
	/* Open `url` (the whole URL).  Allocate the backend struct, set ops;
	 * the registry fills in url and host afterwards if left empty. */
	int (*open)(const char *url, struct kaas_substrate **out);
};

/* ------------------------------------------------------------------ */
/* Dispatch (src/substrate/dispatch.c): the only way callers reach ops.   */

/* Validate a relative substrate path: 0, or -EINVAL (absolute, empty
 * component, "." or "..") or -ENAMETOOLONG (over 4095 bytes). "" means the
 * root and is valid. */
int kaas_path_check(const char *path);

/* Open a file.  On success *out is a new handle (free with kaas_sub_close). */
int kaas_sub_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		  struct kaas_file **out);
/* Close and free the handle (NULL is a no-op).  Returns the close result, or
 * the poison error if the handle was poisoned. */
int kaas_sub_close(struct kaas_file *f);

ssize_t kaas_sub_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off);
ssize_t kaas_sub_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off);
/* Read exactly len bytes unless end of file comes first: returns bytes read
 * (< len only at EOF) or -errno. */
ssize_t kaas_sub_pread_full(struct kaas_file *f, void *buf, size_t len, uint64_t off);
/* Write all len bytes: 0 or -errno (a short write that makes no progress is
 * -EIO). */
int kaas_sub_pwrite_full(struct kaas_file *f, const void *buf, size_t len, uint64_t off);
/* One pwritev op (the backend must have one: kaas_sub_has_pwritev): bytes
 * written, or -errno. */
ssize_t kaas_sub_pwritev(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off);
/* Write all the iovcnt buffers of iov (any number, empty ones allowed) one
 * after the other at off: 0 or -errno (no progress is -EIO), as
 * kaas_sub_pwrite_full of their concatenation.  iov is not modified.  With
 * the backend's pwritev op: as few system calls as KAAS_SUB_IOV_MAX allows;
 * without: one kaas_sub_pwrite_full per buffer. */
int kaas_sub_pwritev_full(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off);
/* Does this handle's backend write a list of buffers in one call (its
 * pwritev op)?  When not, a caller with many small buffers gathers them
 * into one and calls kaas_sub_pwrite_full. */
bool kaas_sub_has_pwritev(const struct kaas_file *f);
/* fsync; a failure poisons the handle for good (never retry). */
int kaas_sub_fsync(struct kaas_file *f);
int kaas_sub_ftruncate(struct kaas_file *f, uint64_t size);
int kaas_sub_fstat(struct kaas_file *f, struct kaas_stat *st);
ssize_t kaas_sub_sendfile(struct kaas_file *f, int sockfd, uint64_t off, size_t len);
int kaas_sub_fallocate(struct kaas_file *f, uint64_t off, uint64_t len);
/* The readahead hint (ops->readahead): 0, or -errno from the backend. */
int kaas_sub_readahead(struct kaas_file *f, uint64_t off, uint64_t len);

int kaas_sub_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st);
int kaas_sub_rename(struct kaas_substrate *sub, const char *from, const char *to);
int kaas_sub_unlink(struct kaas_substrate *sub, const char *path);
int kaas_sub_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode);
/* mkdir -p: every missing component is created; existing ones are fine.
 * Idempotent; safe against racers creating the same components. */
int kaas_sub_mkdirs(struct kaas_substrate *sub, const char *path, uint32_t mode);
int kaas_sub_rmdir(struct kaas_substrate *sub, const char *path);
int kaas_sub_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg);
int kaas_sub_fsync_dir(struct kaas_substrate *sub, const char *path);
int kaas_sub_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out);

/* A directory listing, sorted by name (strcmp). */
struct kaas_dirlist {
	size_t n;
	char **names;
	enum kaas_file_type *types;
};
/* List a directory: 0 and *out filled (free with kaas_dirlist_free), or -errno. */
int kaas_sub_list(struct kaas_substrate *sub, const char *path, struct kaas_dirlist *out);
void kaas_dirlist_free(struct kaas_dirlist *l);

/* Read a whole (small) file: 0 and a malloc'd buffer (NUL-terminated, the
 * terminator not counted in *len), or -errno.  Refuses files over max bytes
 * with -EFBIG. */
int kaas_sub_read_all(struct kaas_substrate *sub, const char *path, size_t max, char **buf,
		      size_t *len);

/* ------------------------------------------------------------------ */
/* Error detail (thread-local).                                          */

/* Record the detail for the failure about to be returned by this thread.
 * Returns -err (pass a positive or negative errno) so a backend can write
 * `return kaas_sub_fail(EIO, "pwrite %s: ...", path);`. */
int kaas_sub_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The detail text of this thread's last failure ("" if none). */
const char *kaas_sub_errdetail(void);
/* Forget the last detail. */
void kaas_sub_clear_error(void);

/* Join a directory and a name into a new malloc'd path ("" dir: the name). */
char *kaas_path_join(const char *dir, const char *name);
/* The directory part of a path ("" for a top-level name); malloc'd. */
char *kaas_path_dirname(const char *path);
/* The URL of directory `name` inside the substrate `url` names: the name is
 * joined to the path part, before any "?query" ("nfs://h/e?v=3" + "x" ->
 * "nfs://h/e/x?v=3").  malloc'd, or NULL (out of memory). */
char *kaas_url_subdir(const char *url, const char *name);

/* Pointer to the last component of path. */
const char *kaas_path_basename(const char *path);

#endif
