/*
 * internal.h — the fault model's private structures, shared by model.c
 * (operations), rules.c (fault schedule, PRNG, event log) and ctl.c
 * (config and control commands).  Not for use outside faultfs/.
 */
#ifndef KAAS_FAULTFS_INTERNAL_H
#define KAAS_FAULTFS_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include "faultfs/model.h"

/* Operations a rule can select (bit i = 1 << i). */
enum fm_op {
	FM_OPEN, FM_CREATE, FM_READ, FM_WRITE, FM_FSYNC, FM_CLOSE, FM_TRUNCATE, FM_STAT,
	FM_RENAME, FM_UNLINK, FM_MKDIR, FM_RMDIR, FM_READDIR, FM_STATFS, FM_FSYNCDIR, FM_NOPS
};
extern const char *const fm_op_names[FM_NOPS];

enum fm_kind { FK_ERRNO, FK_DELAY, FK_TORN, FK_KILL, FK_LOST };

/* The ops a lost reply applies to: the name operations an NFS client
 * re-sends when a reply does not come back, and whose re-sent request the
 * server answers from the changed state (no duplicate-request cache).  A
 * lost_reply rule does not match, and does not count, any other op. */
#define FM_LOST_OPS ((1u << FM_CREATE) | (1u << FM_RENAME) | (1u << FM_UNLINK) | \
		     (1u << FM_MKDIR) | (1u << FM_RMDIR))

struct fm_rule {
	int id;
	unsigned ops;           /* bitmask of enum fm_op */
	char *path;             /* fnmatch glob, NULL = any */
	int host;               /* -1 = any */
	double prob;            /* 0 < prob <= 1 */
	long after;             /* skip the first `after` matching ops */
	long times;             /* fire at most this many times, -1 forever */
	long seen, fired;
	enum fm_kind kind;
	int err;                /* FK_ERRNO: positive errno; FK_LOST: the answer
				 * ("reply"), 0 for the re-sent request's */
	int delay_ms;           /* FK_DELAY, FK_TORN */
	struct fm_rule *next;
};

/* Byte ranges held in memory: a host's unpublished writes, or the old
 * bytes another host's publication overwrote (what this host still sees). */
struct fm_extent {
	uint64_t off;
	size_t len, cap;
	char *data;
};
struct fm_extents {
	struct fm_extent *v;
	size_t n, cap;
	size_t bytes;
};

/* One host's view of one file. */
struct fm_view {
	int nopen;
	uint64_t size;          /* the size this host sees */
	struct fm_extents dirty;
	struct fm_extents undo;
	char *silly;            /* lower path of the silly-renamed name, or NULL */
};

/* A lower file some host has open, by identity (inode number). */
struct fm_node {
	uint64_t ino;
	int removed;            /* really removed: other hosts' handles are stale */
	int nopen;
	struct fm_view view[KAAS_FAULT_MAX_HOSTS];
	struct fm_node *next;
};

struct fm_attr {
	char *path;
	struct kaas_stat st;
	int64_t at_ns;
	struct fm_attr *next;
};

struct fm_neg {                 /* a name this host found missing */
	char *path;
	int64_t at_ns;
	struct fm_neg *next;
};

struct fm_host {
	int used;
	uint64_t gen;           /* bumped by a crash */
	struct fm_attr *attrs;  /* attribute cache */
	struct fm_neg *negs;    /* negative lookup cache */
	char **leftovers;       /* silly files a crash left behind */
	size_t nleftovers;
	unsigned long crashes;
};

struct kaas_fault_handle {
	struct kaas_fault_model *m;
	int host;
	struct kaas_file *lower;
	struct fm_node *node;
	char *path;
	int flags;
	int dead;               /* host crashed since open: -EIO */
	struct fm_extents lied; /* fsync_lies: writes only this handle sees until close */
	struct kaas_fault_handle *next, *prev;
};

struct fm_recent {              /* excl_race: recent exclusive creates */
	char *path;
	pid_t pid;
	int64_t at_ns;
	struct fm_recent *next;
};

struct kaas_fault_model {
	pthread_mutex_t mu;
	struct kaas_substrate *lower;
	char *lower_url;
	/* behaviours */
	int passthrough;        /* profile passthrough: no buffering, no silly, no estale */
	int attr_timeout_ms;
	int neg_timeout_ms;     /* negative lookups trusted this long (0: none) */
	size_t writeback_bytes;
	int rename_copy, fsync_lies, excl_race;
	int race_window_ms;
	/* state */
	struct fm_host hosts[KAAS_FAULT_MAX_HOSTS];
	struct fm_node *nodes;
	struct kaas_fault_handle *handles;
	uint64_t silly_counter;
	struct fm_recent *recent;
	/* schedule */
	uint64_t rng;
	struct fm_rule *rules;
	int next_rule_id;
	uint64_t seq;
	FILE *log;
	char **events;          /* the last events, for dump */
	size_t nevents, events_cap;
	unsigned long op_count[FM_NOPS];
	unsigned long fault_count[FM_NOPS];
	unsigned long neg_hits;  /* lookups answered ENOENT by a negative entry */
};

#define LOCK(m) pthread_mutex_lock(&(m)->mu)
#define UNLOCK(m) pthread_mutex_unlock(&(m)->mu)

/* extents.c */
void fm_ext_free(struct fm_extents *x);
/* Append bytes at off (a write continuing the last extent extends it):
 * 0 or -ENOMEM. */
