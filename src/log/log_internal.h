/*
 * log_internal.h — shared between the files of the partition log engine.
 * Not for use outside src/log/.
 *
 * Names: what is shared between the files is prefixed by what it is about:
 * kaas_seg_ (a segment and its file), kaas_segidx_ (a segment's sparse
 * index), kaas_pstate_ (producer state), kaas_manifest_ (manifest files),
 * kaas_logi_ (the rest of the engine: threads, roll, checkpoint, fence,
 * recovery).  Everything else is static to its file.  A `_locked` suffix
 * says which lock the caller holds; the function asserts it (assert_held).
 */
#ifndef KAAS_LOG_INTERNAL_H
#define KAAS_LOG_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "log/log.h"
#include "substrate/substrate.h"
#include "util/fifo.h"

#define MANIFEST_NAME "manifest.json"   /* older versions' single manifest */
#define MANIFEST_PREFIX "manifest-"      /* manifest-<epoch:010>.json: one per leader epoch */
#define MANIFEST_KIND "kaas-partition-manifest"
#define MANIFEST_VERSION 1
#define FENCE_DIR "fence"              /* epoch-<n:020>, contract/epoch_fence.h */
#define FENCE_NAME "leader.json"      /* older versions' fence: read as a floor */
#define FENCE_KIND "kaas-partition-leader"
#define FENCE_VERSION 1
#define PSTATE_NAME "producer-state.json"
#define PSTATE_KIND "kaas-producer-state"
#define PSTATE_VERSION 1
#define TXNIDX_NAME "aborted-txns.json" /* the aborted-transaction index (log_txn.c) */
#define TXNIDX_KIND "kaas-aborted-txns"
#define TXNIDX_VERSION 1

/* ------------------------------------------------------------ big endian */
static inline uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) << 32 | rd32(p + 4); }
static inline void wr32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}
static inline void wr64(unsigned char *p, uint64_t v)
{
	wr32(p, (uint32_t)(v >> 32));
	wr32(p + 4, (uint32_t)v);
}

/* ------------------------------------------------------------- index */

/* One sparse index entry: a batch start, and the running maximum timestamp
 * of the segment up to and including that batch. */
struct idx_entry {
	uint32_t rel;      /* batch base offset - segment base */
	uint32_t pos;      /* file position of the batch */
	int64_t ts;        /* running max timestamp through this batch */
};

struct seg_index {
	struct idx_entry *e;
	size_t n, cap;
	uint64_t covered;  /* bytes of the segment the entries cover */
	uint64_t last_pos; /* position of the last entry (for the interval) */
};

int kaas_segidx_push(struct seg_index *ix, uint32_t rel, uint32_t pos, int64_t ts);
void kaas_segidx_free(struct seg_index *ix);
/* Last entry with rel <= rel (or NULL). */
const struct idx_entry *kaas_segidx_floor_rel(const struct seg_index *ix, uint32_t rel);
/* Last entry with ts < ts (or NULL). */
const struct idx_entry *kaas_segidx_floor_ts(const struct seg_index *ix, int64_t ts);

/* ------------------------------------------------- open-file cache */

/* A cached handle (log_files.c): a segment's read handle or a log's write
 * handle.  Its owner uses .f only with *guard held and reopens it when the
 * cache closed it; the cache closes the least recently used handles beyond
 * the process's limit (kaas_log_io_configure), taking a victim's guard
 * with trylock only, and never one whose *pins is above 1 (a slice pins
 * its segment, and names its file).  Reopening never creates or truncates:
 * every byte written through a handle was fsynced before its owner let go
 * of the guard, so closing it loses nothing and a reopen sees all of it. */
struct kaas_logi_fslot {
	struct kaas_file *f;            /* under *guard; NULL: closed */
	pthread_mutex_t *guard;         /* the owner's lock (wlock or rlock) */
	int guard_rank;                 /* its rank (util/lock_rank.h) */
	atomic_int *pins;               /* NULL, or the segment's refs */
	struct kaas_logi_fslot *prev, *next; /* LRU list (the cache's lock) */
	bool listed;                    /* the cache's lock: f is open */
	int evict_rc;                   /* under *guard: a failed close by the cache */
};

void kaas_logi_fslot_init(struct kaas_logi_fslot *s, pthread_mutex_t *guard, int guard_rank,
			  atomic_int *pins);
