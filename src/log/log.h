/*
 * log.h — the partition log engine: one partition's RecordBatch v2 log on the
 * shared volume, written by the partition's leader only.
 *
 * On the volume (docs/ON-VOLUME.md has the whole list), in "<data>/<topic>/<partition>/":
 *   manifest-<epoch:010>.json  leader epoch, log start, the segment list with
 *                              the recorded valid end of every sealed segment,
 *                              and the checkpoint (position, next offset) of
 *                              the active segment.  kaas_doc_write/read.  Each
 *                              leader writes only the one named by its epoch;
 *                              readers take the highest (an older version's
 *                              manifest.json is read when there is none, and
 *                              removed, with older epochs' manifests, once
 *                              the open wrote its own).
 *   <base:020>-<epoch:010>.log the segments, append-only, stamped with the
 *                              epoch of the leader that created them.
 *   <base:020>-<epoch:010>-<gen:010>.log
 *                              a cleaned segment (log_clean.c, compacted
 *                              partitions): written whole by the leader of
 *                              <epoch> with cleaning generation <gen>, never
 *                              appended; same offsets as the ones it
 *                              replaced, with gaps.
 *   <base:020>-<epoch:010>.index / .timeindex
 *                              sparse indexes; derived data, rebuilt from the
 *                              segment when missing or doubtful.  No mmap.
 *   producer-state.json        the idempotence window snapshot, with each
 *                              producer's open transaction (first offset)
 *                              and last marker (offset, epoch, kind).
 *   aborted-txns.json          the aborted-transaction index (log_txn.c):
 *                              derived data written with the snapshot,
 *                              rebuilt from the markers when missing.
 *   fence/epoch-<n:020>        the fence (contract/epoch_fence.h): one name
 *                              per leader epoch, made by exclusive create by
 *                              kaas_log_open (before it looks at the tail),
 *                              never rewritten; every commit looks up
 *                              fence/epoch-<ours+1>.  A leader.json left by
 *                              older versions is read as a floor, never
 *                              written.
 *
 * Readers (including the next leader) trust a segment's bytes only up to the
 * end recorded in the manifest (sealed segments) or up to the high watermark
 * (the active one), so a zombie leader with an older epoch that keeps
 * appending never makes its bytes visible to the new leader's readers.  And
 * (cfg.fence_check) a zombie never acknowledges an append the new leader did
 * not recover: every group commit checks after its fsync and before
 * completing that no newer epoch is claimed in fence/, and a new leader
 * claims its epoch there before it scans.  One epoch has one leader: a
 * second open at an epoch someone else claimed is refused.
 *
 * Errors: every function returns >= 0 or a negative errno; the detail is in
 * kaas_sub_errdetail() of the calling thread where the failure happened there.
 *   KAAS_LOG_EFENCED            (KAAS_EFENCED, util/status.h: not an errno)
 *                               a leader with a higher epoch owns the
 *                               partition, or our epoch is someone else's;
 *                               this handle must be closed.
 *   -ESTALE                     a transient answer of the volume (a handle
 *                               another host's replace made stale): never
 *                               "fenced".  If it failed the log, close it and
 *                               open it again (same epoch).
 *   -EBADMSG                    the manifest or producer-state.json is torn
 *                               or corrupt: the partition is offline (the
 *                               detail names the file); never reset silently.
 *   -EUCLEAN                    the directory is inconsistent (segments but
 *                               no manifest, a segment named in the manifest
 *                               missing or shorter than its recorded end).
 *   -ERANGE                     an offset outside [log start, high watermark].
 *   -EIO / other                a write or fsync failed: the log is failed
 *                               for good (every later append returns the
 *                               same error); close it, and let a new leader
 *                               (higher epoch) recover the tail.
 *
 * Threads: every function may be called from any thread, concurrently,
 * except kaas_log_close (once, after every other call on the handle has
 * returned and every slice was released).  Append completions run on one of
 * the log's own threads (the sync thread or its ack thread), in offset order.
 * The substrate must allow use from several threads.
 */
#ifndef KAAS_LOG_H
#define KAAS_LOG_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"
#include "util/status.h"

/* The "fenced" status: the volume names a leader epoch above ours.  A kaas
 * status outside errno space (util/status.h), so that a transient -ESTALE
 * from the substrate is never taken for it. */
