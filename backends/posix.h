/*
 * posix.h — the substrate over any mounted directory (local disk, kernel
 * NFS, CephFS): URLs "/abs/path", "rel/path" and "file:///abs/path".
 *
 * The root directory is opened once (O_PATH) and every op is relative to it
 * (openat, renameat, ...), so the root is pinned even if its name changes.
 * EINTR is retried; every descriptor is O_CLOEXEC; fsync_dir really fsyncs
 * the directory; sendfile is Linux sendfile(2).
 *
 * Thread-safety: a posix substrate may be used by any number of threads at
 * once; one handle by one thread at a time.
 */
#ifndef KAAS_BACKEND_POSIX_H
#define KAAS_BACKEND_POSIX_H

#include "substrate/substrate.h"

extern const struct kaas_backend kaas_backend_posix;

/* The local directory a posix URL names (malloc'd), or NULL if the URL is
 * not a posix one.  "file:///a/b" -> "/a/b"; "rel" -> "rel". */
char *kaas_posix_url_path(const char *url);

/* The open(2) flags for KAAS_O_* flags: the access mode, O_CREAT, O_EXCL,
 * O_TRUNC, O_DIRECTORY (not O_CLOEXEC).  libnfs takes the same flags. */
int kaas_posix_open_flags(int flags);

#endif
