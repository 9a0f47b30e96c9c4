/*
 * model.h — the fault model: several simulated NFS clients ("hosts") over
 * one lower substrate, with everything NFS is allowed to do to them.
 *
 * This is the single implementation of faultfs's behaviours; it has no FUSE
 * in it.  Two fronts drive it: the FUSE daemon (faultfs/fuse_front.c, one
 * session per host) and the in-process substrate (faultfs/substrate.c, the
 * `fault+<lower-url>?...` URLs).
 *
 * Behaviours (profile "nfs-floor"; profile "passthrough" turns all off):
 *   - silly-rename: unlinking (or renaming over) a file the same host still
 *     has open renames it to `.nfs%016llx%08x` in its directory; it is
 *     removed at that host's last close.  Unlinking such a name: -EBUSY.
 *   - ESTALE: a file really removed while other hosts have it open makes
 *     their reads, writes, fsyncs and fstats fail with -ESTALE.
 *   - close-to-open: writes stay in the writing host's cache until a flush
 *     (fsync, close, or write-back past a limit); other hosts that opened
 *     earlier keep the size and bytes they saw at open; stat() by name is
 *     served from a per-host attribute cache for attr_timeout_ms.
 *   - negative lookups: a name a host found missing (a stat or open that
 *     got ENOENT, or its own unlink) stays missing to that host's stat,
 *     open, unlink, rmdir, rename and listing of it for neg_timeout_ms,
 *     whoever creates it meanwhile; an open or listing of its directory by
 *     that host, or that host creating the name, ends it (negcache.c).
 *   - rules (EIO, ENOSPC, EDQUOT, ESTALE, delay, torn flush, kill caller,
 *     lost reply) selected by op, path glob, host, probability, countdown,
 *     persistence; every fault drawn from one seeded PRNG and logged as a
 *     JSON line.  A lost reply applies a create, rename, unlink, mkdir or
 *     rmdir, then answers what a re-sent request gets (EEXIST, ENOENT; a
 *     plain create ETIMEDOUT) or the rule's "reply".
 *   - host crash: unpublished data dropped, handles dead (-EIO), silly
 *     files left behind until heal.
 *   - disqualified switches (off by default): rename_copy, fsync_lies,
 *     excl_race.
 *
 * Every function returns >= 0 or a negative errno (detail through
 * kaas_sub_fail).  All functions are thread-safe (one model mutex).
 */
#ifndef KAAS_FAULTFS_MODEL_H
#define KAAS_FAULTFS_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "substrate/substrate.h"

#define KAAS_FAULT_MAX_HOSTS 16

struct kaas_fault_model;
struct kaas_fault_handle;

/* Create a model over the substrate at lower_url.  config_json may be NULL
 * or a JSON object (see kaas_fault_configure); seed seeds the PRNG unless the
 * config names one.  log_path (may be NULL) receives the event log, one JSON
 * line per injected fault.  Returns 0 and *out, or -errno (-EINVAL for a bad
 * config, with the detail naming the problem; the lower's open error). */
int kaas_fault_model_new(const char *lower_url, const char *config_json, uint64_t seed,
			 const char *log_path, struct kaas_fault_model **out);
/* Free the model.  Every handle must be closed. */
void kaas_fault_model_free(struct kaas_fault_model *m);

/* Apply a JSON config object: {"profile":"nfs-floor"|"passthrough",
 * "seed":S, "attr_timeout_ms":N, "neg_timeout_ms":N, "writeback_bytes":N, "rename_copy":bool,
 * "fsync_lies":bool, "excl_race":bool, "rules":[rule...]}.  A rule is
 * {"op":"write,fsync"|"*", "path":"glob", "host":H, "prob":P, "after":N,
 * "times":N (-1 forever), "fault":"EIO|ENOSPC|EDQUOT|ESTALE|...|EEXIST|delay|torn|kill|
 * lost_reply", "delay_ms":N, "reply":"ERRNO" (lost_reply only)}.  0, or -EINVAL naming
 * the bad key. */
int kaas_fault_configure(struct kaas_fault_model *m, const char *json);

/* Read a whole config file (a local path, read by the faultfs process) into
 * a malloc'd NUL-terminated string; NULL if it cannot be read. */