/* Make sure s->f is open (guard held): 0, or -errno of the open.  flags
 * are KAAS_O_READ / KAAS_O_WRITE only.  Marks it most recently used, and
 * closes least recently used others beyond the limit. */
int kaas_logi_fslot_open(struct kaas_substrate *sub, struct kaas_logi_fslot *s, const char *path,
			 int flags);
/* Hand the cache a handle the owner opened itself (guard held, s closed). */
void kaas_logi_fslot_adopt(struct kaas_logi_fslot *s, struct kaas_file *f);
/* Mark s most recently used (guard held). */
void kaas_logi_fslot_touch(struct kaas_logi_fslot *s);
/* Close s->f if open (guard held): 0 or the close's -errno. */
int kaas_logi_fslot_close(struct kaas_logi_fslot *s);
void kaas_logi_files_set_limit(unsigned max_open_files); /* 0: the default */
unsigned kaas_logi_files_limit(void);
unsigned kaas_logi_files_open(void); /* handles open now */

/* ------------------------------------------------------ log I/O pool */

/* A unit of a log's work run by the pool (log_pool.c).  A task is in the
 * ready queue at most once and runs on at most one pool thread at a time;
 * scheduling it while it runs makes it run once more afterwards. */
struct kaas_logi_task {
	struct kaas_fifo_link link;     /* ready queue (the pool's lock) */
	int state;                      /* the pool's lock */
	void (*run)(struct kaas_logi_task *t);
};

void kaas_logi_task_init(struct kaas_logi_task *t, void (*run)(struct kaas_logi_task *));
/* Queue t unless it is queued; if it is running, run it again after. */
void kaas_logi_task_schedule(struct kaas_logi_task *t);
/* Wait until t is neither queued nor running (never on a pool thread). */
void kaas_logi_task_wait_idle(struct kaas_logi_task *t);
bool kaas_logi_on_pool_thread(void);
/* Every open log holds the pool: the first acquire starts its threads, the
 * last release stops and joins them.  0 or -errno. */
int kaas_logi_pool_acquire(void);
void kaas_logi_pool_release(void);

/* ----------------------------------------------------------- segment */

struct segment {
	int64_t base;         /* first offset */
	uint32_t epoch;       /* epoch stamped in the name */
	uint32_t gen;         /* cleaning generation (0: as the leader wrote it) */
	char *path;           /* "<dir>/<base:020>-<epoch:010>.log", or with a
	                         generation "<base:020>-<epoch:010>-<gen:010>.log"
	                         (log_clean.c) */
	bool sealed;
	uint64_t end;         /* valid bytes (sealed: recorded end; active: synced end) */
	int64_t next;         /* offset after the last valid batch */
	int64_t max_ts;       /* newest batch timestamp (-1: none) */
	int64_t created_ms;   /* when this process started it (roll by age) */

	/* Readers. */
	pthread_mutex_t rlock;     /* serialises use of the read handle */
	struct kaas_logi_fslot rslot; /* read handle (.f, under rlock), opened
	                              lazily, closed by the file cache when
	                              idle unless a slice pins the segment */
	uint64_t ra_end;           /* readahead hinted up to here (under rlock) */
	atomic_int refs;           /* slices + the log's list */
	bool doomed;               /* deleted from the manifest: unlink at refs 0 */
	bool keep_files;           /* doomed only in memory (a fenced cleaning
	                              switch): the reaper frees, never unlinks */

	pthread_mutex_t ilock;     /* guards index loading */
	bool index_ready;
	struct seg_index ix;
	atomic_bool ix_loaded;     /* a sealed segment's index is in memory */
	atomic_ullong used;        /* log tick of its last index use (eviction) */
};

/* "<base:020>-<epoch:010>[-<gen:010>].<ext>" parsing: 0 and the fields
 * (*gen 0 when the name has none), -EINVAL. */
int kaas_seg_parse_name(const char *name, int64_t *base, uint32_t *epoch, uint32_t *gen,
			const char **ext);
char *kaas_seg_path(const char *dir, int64_t base, uint32_t epoch, uint32_t gen, const char *ext);
struct segment *kaas_seg_new(const char *dir, int64_t base, uint32_t epoch, uint32_t gen);
void kaas_seg_free(struct segment *s);
/* Take / drop a reference (refs: the log's list + every slice or reader
 * using the segment).  Either asserts the count was positive: a segment
 * whose count reached 0 is doomed and may be unlinked by the reaper. */