#define KAAS_LOG_EFENCED KAAS_EFENCED

/* Length of the RecordBatch v2 header up to and including the record count. */
#define KAAS_BATCH_HEADER_LEN 61
/* Offset of the fields the log rewrites (not covered by the batch CRC). */
#define KAAS_BATCH_BASE_OFFSET_AT 0       /* int64 */
#define KAAS_BATCH_LEADER_EPOCH_AT 12     /* int32 partitionLeaderEpoch */

/* Producer-state window: the last five batches per producer id. */
#define KAAS_LOG_PRODUCER_WINDOW 5

struct kaas_log;

struct kaas_log_config {
	uint64_t segment_bytes;       /* roll when the active segment reaches this
	                                 (default 1 GiB) */
	int64_t segment_ms;           /* roll when the active segment is older than
	                                 this (wall clock); <= 0: never (default 7 days) */
	int64_t retention_bytes;      /* keep at most this many bytes; < 0: no limit (default) */
	int64_t retention_ms;         /* delete segments whose newest timestamp is older
	                                 than this (the active one rolled first);
	                                 < 0: no limit (default 7 days) */
	uint32_t index_interval_bytes;/* one index entry per this many bytes (default 4096) */
	uint64_t checkpoint_bytes;    /* write a checkpoint (manifest + producer
	                                 snapshot) after this many new bytes, bounding
	                                 recovery to this tail (default 64 MiB: a
	                                 checkpoint is three replaces, about eight
	                                 syncs under wlock, so every 16 MiB it took
	                                 14% of a hot partition's writer's time) */
	uint32_t linger_us;           /* group commit: wait this long for more
	                                 appends before an fsync (default 0: appends
	                                 arriving during an fsync share the next one) */
	uint64_t max_pending_bytes;   /* appenders block while this many bytes wait
	                                 for their fsync (default 64 MiB) */
	int fence_check;              /* 1 (default): after each group fsync and
	                                 before acknowledging, check the fence (no
	                                 epoch above ours claimed), so that a zombie
	                                 never acknowledges an append the new leader
	                                 did not recover (the new leader claims its
	                                 epoch before it scans the tail).  0: skip
	                                 (benchmarks only) */
	uint32_t max_loaded_indexes;  /* sealed segments whose sparse index stays
	                                 in memory, least recently used dropped
	                                 first (default 8) */
	int parent_must_exist;        /* 1: create only the partition directory
	                                 itself; its parent (the topic directory)
	                                 must exist, else the open fails with
	                                 -ENOENT, so an open never re-creates a
	                                 deleted topic's directory.  0 (default):
	                                 every missing component is created */
	/* Compaction (issue 21, log_clean.c); all may change with kaas_log_retune. */
	int compact;                  /* 1: cleanup.policy has "compact": housekeeping
	                                 runs the log cleaner (default 0) */
	int64_t delete_retention_ms;  /* a tombstone (null value) older than this
	                                 is removed by cleaning (default 1 day) */
	double min_cleanable_dirty_ratio; /* clean when the bytes never cleaned are
	                                 at least this share of the sealed
	                                 segments (default 0.5) */
	int64_t min_compaction_lag_ms;/* a sealed segment whose newest timestamp is
	                                 younger than this is not cleaned yet
	                                 (default 0) */
	int64_t max_compaction_lag_ms;/* < 0: none (default).  Else clean, whatever
	                                 the ratio, once the oldest uncleaned
	                                 sealed segment's newest timestamp is older
	                                 than this */
};

/* Fill cfg with the defaults above. */
void kaas_log_config_default(struct kaas_log_config *cfg);

