/*
 * cephfs.h — the substrate over a CephFS file system through libcephfs: no
 * mount, no kernel client, no FUSE.
 *
 * URL:  cephfs://[NAME@]MON[,MON...]/[PATH]?keyring=FILE[&fs=FS]
 *                                          [&conf=FILE][&timeout=S]
 *   NAME     the cephx client name without "client." (default admin).  Its
 *            key needs rw on PATH (`ceph fs authorize FS client.NAME / rw`).
 *   MON      a monitor's address, host:port (Ceph's mon_host: a v1 port,
 *            or 3300 for v2; several comma-separated).  May be left out
 *            (cephfs:///PATH?conf=...) when the conf file names them.
 *   PATH     the directory inside the file system that is the substrate's
 *            root (default the file system's root); it must exist.
 *   fs       the file system's name (default the cluster's default one).
 *   keyring  a keyring file holding client.NAME's key.
 *   conf     a ceph.conf read before the URL's settings (client options
 *            such as client_oc_size); without it no conf file is read.
 *            CEPH_ARGS is honoured too (--debug-client=10 --log-file=F).
 *   timeout  seconds the mount, and each request to a monitor, may take
 *            (client_mount_timeout, rados_mon_op_timeout; 1..3600, default
 *            30): an unreachable monitor, a wrong key or a missing PATH
 *            fails within that bound, naming the URL.
 *
 * Each substrate instance is its own Ceph client (its own ceph_mount_info,
 * session with the MDS and client id), nothing shared with another
 * instance, so two instances in one process behave as two hosts.  The
 * guarantees come from the MDS's capabilities: a client may cache a file's
 * data or a name only while the MDS lets it, and the MDS recalls that from
 * every other client before another client changes it.  So CephFS exceeds
 * the contract: a write is visible to another client's open (and stat) even
 * before the writer's close, a rename or create to another client's next
 * lookup, and there are no silly renames (a file unlinked while another
 * client holds it open stays readable through that handle and takes no
 * name in the directory).
 *
 * Ops and their libcephfs calls:
 *   open       ceph_open (KAAS_O_* mapped as for POSIX).  O_CREAT|O_EXCL is
 *              decided by the MDS that owns the directory: exactly one racer
 *              on any client creates the name.  Opening a directory without
 *              KAAS_O_DIRECTORY is -EISDIR, as on POSIX.
 *   pread/pwrite/pwritev  ceph_read / ceph_write / ceph_pwritev at an
 *              explicit offset, at most 1 GiB per call (they return an int;
 *              callers loop: kaas_sub_pread_full/pwrite_full).
 *   fsync      ceph_fsync(fd, 0): the file's data AND its size and times
 *              (the size is metadata in CephFS, kept by the MDS; an fdatasync
 *              would leave a grown size in the client's dirty caps).
 *   ftruncate, fstat, stat, rename, unlink, mkdir, rmdir, statfs
 *              ceph_ftruncate, ceph_fstatx, ceph_statx, ceph_rename,
 *              ceph_unlink, ceph_mkdir, ceph_rmdir, ceph_statfs.
 *   readdir    ceph_opendir / ceph_readdir_r (the entry's type is filled in).
 *   fsync_dir  ceph_open(O_DIRECTORY) + ceph_fsync: waits until the MDS has
 *              journaled the directory's changes made by this client.
 *   sendfile, fallocate, readahead  not provided (the dispatch layer's
 *              pread+send fallback, -ENOTSUP, nothing): there is no kernel
 *              file descriptor, and libcephfs reads ahead by itself.
 *
 * Errors: libcephfs returns -errno; it is passed on, with the detail
 * "<op> cephfs://NAME@MON/PATH/<path>: <strerror>".  One is CephFS's own:
 * -ESHUTDOWN, the client was evicted by the MDS (an operator's
 * `client evict`, or its session timed out) and blocklisted by the OSDs.
 * From then on every op of that substrate fails (the instance is dead; a
 * new one is a new client).  The first ceph_fsync of a handle with unsynced
 * writes returns it (a second would return 0 with the writes lost), and the
 * dispatch layer poisons the handle on that first failure, so a write
 * acknowledged after an fsync is never one an evicted client lost.  This is
 * the contract's fence of last resort: a broker evicted while partitioned
 * can no longer write or acknowledge anything.
 *
 * Failover: a client that dies holding capabilities (a kill -9 of a broker)
 * blocks other clients' access to what it held until the MDS gives up on
 * it: the file system's session_timeout (60 s by default; `ceph fs set FS
 * session_timeout S`, at least 30 in Ceph 16), then it is evicted.  An
 * operator (or an orchestrator that knows the broker is gone) can evict it
 * at once (`ceph tell mds.N client evict id=ID`).  docs/SUBSTRATES.md has
 * the measurements.
 *
 * fork: libcephfs 16.2 keeps process-wide threads (an asio pool) that a
 * forked child does not have.  A client is made in a thread of its own
 * (libcephfs draws its messenger nonce from a per-thread generator that
 * fork copies: children would share it and stall each other), and in a
 * child forked after a client was made, fs= is refused with -ENOTSUP at
 * once (selecting a file system by name waits on that pool: forever);
 * without fs= such children work (substrate-check's racers are children).
 *
 * Threads: libcephfs serialises a client's requests under its own lock and
 * may be called from any number of threads at once, so a substrate may be
 * used by several threads at once; one kaas_file by one thread at a time.
 */
#ifndef KAAS_BACKEND_CEPHFS_H
#define KAAS_BACKEND_CEPHFS_H

#include "substrate/substrate.h"

extern const struct kaas_backend kaas_backend_cephfs;

/* Largest read or write per call (libcephfs returns the count as an int). */
#define KAAS_CEPHFS_MAX_IO (1u << 30)

#endif