void kaas_seg_ref(struct segment *s);
void kaas_seg_unref(struct segment *s);
/* The reaper's undo: a doomed segment it could not unlink gets its
 * reference back (asserts the count was 0). */
void kaas_seg_ref_zero(struct segment *s);

/* A record field of RecordBatch v2: the zigzag varint at *p, below end
 * (batch.c).  0 with *v set and *p advanced past it, or -EBADMSG (runs past
 * end, or longer than 64 bits). */
int kaas_batch_varint(const unsigned char **p, const unsigned char *end, int64_t *v);

/* Scan batches in f from pos up to limit (UINT64_MAX: to EOF), starting at
 * offset `expect` (with check_crc the next batch must have that base offset,
 * without it at least that one: a cleaned segment has gaps; < 0: any).
 * For every valid batch calls cb (may be NULL).  Stops at the first short,
 * malformed, misnumbered or CRC-failing batch.  check_crc 0 trusts lengths
 * only (for data below a recorded end).  Returns 0 with *end_pos and
 * *next_offset of the last valid batch's end, or -errno (read failure). */
typedef int (*scan_cb)(void *arg, const struct kaas_batch_header *h, uint64_t pos,
		       const unsigned char *batch, size_t len);
int kaas_seg_scan(struct kaas_file *f, uint64_t pos, int64_t expect, uint64_t limit, int check_crc,
	     int want_body, scan_cb cb, void *arg, uint64_t *end_pos, int64_t *next_offset);

/* Make sure s->ix covers the segment up to s->end (sealed: load the index
 * files or rebuild and write them). */
int kaas_seg_index_ensure(struct kaas_substrate *sub, struct segment *s, uint32_t interval,
		     int may_write);
/* Write the .index/.timeindex files of a sealed segment (replace). */
int kaas_seg_index_write(struct kaas_substrate *sub, struct segment *s);
/* Open the read handle if needed (rlock held). */
int kaas_seg_open_read(struct kaas_substrate *sub, struct segment *s);

/* ------------------------------------------------------ producer state */

struct producer {
	struct kaas_log_producer st;  /* st.txn_first_offset: the open transaction */
	int64_t marker_offset;        /* the last marker's offset, */
	int16_t marker_epoch;         /* its producer epoch */
	int8_t marker_kind;           /* and kind: 0 abort, 1 commit, -1 none */
	int32_t marker_coord;         /* the highest coordinator epoch of its
	                                 markers (-1: none; a lower one is
	                                 refused, log_txn.c) */
	struct producer *next;
};

struct pstate {
	struct producer **tab;
	size_t nb, count;
	int64_t next_offset;  /* the state covers batches below this */
	size_t open_txns;     /* producers with an open transaction */
	/* The aborted-transaction index, by marker offset (log_txn.c). */
	struct kaas_log_aborted_txn *aborted;
	size_t naborted, capaborted;
	int64_t idx_at;       /* next_offset of the index file on the volume
	                         that the snapshot names (-1: none, no abort) */
	size_t idx_written;   /* entries in that file (naborted above: write) */
};

int kaas_pstate_init(struct pstate *ps);
void kaas_pstate_free(struct pstate *ps);
/* Record a batch (ignored for producer_id < 0). */
int kaas_pstate_apply(struct pstate *ps, int64_t pid, int16_t epoch, int32_t base_seq,
		 int32_t last_delta, int64_t base_offset, int64_t ts);
struct producer *kaas_pstate_find(const struct pstate *ps, int64_t pid);
/* Record a whole RecordBatch v2 at base offset `base`: its window as
 * kaas_pstate_apply, and transactions: a transactional batch opens its
 * producer's transaction if none is open; a control batch (a marker) moves
 * the producer's epoch up to its own, ends the open transaction, records
 * itself as the producer's last marker, and an abort adds an entry to the
 * aborted-transaction index (first offset: the open transaction's, else
 * the marker's own).  0 or -ENOMEM. */
int kaas_pstate_apply_batch(struct pstate *ps, const unsigned char *batch, size_t len,
			    int64_t base, int64_t ts);
/* The marker kind of a control batch's first record: 0 abort, 1 commit, or
 * -1 (not a control batch, or a key that is not an EndTxnMarker). */