/* Open the partition in directory `dir` ("<topic>/<partition>", created if
 * missing; its parent too unless cfg->parent_must_exist) of substrate `data`
 * as its leader with epoch `leader_epoch`.  cfg may be NULL (defaults).
 * The log keeps `data` (not owned; it must outlive the log) and copies cfg.
 * What it does: reads the newest manifest; refuses with KAAS_LOG_EFENCED if the
 * manifest names a higher epoch, or if claiming `leader_epoch` in fence/ is
 * refused (a higher epoch is claimed, or this one by someone else — only the
 * process that claimed it, through the same substrate handle, may open the
 * partition at that epoch again); sweeps every replace temp in the directory
 * (it is the fenced single writer); recovers the tail of the last segment
 * from the last checkpoint by length and CRC32C (torn or garbage bytes after
 * the last valid batch are ignored, never read); records that valid end in
 * the manifest and starts a new segment "<next:020>-<epoch:010>.log";
 * rebuilds producer state from producer-state.json plus the scanned tail;
 * removes orphaned segment files (created but never recorded, or deleted by
 * retention before a crash finished the unlink).
 * Returns 0 and *out, or KAAS_LOG_EFENCED, -EBADMSG, -EUCLEAN, -EINVAL (bad
 * dir or cfg), -ENOMEM, or the substrate's -errno. */
int kaas_log_open(struct kaas_substrate *data, const char *dir, uint32_t leader_epoch,
		  const struct kaas_log_config *cfg, struct kaas_log **out);

/* Close cleanly: waits for every queued append to complete (their callbacks
 * run), writes the final manifest checkpoint and the producer-state
 * snapshot, closes every handle, frees the log (always, whatever the result).
 * Returns 0, KAAS_LOG_EFENCED (a newer leader exists: nothing was written),
 * or the -errno of a failed write (the log was already failed: the next
 * leader recovers the tail).  NULL is a no-op returning 0. */
int kaas_log_close(struct kaas_log *log);

/* -------------------------------------------------- process-wide I/O */

/* The logs of a process share their threads and file handles.  Group
 * commit, fsync and acknowledgement of every open log run on one pool of
 * `threads` threads (started by the first kaas_log_open, stopped and joined
 * when the last log closes), which takes only logs with pending appends:
 * an idle log costs no thread.  Segment handles (the active segment's write
 * handle, read handles) are cached, at most about `max_open_files` of them
 * open at once (least recently used closed first; reopened on demand).
 * 0 for either means the default: threads 2 × online CPUs (at least 2, at
 * most 32), files 1000.  The thread count applies at the pool's next start
 * (so: call it before opening logs), the file limit at once.
 * Returns 0, or -EINVAL for more than 1024 threads. */
int kaas_log_io_configure(unsigned threads, unsigned max_open_files);
/* The pool's thread count: running, else the one the next start uses. */
unsigned kaas_log_io_threads(void);
/* The open-file limit in effect. */
unsigned kaas_log_io_max_open_files(void);

/* ------------------------------------------------------------ append */

/* A batch the caller has already validated (CRC, sizes, records, compression). */
struct kaas_log_batch {
	const void *data;         /* the whole RecordBatch v2, batchLength+12 bytes */
	size_t len;
	uint32_t record_count;    /* = lastOffsetDelta + 1: offsets the batch takes */
	int64_t max_timestamp;    /* for the time index and retention by age */
	int64_t producer_id;      /* -1: not idempotent (no producer state kept) */
	int16_t producer_epoch;
	int32_t base_sequence;
};

/* Completion of an append: `result` is the batch's base offset (>= 0) once
 * an fsync covering it succeeded, or a negative errno (the batch may or may
 * not be on the volume; it is never reported as written).  Runs on a log
 * I/O pool thread, or on a thread rolling the log (kaas_log_roll,
 * kaas_log_housekeep: the roll acknowledges written rounds itself, with the
 * log's write lock held): do not block in it, do not call any function of
 * the same log that writes (close, roll, housekeep, delete records), and do
 * not append from it (an append may block on max_pending_bytes). */
typedef void (*kaas_log_append_cb)(void *arg, int64_t result);

/* Queue a batch.  The log copies the bytes, rewrites baseOffset (bytes 0..7)
 * with the offset it assigns and partitionLeaderEpoch (bytes 12..15) with its
 * epoch (neither is covered by the batch CRC), records the producer state,
 * and completes through cb (may be NULL: acks=0, fire and forget) after the
 * group-committed fsync.  Many concurrent appends share one fsync.
 * Returns 0 with *base_offset (may be NULL) set to the assigned base offset,
 * or -EINVAL (not a v2 batch / length mismatch / record_count 0), -EFBIG
 * (larger than segment_bytes or max_pending_bytes), KAAS_LOG_EFENCED, or the
 * error that failed the log; on error cb is NOT called.  Blocks while
 * max_pending_bytes are waiting for their fsync. */