char *kaas_fault_read_config(const char *path);

/* Run one control command (JSON) and return a malloc'd JSON reply in *reply
 * (also on failure: {"ok":false,"error":"..."}).  Commands:
 *   {"cmd":"set","rule":{...}}     -> {"ok":true,"id":N}
 *   {"cmd":"clear"[,"id":N]}       drop one rule or all
 *   {"cmd":"crash","host":H}       crash a host
 *   {"cmd":"heal"[,"host":H]}      remove a crashed host's leftovers
 *   {"cmd":"switch","name":"rename_copy|fsync_lies|excl_race","on":bool}
 *   {"cmd":"dump"}                 hosts, handles, rules, switches, events
 *   {"cmd":"counters"}             per-op and per-fault counts
 * Returns 0, or -EINVAL for a malformed command. */
int kaas_fault_ctl(struct kaas_fault_model *m, const char *json, char **reply);

/* Number of hosts ever used (hosts are 0..MAX-1, created on first use). */
int kaas_fault_model_hosts(struct kaas_fault_model *m);
/* Crash host h (see above).  0 or -EINVAL. */
int kaas_fault_crash(struct kaas_fault_model *m, int host);
/* Heal host h (-1: all): remove silly files its crash left behind. */
int kaas_fault_heal(struct kaas_fault_model *m, int host);

/* The pid blamed for the ops of this thread (the "kill" fault kills it).
 * Default getpid(); the FUSE front sets the requesting process's pid. */
void kaas_fault_set_caller(pid_t pid);

/* ---- the operations, as host `host` performs them (substrate semantics,
 * see substrate.h for each op's contract) ---- */
int kaas_fault_open(struct kaas_fault_model *m, int host, const char *path, int flags,
		    uint32_t mode, struct kaas_fault_handle **out);
/* Publish and release.  The handle is freed whatever the result. */
int kaas_fault_close(struct kaas_fault_handle *h);
ssize_t kaas_fault_pread(struct kaas_fault_handle *h, void *buf, size_t len, uint64_t off);
ssize_t kaas_fault_pwrite(struct kaas_fault_handle *h, const void *buf, size_t len, uint64_t off);
/* Publish this host's cached writes to the file (no durability). */
int kaas_fault_flush(struct kaas_fault_handle *h);
int kaas_fault_fsync(struct kaas_fault_handle *h);
int kaas_fault_ftruncate(struct kaas_fault_handle *h, uint64_t size);
int kaas_fault_fstat(struct kaas_fault_handle *h, struct kaas_stat *st);
int kaas_fault_stat(struct kaas_fault_model *m, int host, const char *path, struct kaas_stat *st);
int kaas_fault_rename(struct kaas_fault_model *m, int host, const char *from, const char *to);
int kaas_fault_unlink(struct kaas_fault_model *m, int host, const char *path);
/* rename, and if the replaced target was silly-renamed, its new lower path
 * in *silly (malloc'd; NULL otherwise).  *applied (may be NULL) is 1 when
 * the rename was done, also when its reply was then lost (a lost_reply
 * rule: the return is that error, and the FUSE front moves its name as
 * the server did). */
int kaas_fault_rename_silly(struct kaas_fault_model *m, int host, const char *from, const char *to,
			    char **silly, int *applied);
/* unlink, and if it was silly-renamed, its new lower path in *silly
 * (malloc'd; NULL if the file was really removed); *applied as for rename. */
int kaas_fault_unlink_silly(struct kaas_fault_model *m, int host, const char *path, char **silly,
			    int *applied);
int kaas_fault_mkdir(struct kaas_fault_model *m, int host, const char *path, uint32_t mode);
int kaas_fault_rmdir(struct kaas_fault_model *m, int host, const char *path);
int kaas_fault_readdir(struct kaas_fault_model *m, int host, const char *path, kaas_dirent_cb cb,
		       void *arg);
int kaas_fault_fsync_dir(struct kaas_fault_model *m, int host, const char *path);
int kaas_fault_statfs(struct kaas_fault_model *m, int host, const char *path,
		      struct kaas_statfs *out);

#endif