int kaas_txn_marker_kind(const unsigned char *batch, size_t len);
/* The coordinator epoch in an EndTxnMarker's value (a batch whose
 * kaas_txn_marker_kind is 0 or 1), or -1 when the value has none. */
int32_t kaas_txn_marker_coord(const unsigned char *batch, size_t len);
/* Add {pid, first, last} to the aborted-transaction index: 0 or -ENOMEM. */
int kaas_pstate_add_aborted(struct pstate *ps, int64_t pid, int64_t first, int64_t last);
/* Snapshot as a JSON body (cJSON *) / load from one. */
struct cJSON;
struct cJSON *kaas_pstate_to_json(const struct pstate *ps);
int kaas_pstate_from_json(struct pstate *ps, const struct cJSON *body);

/* --------------------------------------------------------------- log */

struct pending {
	struct pending *next;
	kaas_log_append_cb cb;
	void *arg;
	int64_t base;
	uint32_t count;
	int64_t max_ts;
	size_t len;
	unsigned char *data;   /* baseOffset already rewritten */
	struct kaas_log_waiter *waiters; /* kaas_log_when_durable (mu) */
};

/* A group commit: the batches written and fsynced together. */
struct round {
	struct kaas_fifo_link link; /* in the ack queue */
	struct pending *list;
	size_t bytes, n;
	struct segment *seg;   /* where it was written */
	uint64_t pos;
	int rc;                /* the write's result */
};

/* The round whose ack-queue link is l, or NULL for NULL. */
static inline struct round *kaas_logi_round_of(struct kaas_fifo_link *l)
{
	return l ? KAAS_FIFO_ENTRY(l, struct round, link) : NULL;
}

struct kaas_log {
	struct kaas_substrate *sub;
	char *dir;
	char *manifest_path;        /* <dir>/manifest-<our epoch>.json: the one we write */
	char *loaded_manifest;      /* the manifest the open read (messages), or NULL */
	char *fence_dir;             /* <dir>/fence */
	char *legacy_fence_path;     /* <dir>/leader.json (read only) */
	char *pstate_path;
	uint32_t epoch;
	struct kaas_log_config cfg;

	pthread_mutex_t mu;         /* in-memory state below */
	pthread_cond_t work_cv;     /* sync task's linger: stop */
	pthread_cond_t room_cv;     /* appenders: pending bytes dropped */
	pthread_cond_t data_cv;     /* readers: high watermark moved / failure */
	pthread_cond_t drained_cv;  /* roll, close: a round acknowledged, `acking`
	                               dropped, or `writing` done */

	pthread_mutex_t wlock;      /* every write to the volume (sync task, roll,
	                               retention, close) */

	struct segment **segs;      /* sorted by base; last is active */
	size_t nsegs, capsegs;
	struct segment **doomed;    /* deleted from the manifest, not yet unlinked */
	size_t ndoomed, capdoomed;
	struct kaas_logi_fslot wslot; /* active segment's write handle (.f,
	                               under wlock; the file cache may close it
	                               between rounds, write_round reopens it) */
	unsigned char *wbuf;        /* sync task: a round's batches, gathered
	                               (a backend without pwritev) */
	size_t wbuf_cap;
	struct iovec *wiov;         /* sync task: a round's batches, listed for
	                               pwritev */
	size_t wiov_cap;

	int64_t log_start;
	int64_t hwm;                /* end of last fsynced batch */
	int64_t leo;                /* next offset to assign */
	struct pending *qhead, *qtail;
	struct round *writing;      /* the round the sync task is writing */
	struct kaas_fifo ackq;      /* rounds written, not yet acknowledged */
	bool acking;                /* a thread is acknowledging the queue's head */
	uint64_t wpos;              /* written end of the active segment (wlock) */
	uint64_t qbytes;
	int failed;                 /* 0 or -errno: the log is dead */
	bool stop;
	bool sync_queued;           /* the sync task is scheduled and has not yet
	                               looked at the queue */
	struct kaas_logi_task sync_task; /* group commit: kaas_logi_sync_run */
	struct kaas_logi_task ack_task;  /* acknowledgement: kaas_logi_ack_run */
	bool pool_held;             /* kaas_logi_pool_acquire done */