int kaas_log_append(struct kaas_log *log, const struct kaas_log_batch *b, kaas_log_append_cb cb,
		    void *arg, int64_t *base_offset);

/* A waiter for kaas_log_append_nowait (room) or kaas_log_when_durable:
 * caller-owned memory, set cb and arg, leave next to the log.  It must stay
 * valid until its callback ran.  The callback runs as an append callback
 * does (log I/O pool thread, or a thread rolling the log): do not block in
 * it, do not append from it. */
struct kaas_log_waiter {
	struct kaas_log_waiter *next;   /* the log's */
	kaas_log_append_cb cb;
	void *arg;
};

/* kaas_log_append that never waits for room: when max_pending_bytes are
 * waiting for their fsync it queues nothing, returns KAAS_ENOROOM and (room not
 * NULL) registers room, whose callback runs once, later, with 0 when
 * pending bytes were dropped (call again: room may be taken already) or
 * with the log's -errno when it failed.  Other results as kaas_log_append
 * (room not registered). */
int kaas_log_append_nowait(struct kaas_log *log, const struct kaas_log_batch *b,
			   kaas_log_append_cb cb, void *arg, int64_t *base_offset,
			   struct kaas_log_waiter *room);

/* A completion instead of kaas_log_wait, for a batch already queued (an
 * idempotent retry's original): when the batch whose offsets contain
 * `offset` is durable, w's callback runs with that batch's base offset,
 * or with a negative errno when its write, fsync or fence check failed
 * (as its own append callback is told).  Returns 0 (registered), 1 (the
 * offset is below the high watermark already: durable, cb not called),
 * -ERANGE (at or above the end offset: nothing queued there), or the
 * log's -errno (failed: cb not called).  Never blocks on I/O. */
int kaas_log_when_durable(struct kaas_log *log, int64_t offset, struct kaas_log_waiter *w);

/* kaas_log_append and wait for its completion: returns the base offset
 * (>= 0) after the fsync, or -errno. */
int64_t kaas_log_append_sync(struct kaas_log *log, const struct kaas_log_batch *b);

/* ------------------------------------------------------- transactions */

/* RecordBatch v2 attributes bits the log looks at. */
#define KAAS_BATCH_ATTR_TRANSACTIONAL 0x10
#define KAAS_BATCH_ATTR_CONTROL 0x20

/* A transactional batch (attribute bit 4, not a control batch) opens a
 * transaction of its producer id on this partition if none is open: the
 * log records the batch's base offset as the transaction's first offset
 * (kaas_log_append does this; the broker checks the producer epoch first).
 * The transaction stays open, holding the last stable offset, until a
 * marker for the producer is appended.  Open transactions are recovered by
 * kaas_log_open from producer-state.json and the log itself.
 *
 * Append a COMMIT (commit=1) or ABORT (commit=0) control batch
 * (attributes isControl|isTransactional, one record: key = version 0 +
 * type 0 abort / 1 commit, value = version 0 + coordinator_epoch, as
 * Kafka's EndTxnMarker) for producer_id at producer_epoch, ending the
 * producer's open transaction here (an abort adds it to the aborted-
 * transaction index).
 * Coordinator fence (Kafka's TRANSACTION_COORDINATOR_FENCED): the log
 * keeps, per producer, the highest coordinator epoch of its markers (in
 * the producer snapshot as "marker_coord", and in the markers themselves
 * for a recovery scan); a marker from a lower coordinator epoch is refused
 * (a coordinator that lost the transactional id must not close the
 * producer's next transaction, which runs at the same producer epoch).
 * Written once: when the producer has no open transaction here and the
 * last marker the log holds for it has this epoch and kind, the call
 * writes nothing and completes with that marker's offset (a re-drive, by
 * this coordinator or a newer one: a newer one's raises the coordinator
 * epoch kept for the producer, in memory and in the next producer
 * snapshot).  A marker with no open transaction and no such earlier marker
 * is written (as Kafka does).
 * producer_epoch above the producer's current epoch becomes its epoch (an
 * abort after a bump by the coordinator).
 * Returns 0 and cb is called later (on a log thread, as for
 * kaas_log_append) with the marker's offset (>= 0) once durable, or -errno
 * (for a marker written already: on the calling thread, before the
 * return); or returns, without calling cb:
 *   KAAS_EPRODFENCED   producer_epoch is below the producer's current one
 *   KAAS_ETXN_COORD_FENCED  coordinator_epoch is below the last one seen
 *                      for the producer (nothing written)
 *   -EAGAIN            this very marker is queued and not durable yet:
 *                      call again later (the _sync form waits for it)
 *   -EINVAL            producer_id < 0, producer_epoch < 0
 *   KAAS_LOG_EFENCED / the error that failed the log (see above).
 * cb may be NULL (nothing reported).  Marker appends are serialised with
 * each other; do not call from an append callback. */
