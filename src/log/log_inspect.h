/*
 * log_inspect.h — a partition's log as the volume shows it, read-only: for
 * operator tools (kaasctl status, verify, dump-log).
 *
 * Nothing here claims the partition's fence, sweeps, rewrites, seals or
 * creates anything: it lists the directory, reads the newest manifest and
 * reads segment bytes.  A leader may be writing while we look; what we
 * report is then a moment's view:
 *   - sealed segments are trusted up to the end their manifest records;
 *   - the active (unsealed) segment is trusted up to its checkpoint, and
 *     past it as far as whole batches with a valid CRC32C reach (what the
 *     next leader's tail recovery would adopt; a live leader's high
 *     watermark is at most a group commit away from it).
 */
#ifndef KAAS_LOG_INSPECT_H
#define KAAS_LOG_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

/* One manifest entry and what the volume holds for it. */
struct kaas_log_inspect_seg {
	int64_t base;          /* first offset */
	uint32_t epoch;        /* epoch in the file name */
	uint32_t gen;          /* cleaning generation in the file name (0: none) */
	int sealed;
	uint64_t end;          /* recorded end (sealed) or checkpoint position */
	int64_t next;          /* recorded next offset, or the checkpoint's */
	int64_t max_ts;
	char *path;            /* "<dir>/<base:020>-<epoch:010>.log" */
	int64_t file_size;     /* bytes in the file; -1: the file is missing */
	uint64_t valid_end;    /* sealed: end; active: end of the whole valid
	                          batches after the checkpoint */
	int64_t valid_next;    /* the offset after them */
};

struct kaas_log_inspect {
	char *dir;             /* "<topic>/<partition>" */
	char *manifest;        /* path of the manifest read; NULL: none */
	uint32_t manifest_epoch;
	int64_t log_start;
	size_t n;
	struct kaas_log_inspect_seg *segs;
	int64_t high_watermark; /* offset after the last valid batch (0: empty) */
};

/* Read the partition directory `dir` of `data` without writing anything:
 * the newest manifest (manifest-<E>.json of the highest E, else a legacy
 * manifest.json), every segment's size, and the active segment's valid tail.
 * Returns 0 and *out (a partition without a manifest: manifest NULL, no
 * segments), -ENOENT (no such directory), -EBADMSG (the manifest is corrupt
 * or malformed; the detail names it), -ENOMEM, or the substrate's -errno.
 * Free *out with kaas_log_inspect_free (also after a failure). */
int kaas_log_inspect_open(struct kaas_substrate *data, const char *dir,
			  struct kaas_log_inspect *out);
void kaas_log_inspect_free(struct kaas_log_inspect *li);

/* Called for each whole batch (the bytes as stored, len = batchLength + 12)
 * at file position pos of segment seg.  Return 0 to go on, > 0 to stop,
 * < 0 to fail the walk with that value. */
typedef int (*kaas_log_inspect_cb)(void *arg, const struct kaas_log_inspect_seg *seg,
				   uint64_t pos, const unsigned char *batch, size_t len);

/* Every batch below the high watermark that holds an offset >= from, in
 * offset order, through cb.  Returns 0, cb's negative value, or -errno
 * (-EUCLEAN: a segment the manifest names is missing). */
int kaas_log_inspect_batches(struct kaas_substrate *data, const struct kaas_log_inspect *li,
			     int64_t from, kaas_log_inspect_cb cb, void *arg);

/* What a check of one segment's bytes found. */
struct kaas_log_seg_check {
	uint64_t scanned_end;  /* where whole, contiguously numbered batches stop */
	int64_t next_offset;   /* the offset after them */
	uint64_t batches;
	uint64_t bad_crc;      /* batches whose CRC32C does not match */
	uint64_t first_bad_pos;
	int64_t first_bad_offset;
};

/* Read segment s from its start up to `limit` bytes (the recorded end, or
 * UINT64_MAX for the whole file), checking every batch's length, numbering
 * (from s->base) and CRC32C.  A batch with a bad CRC is counted and the walk
 * goes on past it (its length is trusted); the walk stops at the first batch
 * that is short, malformed or misnumbered.  Returns 0 and *out, or -errno
 * (-ENOENT: the file is missing). */
int kaas_log_inspect_check_seg(struct kaas_substrate *data, const struct kaas_log_inspect_seg *s,
			       uint64_t limit, struct kaas_log_seg_check *out);

/* What a name in a partition directory is. */
enum kaas_log_entry_kind {
	KAAS_LOG_ENTRY_OTHER = 0,   /* not a name the log writes */
	KAAS_LOG_ENTRY_SEGMENT,     /* <base:020>-<epoch:010>.log */
	KAAS_LOG_ENTRY_INDEX,       /* the same with .index or .timeindex */
	KAAS_LOG_ENTRY_MANIFEST,    /* manifest-<epoch:010>.json */
	KAAS_LOG_ENTRY_LEGACY_MANIFEST, /* manifest.json (retired) */
	KAAS_LOG_ENTRY_PSTATE,      /* producer-state.json */
	KAAS_LOG_ENTRY_TXNIDX,      /* aborted-txns.json (derived: rebuilt at open) */
	KAAS_LOG_ENTRY_FENCE,       /* fence/ */
	KAAS_LOG_ENTRY_LEGACY_FENCE /* leader.json (retired) */
};

/* Classify `name`; *base and *epoch (may be NULL) get the offset and
 * epoch a segment, index or manifest name carries. */
enum kaas_log_entry_kind kaas_log_entry_classify(const char *name, int64_t *base,
						 uint32_t *epoch);

/* The kinds and versions of the partition's documents, for a reader that
 * checks them with kaas_doc_read. */
extern const char *const kaas_log_manifest_kind;
extern const char *const kaas_log_pstate_kind;
extern const char *const kaas_log_txnidx_kind;
extern const int kaas_log_txnidx_version;
extern const int kaas_log_doc_version;

#endif