	uint64_t since_ckpt;        /* bytes since the last checkpoint */
	uint64_t ckpt_pos;          /* checkpoint of the active segment */
	int64_t ckpt_next;

	pthread_mutex_t clean_mu;   /* one cleaning pass at a time (log_clean.c) */
	uint32_t clean_gen;         /* the highest cleaning generation used or
	                               read from a manifest (under wlock) */
	int64_t clean_due_ms;       /* the earliest delete horizon a published
	                               pass stamped on a marker (0: none known;
	                               under mu): a pass is due then */

	pthread_mutex_t mf_lock;    /* serialises fence checks; fence_ino */
	uint64_t fence_ino;         /* the fence directory's inode at our claim */

	struct kaas_log_waiter *room_waiters; /* kaas_log_append_nowait (mu): run
	                               by ack_one when qbytes drop */
	struct pstate ps;           /* producer state (under mu) */
	pthread_mutex_t txn_mu;     /* serialises marker appends (check, queue) */
	char *txnidx_path;          /* <dir>/aborted-txns.json */
	kaas_log_notify_cb notify;
	void *notify_arg;
	struct kaas_log_stats stats;
	atomic_ullong tick;         /* index use clock */
};

/* Fence and manifest I/O (manifest.c).
 * kaas_logi_fence_claim: claim our epoch in fence/ (kaas_fence_claim): 0, or
 * KAAS_LOG_EFENCED if a newer epoch exists or ours is someone else's.
 * kaas_manifest_check_epoch: 0 while no epoch above ours is claimed,
 * KAAS_LOG_EFENCED if one is, -EUCLEAN if the fence is gone, or -errno.
 * kaas_manifest_write checks first, then replaces our manifest-<epoch>.json.
 * kaas_logi_legacy_fence_read: the epoch in an older version's leader.json. */
int kaas_manifest_write(struct kaas_log *log);
/* Manifests are named by the epoch of the leader that writes them, so a
 * zombie's late manifest write lands in its own older file, never over the
 * new leader's (issue 13, defect 10).  Readers take the highest epoch.
 * kaas_manifest_path_for: "<dir>/manifest-<epoch:010>.json" (malloc'd).
 * kaas_manifest_find: the newest manifest of the directory: 0 with *path
 * (malloc'd) and *name_epoch (0 for a legacy manifest.json, only used when
 * no numbered one exists), -ENOENT if none, or -errno.
 * kaas_manifest_sweep_older: remove the manifests of older epochs and the legacy
 * manifest.json (after ours is written; what a zombie writes later is older
 * than ours and ignored, and swept at the next open).  Returns the number
 * removed or -errno. */
char *kaas_manifest_path_for(const char *dir, uint32_t epoch);
int kaas_manifest_find(struct kaas_log *log, char **path, uint32_t *name_epoch);
/* 0 and *epoch for a name "manifest-<epoch:010>.json", else -EINVAL. */
int kaas_manifest_parse_name(const char *name, uint32_t *epoch);
/* The same for directory `dir` of `sub`, without a log (log_inspect.c). */
int kaas_manifest_find_in(struct kaas_substrate *sub, const char *dir, char **path,
			  uint32_t *name_epoch);
int kaas_manifest_sweep_older(struct kaas_log *log);
int kaas_manifest_check_epoch(struct kaas_log *log);
int kaas_logi_fence_claim(struct kaas_log *log);
int kaas_logi_legacy_fence_read(struct kaas_log *log, uint64_t *epoch);
/* Producer snapshot, epoch-checked as the manifest (call with wlock). */
int kaas_pstate_write(struct kaas_log *log);

/* Append s to log->segs, the new last (active) segment (mu held):
 * 0 or -ENOMEM. */
int kaas_logi_add_segment(struct kaas_log *log, struct segment *s);
/* Roll (wlock held, queue drained to disk). */
int kaas_logi_roll_locked(struct kaas_log *log);
/* Checkpoint (wlock held): producer snapshot then manifest. */
int kaas_logi_checkpoint_locked(struct kaas_log *log);
/* Unlink the files of doomed segments no slice references any more (wlock
 * held, takes mu); a doomed segment keeps the list's reference until then.
 * Returns the number removed. */