int kaas_log_append_marker(struct kaas_log *log, int64_t producer_id, int16_t producer_epoch,
			   int commit, int32_t coordinator_epoch, kaas_log_append_cb cb,
			   void *arg);

/* kaas_log_append_marker and wait: the marker's offset (>= 0) once durable,
 * or a negative status as above. */
int64_t kaas_log_append_marker_sync(struct kaas_log *log, int64_t producer_id,
				    int16_t producer_epoch, int commit,
				    int32_t coordinator_epoch);

/* The last stable offset: the first offset of the oldest open transaction,
 * else the high watermark (never above it). */
int64_t kaas_log_last_stable_offset(struct kaas_log *log);

/* One aborted transaction: its producer, its first offset, and its abort
 * marker's offset. */
struct kaas_log_aborted_txn {
	int64_t producer_id;
	int64_t first_offset;
	int64_t last_offset;
};

/* The aborted transactions a read of [from, to) must know of: those whose
 * abort marker is at or above `from` and whose first offset is below `to`,
 * ordered by first offset.  Returns the number found (>= 0) with *out
 * malloc'd (free() it; NULL when 0), or -ENOMEM. */
int kaas_log_aborted_txns(struct kaas_log *log, int64_t from, int64_t to,
			  struct kaas_log_aborted_txn **out);

/* --------------------------------------------------------------- read */

/* A read result: whole batches, one segment's contiguous bytes.  Holds a
 * reference on that segment (retention defers the unlink until released). */
struct kaas_log_slice {
	struct kaas_file *file;   /* the segment, opened read-only (shared: use
	                             kaas_log_slice_sendfile/pread, which serialise
	                             access to it) */
	const char *path;         /* the segment's path on the substrate */
	uint64_t pos;             /* file position of the first batch */
	size_t len;               /* bytes of whole batches (0: nothing to read) */
	int64_t first_offset;     /* base offset of the first batch */
	int64_t next_offset;      /* offset after the last batch in the slice */
	void *seg_;               /* private: the referenced segment */
};

/* Find batches from `offset`: the first batch returned is the one that
 * contains `offset` (a read starting inside a batch returns that whole
 * batch), followed by more whole batches of the same segment while their sum
 * stays <= max_bytes (the first batch is returned whole even if larger).
 * Never returns bytes at or past the high watermark.
 * Returns 0 with *out filled (len 0 when offset == high watermark), -ERANGE
 * when offset < log start or > high watermark, or -errno.  Release every
 * successful slice with kaas_log_slice_release. */
int kaas_log_read(struct kaas_log *log, int64_t offset, size_t max_bytes,
		  struct kaas_log_slice *out);

/* kaas_log_read of the batches below `end` only (read_committed: end = the
 * last stable offset, which is always a batch's first offset or the high
 * watermark): a slice of len 0 when offset >= end. */
int kaas_log_read_below(struct kaas_log *log, int64_t offset, size_t max_bytes, int64_t end,
			struct kaas_log_slice *out);

/* Send slice bytes [off, off+len) (relative to the slice) to a socket with
 * kaas_sub_sendfile: bytes sent (may be short), -EAGAIN, or -errno. */
ssize_t kaas_log_slice_sendfile(struct kaas_log_slice *s, int sockfd, size_t off, size_t len);
/* Hint that the slice's bytes and up to `ahead` more of its segment will
 * be read soon (kaas_sub_readahead: a cold range starts coming in while
 * the answer before it is still being sent).  Each byte of an open segment
 * is hinted at most once; advisory (errors ignored). */