int fm_ext_add(struct fm_extents *x, const void *buf, size_t len, uint64_t off);
/* Copy the part of e inside [off, off+len) into buf. */
void fm_ext_overlay(const struct fm_extent *e, char *buf, size_t len, uint64_t off);
/* The end of the furthest extent (0 if none). */
uint64_t fm_ext_end(const struct fm_extents *x);

/* attrcache.c — m->mu held. */
void fm_attr_forget_all(struct fm_host *hs);
void fm_attr_forget(struct fm_host *hs, const char *path);
void fm_attr_store(struct kaas_fault_model *m, int host, const char *path, const struct kaas_stat *st);
/* The cached attributes of path if younger than attr_timeout_ms, or NULL. */
const struct fm_attr *fm_attr_fresh(struct kaas_fault_model *m, int host, const char *path);

/* The nfs-floor profile's neg_timeout_ms. */
#define FM_NEG_TIMEOUT_DEFAULT_MS 10000
/* negcache.c — m->mu held.  See negcache.c for what it models. */
void fm_neg_forget_all(struct fm_host *hs);
/* Drop the entry for path and every entry below it (the host made or
 * found the name, or moved it away). */
void fm_neg_forget(struct fm_host *hs, const char *path);
/* Drop the entries directly in directory dir (the host opened or listed
 * it: revalidated it with the server). */
void fm_neg_forget_children(struct fm_host *hs, const char *dir);
/* Remember that path (or its shallowest missing ancestor, looked up on
 * the lower) is missing to host; nothing when neg_timeout_ms is 0. */
void fm_neg_store(struct kaas_fault_model *m, int host, const char *path);
/* 1 if host's fresh negative entries hide path: an entry for an ancestor,
 * or (self) for path itself. */
int fm_neg_hides(struct kaas_fault_model *m, int host, const char *path, int self);

/* model.c — m->mu held unless said otherwise. */
/* What fm_apply decided besides an error: a torn flush, or a lost reply
 * (the caller performs the op, then gives fm_lost_reply's answer). */
struct fm_decided {
	int torn;
	int torn_delay_ms;
	int lost;               /* a lost reply's rule fired */
	int lost_err;           /* its "reply" (positive errno), 0: the re-sent request's */
};
/* The pid blamed for this thread's ops (no lock needed). */
pid_t fm_caller(void);
/* 1 if host is out of range (no lock needed). */
int fm_bad_host(int host);
struct fm_node *fm_node_find(struct kaas_fault_model *m, uint64_t ino);
/* Free the node if no handle is open on it. */
void fm_node_release(struct kaas_fault_model *m, struct fm_node *node);
/* 1 if path is a silly-renamed name `host` still holds (only that host's
 * unlink of it is refused: another client's is a plain remove). */
int fm_silly_held(struct kaas_fault_model *m, int host, const char *path);
/* Rename the file node at path (held open by host) to its .nfs name:
 * 0 or -errno. */
int fm_silly_rename(struct kaas_fault_model *m, int host, struct fm_node *node, const char *path);
/* Decide and apply the fault for op: 0 to go on, or -errno; d (may be NULL)
 * receives a torn decision.  May unlock m->mu while delaying. */
int fm_apply(struct kaas_fault_model *m, int host, enum fm_op op, const char *path,
	     struct fm_decided *d);
/* The answer to an op after fm_apply decided d: rc itself if the op failed
 * or no reply was lost; else the op was applied and its reply lost: the
 * rule's "reply", or what the re-sent request gets from the changed state
 * (an exclusive create or mkdir: -EEXIST; a rename or unlink or rmdir:
 * -ENOENT; a create without O_EXCL, which a re-send repeats harmlessly:
 * -ETIMEDOUT, the reply never came), with a detail saying so.  `excl`: the
 * create was exclusive. */
int fm_lost_reply(const struct fm_decided *d, int rc, enum fm_op op, int excl, const char *path,
		  int host);
/* 0, or -EIO (host crashed) / -ESTALE (removed by another host). */
int fm_handle_check(struct kaas_fault_handle *h);

/* handles.c — m->mu held. */
/* excl_race: 1 if another process's racy create of path is in its window. */
int fm_racy_hidden(struct kaas_fault_model *m, const char *path);

/* rules.c — all called with m->mu held. */
/* The fault for this op, or NULL; logs it.  May draw from the PRNG. */
struct fm_rule *fm_decide(struct kaas_fault_model *m, int host, enum fm_op op, const char *path);
/* Log a fault that is not a rule's (e.g. a crash) — same format. */
void fm_event(struct kaas_fault_model *m, int host, const char *op, const char *path,
	      const char *fault);
/* A uniform draw in [0, 1) and a 64-bit draw. */
double fm_draw(struct kaas_fault_model *m);
uint64_t fm_rand(struct kaas_fault_model *m);
void fm_rules_free(struct kaas_fault_model *m);
/* Parse a rule object (cJSON *) and append it; returns its id or -EINVAL. */
struct cJSON;
int fm_rule_add(struct kaas_fault_model *m, const struct cJSON *obj);
int fm_rule_remove(struct kaas_fault_model *m, int id);
/* Parse an op list ("write,fsync", "*"); 0 on error. */
unsigned fm_parse_ops(const char *s);
/* The fault's name for the log ("EIO", "delay", "lost_reply", ...). */
const char *fm_rule_fault_name(const struct fm_rule *r);
/* The name a rule gives errno err ("EIO"), or "?". */
const char *fm_errno_name(int err);

/* model.c internals used by ctl.c (m->mu held). */
void fm_crash_locked(struct kaas_fault_model *m, int host);
int fm_heal_locked(struct kaas_fault_model *m, int host);

int64_t fm_now_ns(void);
void fm_sleep_ms(int ms);

#endif