int kaas_logi_reap_doomed(struct kaas_log *log);
/* Room for k more doomed segments (mu held): 0 or -ENOMEM. */
int kaas_logi_doomed_reserve_locked(struct kaas_log *log, size_t k);
/* Record a failure: every waiter is woken with it (mu held). */
void kaas_logi_fail_locked(struct kaas_log *log, int err);
/* Create segment "<base>-<our epoch>.log" and make it the active one
 * (wlock held, or during open). */
int kaas_logi_start_segment(struct kaas_log *log, int64_t base);
/* The sync task (on the pool): writes queued batches as rounds and
 * fsyncs them, a few rounds per run. */
void kaas_logi_sync_run(struct kaas_logi_task *t);
/* The ack task (on the pool): fence check, publication and completions,
 * per round, in order. */
void kaas_logi_ack_run(struct kaas_logi_task *t);
/* Wait until the log has no queued, written or unacknowledged round and
 * its tasks are idle (after stop: nothing schedules them again).  Not on a
 * pool thread; no lock held. */
void kaas_logi_quiesce(struct kaas_log *log);

int64_t kaas_logi_now_ms_wall(void);
/* Drop least recently used sealed-segment indexes beyond
 * cfg.max_loaded_indexes, never keep's (no segment lock held). */
void kaas_logi_evict_indexes(struct kaas_log *log, struct segment *keep);

/* Opening (log_recover.c).  Each returns 0 or -errno with a detail naming
 * the file concerned. */
/* Apply producer state from the batches in [from, to) of the segments. */
int kaas_pstate_scan(struct kaas_log *log, int64_t from, int64_t to);
/* Scan the active segment L from the checkpoint by length and CRC; fsync
 * what is valid; seal L at that end. */
int kaas_logi_recover_tail(struct kaas_log *log, struct segment *L);

/* log_metrics.c: the sync thread's hooks (a no-op while metrics are off):
 * t0 = kaas_logi_metrics_start() before a round's fsync, then
 * kaas_logi_metrics_commit(round, t0, fsync result); tail recoveries in
 * progress counted with kaas_logi_metrics_recovering(+1 / -1). */
uint64_t kaas_logi_metrics_start(void);
void kaas_logi_metrics_commit(const struct round *r, uint64_t t0, int rc);
void kaas_logi_metrics_recovering(int delta);
/* Load producer-state.json; *from = the offset it covers up to (the log
 * start when there is none).  1 if a snapshot was read, 0 if there is
 * none, or -errno. */
int kaas_pstate_load(struct kaas_log *log, int64_t *from);
/* Waiting for one completion (the _sync forms): init, pass
 * kaas_logi_wait_cb with w as the callback, then kaas_logi_wait_end(w, the
 * queueing call's result): that result if it failed (the callback never
 * runs), else the callback's; w is finished either way. */
struct kaas_logi_wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	int64_t result;
};
void kaas_logi_wait_init(struct kaas_logi_wait *w);
void kaas_logi_wait_cb(void *arg, int64_t result);
int64_t kaas_logi_wait_end(struct kaas_logi_wait *w, int rc);

/* The aborted-transaction index beside the segments (log_txn.c), derived
 * data named by the producer snapshot ("aborted_index_at": the index's
 * next_offset; no abort lies between it and the snapshot's).
 * kaas_txnidx_snapshot: the producer snapshot's body (*body, to write and
 * free), consistent with the index; when aborts were added since the index
 * was last written, the index is replaced first (wlock held).
 * kaas_txnidx_load: read the index the snapshot names into log->ps (call
 * right after kaas_pstate_load, before the scans); *rebuild = 1 when it is
 * missing, torn, or another one.
 * kaas_txnidx_rebuild: derive the index below `to` from the markers in the
 * log from the log start, keeping the producer state.  0 or -errno. */
struct cJSON;
int kaas_txnidx_snapshot(struct kaas_log *log, struct cJSON **body);
int kaas_txnidx_load(struct kaas_log *log, int *rebuild);
int kaas_txnidx_rebuild(struct kaas_log *log, int64_t to);
/* Remove segment files no manifest entry names (epoch <= ours). */
int kaas_logi_sweep_orphans(struct kaas_log *log);
/* -EUCLEAN if a segment of an epoch above mepoch holds data unnamed. */
int kaas_logi_check_unlisted(struct kaas_log *log, uint64_t mepoch);
/* -EUCLEAN if there is no manifest but a segment holds data. */
int kaas_logi_check_fresh(struct kaas_log *log);

#endif