void kaas_log_slice_readahead(struct kaas_log_slice *s, size_t ahead);
/* Copy slice bytes [off, off+len) into buf: bytes copied or -errno. */
ssize_t kaas_log_slice_pread(struct kaas_log_slice *s, void *buf, size_t len, size_t off);
/* Drop the slice's segment reference (NULL or a zeroed slice: no-op). */
void kaas_log_slice_release(struct kaas_log_slice *s);

/* Copying read: as kaas_log_read, then the bytes in a malloc'd *buf (free()
 * it; NULL when *len is 0).  *first_offset may be NULL. */
int kaas_log_read_copy(struct kaas_log *log, int64_t offset, size_t max_bytes, void **buf,
		       size_t *len, int64_t *first_offset);

/* ------------------------------------------------------------ offsets */

/* End of the last fsynced batch: the next offset a reader may ask for. */
int64_t kaas_log_high_watermark(struct kaas_log *log);
/* The first offset still kept. */
int64_t kaas_log_start_offset(struct kaas_log *log);
/* The next offset append will assign (>= high watermark). */
int64_t kaas_log_end_offset(struct kaas_log *log);
/* The epoch this handle was opened with. */
uint32_t kaas_log_epoch(struct kaas_log *log);
/* 0 while the log takes appends; else the -errno that failed it for good
 * (KAAS_LOG_EFENCED when a newer leader was found): close it. */
int kaas_log_status(struct kaas_log *log);

/* First batch whose max timestamp is >= ts among those below the high
 * watermark that hold offsets at or above the log start (batch granularity:
 * the offset is that batch's base offset, or log start if it lies inside the
 * batch; the log does not parse records, so the record itself is for the
 * caller to find inside the batch).  Returns 0 with *offset and *timestamp
 * (the batch's max timestamp; either may be NULL), -ENOENT when no batch has
 * such a timestamp, or -errno. */
int kaas_log_offset_for_time(struct kaas_log *log, int64_t ts, int64_t *offset,
			     int64_t *timestamp);
/* The same among the batches that hold offsets at or above `from` (the
 * offset is then at least max(from, log start)). */
int kaas_log_offset_for_time_from(struct kaas_log *log, int64_t ts, int64_t from,
				  int64_t *offset, int64_t *timestamp);

/* The largest batch max timestamp of the segments below the high watermark
 * that hold offsets at or above the log start (a segment's batches below
 * the log start count too).  Returns 0 with *timestamp, or -ENOENT (no
 * batch). */
int kaas_log_max_timestamp(struct kaas_log *log, int64_t *timestamp);

/* Block until the high watermark is above `offset`, the log fails, or
 * timeout_ms passes (< 0: no timeout).  Returns 1 (data past offset), 0
 * (timed out), or the log's -errno. */
int kaas_log_wait(struct kaas_log *log, int64_t offset, int timeout_ms);

/* Called (on the sync thread, after each advance of the high watermark, with
 * the new high watermark) — e.g. to wake a fetch long-poll in an event loop.
 * Set once, before appends start; NULL clears. */
typedef void (*kaas_log_notify_cb)(void *arg, int64_t high_watermark);
void kaas_log_set_notify(struct kaas_log *log, kaas_log_notify_cb cb, void *arg);

/* ------------------------------------------------------- maintenance */

/* Seal the active segment now and start a new one (no-op returning 0 when the
 * active segment is empty).  Returns 0 or -errno. */
int kaas_log_roll(struct kaas_log *log);

/* Housekeeping, call periodically (e.g. every few seconds): roll by age,
 * retention by bytes and age (now_ms: wall clock in ms since the epoch; 0:
 * use the current time), and re-drive unlinks that did not finish; with
 * cfg.compact, then a cleaning pass (kaas_log_clean, not forced; its
 * failure other than fenced is not housekeeping's: it is retried at the
 * next call).
 * Retention by age reaches the active segment as Kafka's does: a non-empty
 * active segment whose newest timestamp is older than retention_ms (and
 * whose batches are all durable) is rolled, then deleted with the sealed
 * ones; the log start moves to its end.  Otherwise the active segment
 * stays (retention by bytes never takes it).  Order per deletion: manifest
 * first (log start moves), then every handle closed, then unlink.
 * Returns the number of segments deleted, or -errno. */
int kaas_log_housekeep(struct kaas_log *log, int64_t now_ms);

/* Change the limits of an open log (a topic's config changed): copies
 * segment_bytes, segment_ms, retention_bytes, retention_ms and the
 * compaction fields from cfg
 * (index_interval_bytes applies from the next open); the next append, roll and housekeeping
 * use them.  Other fields of cfg are ignored.  Blocks while a group
 * commit is being written. */
void kaas_log_retune(struct kaas_log *log, const struct kaas_log_config *cfg);

/* ---------------------------------------------------------- cleaning */

/* What one cleaning pass did. */
struct kaas_log_clean_stats {
	uint64_t segments_in, segments_out;  /* replaced, written */
	uint64_t bytes_in, bytes_out;
	uint64_t records_removed;            /* superseded, aborted and tombstones */
	uint64_t tombstones_removed;
	uint64_t aborted_removed;            /* records of aborted transactions */
	uint64_t markers_removed;            /* transaction markers past their horizon */
};

/* One pass of the log cleaner (log_clean.c) over the sealed segments from
 * the log start up to the first one younger than min_compaction_lag_ms
 * (never the active segment, nor one reaching the last stable offset):
 * keeps the latest record of every key, drops tombstones older than
 * delete_retention_ms and the records of aborted transactions, keeps
 * records without a key and (without a decompressor, see
 * kaas_log_set_decompressor) compressed batches as they are.  Committed
 * transactional records are compacted like others; each producer's latest
 * batch stays (emptied if need be); a transaction marker goes once its
 * transaction has no record left and delete_retention_ms passed since a
 * pass found that (then its aborted-index entry goes too), never while it
 * is its producer's latest batch.  Offsets are kept: the cleaned segments
 * have gaps.  Runs only when the uncleaned share
 * reaches min_cleanable_dirty_ratio or max_compaction_lag_ms is passed, or
 * with `force`.  Publication: new files "<base>-<our epoch>-<gen>.log"
 * (+ indexes) fsynced, then the manifest replaced (one rename), then the
 * fence checked again, and only then are the replaced files unlinked (each
 * at the release of its last slice; re-driven by housekeeping while an
 * unlink fails).  Leftovers of a crashed or refused pass are swept first.
 * st may be NULL.  now_ms 0: the current time.  Returns 1 (a set was
 * switched), 0 (nothing to do, or another pass is running), or -errno
 * (KAAS_LOG_EFENCED: a newer leader exists; nothing was removed). */
int kaas_log_clean(struct kaas_log *log, int64_t now_ms, int force,
		   struct kaas_log_clean_stats *st);

/* The cleaner reads the keys of compressed batches through this function
 * (the broker passes kafka/batch.h's kaas_batch_decompress): decompress
 * `in` with codec (1..4) into a malloc'd *out of at most `limit` bytes;
 * 0, or -errno.  Process-wide; NULL (default): compressed batches are kept
 * whole. */
typedef int (*kaas_log_decompress_fn)(int codec, const uint8_t *in, size_t inlen, size_t limit,
				      uint8_t **out, size_t *outlen);
void kaas_log_set_decompressor(kaas_log_decompress_fn fn);

/* Move the log start to `offset` (DeleteRecords): 0 <= offset <= high
 * watermark, else -ERANGE; an offset below the current start is a no-op.
 * Whole segments below the new start are deleted (as retention).  Returns 0
 * or -errno. */
int kaas_log_delete_records(struct kaas_log *log, int64_t offset);

/* For the admin APIs (log_describe.c; memory only, any thread).
 * kaas_log_epoch_end: the end offset of leader epoch `epoch` as Kafka's
 * OffsetForLeaderEpoch answers it from the epochs stamped in the segment
 * names: the log end offset for the latest epoch, else the base of the
 * first segment of a later epoch (at least the log start) with *found =
 * the largest epoch <= `epoch` the log holds (`epoch` itself when it is
 * older than all of them).  0, or -ENOENT (epoch < 0 or later than the
 * latest: *found and *end are -1).
 * kaas_log_size: the bytes of its segments.
 * kaas_log_producers: a copy of every producer's state (*out malloc'd,
 * *n of them; NULL when none): 0 or -ENOMEM. */
int kaas_log_epoch_end(struct kaas_log *log, int32_t epoch, int32_t *found, int64_t *end);
int64_t kaas_log_size(struct kaas_log *log);
struct kaas_log_producer;
int kaas_log_producers(struct kaas_log *log, struct kaas_log_producer **out, size_t *n);

/* ---------------------------------------------------- producer state */

struct kaas_log_producer_batch {
	int32_t first_seq, last_seq;
	int64_t base_offset, last_offset;
};

struct kaas_log_producer {
	int64_t producer_id;
	int16_t epoch;
	int64_t last_timestamp;
	unsigned n;               /* batches in the window, oldest first */
	struct kaas_log_producer_batch batches[KAAS_LOG_PRODUCER_WINDOW];
	int64_t txn_first_offset; /* first offset of its open transaction
	                             here, -1: none open */
	int32_t coordinator_epoch; /* the highest coordinator epoch of its
	                              markers here, -1 none: set by
	                              kaas_log_producers only */
};

/* The state of one producer id: 0 and *out, or -ENOENT (unknown id). */
int kaas_log_producer_get(struct kaas_log *log, int64_t producer_id,
			  struct kaas_log_producer *out);

/* Like kaas_log_producer_get, but with the batches queued or in flight (not
 * yet fsynced) folded in, oldest first: the state the next append must
 * follow (their epochs and sequences; txn_first_offset too: a queued
 * transactional batch opens a transaction, a queued marker ends it).  The caller serialises its appends for the answer to stay true
 * (the broker's produce lane of the partition).  0 and *out, or -ENOENT (unknown id). */
int kaas_log_producer_pending(struct kaas_log *log, int64_t producer_id,
			      struct kaas_log_producer *out);

/* Is (producer_id, epoch, first_seq..last_seq) one of the producer's last
 * five batches (a retry of a batch already appended)?  Returns 1 with
 * *base_offset (may be NULL) set to that batch's base offset, 0 if not (also
 * for an unknown id or another epoch), or -errno. */
int kaas_log_producer_find(struct kaas_log *log, int64_t producer_id, int16_t epoch,
			   int32_t first_seq, int32_t last_seq, int64_t *base_offset);

/* ------------------------------------------------------------- stats */

struct kaas_log_stats {
	uint64_t appends;         /* batches completed */
	uint64_t bytes;           /* bytes written to segments */
	uint64_t fsyncs;          /* segment fsyncs (group commits) */
	uint64_t rolls;
	uint64_t checkpoints;
	uint64_t recovered_bytes; /* tail bytes scanned by the open */
	uint64_t segments;        /* segments in the manifest */
};
void kaas_log_get_stats(struct kaas_log *log, struct kaas_log_stats *out);

/* For the metrics endpoint (log_metrics.c; any thread, memory only): the
 * producer ids this log keeps state for, and the tail recoveries under way
 * in this process. */
size_t kaas_log_producer_count(struct kaas_log *log);
int kaas_log_recovering_count(void);

/* --------------------------------------------- RecordBatch v2 helpers */

/* The fields of a RecordBatch v2 header. */
struct kaas_batch_header {
	int64_t base_offset;
	int32_t batch_length;     /* bytes after this field */
	int32_t leader_epoch;
	int8_t magic;
	uint32_t crc;
	int16_t attributes;
	int32_t last_offset_delta;
	int64_t base_timestamp;
	int64_t max_timestamp;
	int64_t producer_id;
	int16_t producer_epoch;
	int32_t base_sequence;
	int32_t record_count;
};

/* Parse the header from buf (len >= KAAS_BATCH_HEADER_LEN): 0, or -EINVAL
 * (short, magic != 2, batch_length < 49, last_offset_delta < 0). */
int kaas_batch_parse_header(const void *buf, size_t len, struct kaas_batch_header *h);
/* Does the stored CRC32C match bytes 21..end of the len-byte batch? 1 yes, 0 no. */
int kaas_batch_crc_ok(const void *buf, size_t len);

#endif
