/* logtest.h — helpers shared by the partition log tests. */
#ifndef KAAS_TEST_LOGTEST_H
#define KAAS_TEST_LOGTEST_H

#include <stddef.h>
#include <stdint.h>

#include "log/log.h"
#include "substrate/substrate.h"

/* A scratch location for one test: the substrate URL (KAAS_TEST_URL when
 * set, else a fresh temp dir) and a partition directory unique to the test. */
struct lt_env {
	char *url;        /* malloc'd */
	char *tmpdir;     /* the temp dir when KAAS_TEST_URL is unset, else NULL */
	char dir[160];    /* "<test>-<pid>/0" */
	char top[128];    /* "<test>-<pid>" */
};

/* 0, or -errno (a message is printed). */
int lt_env_init(struct lt_env *e, const char *tag);
/* Remove the test's files and free. */
void lt_env_fini(struct lt_env *e);
/* Open a new substrate ("host") on the env's URL; aborts the test on failure. */
struct kaas_substrate *lt_sub(struct lt_env *e);

/* Build a RecordBatch v2 of `records` records into a malloc'd buffer:
 * payload bytes derived from `seed`, max timestamp ts, producer fields.
 * The CRC is valid.  *len is the batch size. */
unsigned char *lt_batch(size_t payload, uint32_t records, int64_t ts, int64_t pid, int16_t pep,
			int32_t seq, uint32_t seed, size_t *len);
/* A kaas_log_batch describing buf. */
struct kaas_log_batch lt_desc(const unsigned char *buf, size_t len);
/* Expected stored form: baseOffset and partitionLeaderEpoch patched. */
void lt_patch(unsigned char *buf, int64_t base, uint32_t epoch);

/* A keyed record for lt_keyed_batch: key NULL (no key), value NULL (a
 * tombstone). */
struct lt_record {
	const char *key, *value;
	int64_t ts;
};
/* A RecordBatch v2 (uncompressed, not idempotent) of n records with real
 * record encoding, offset deltas 0..n-1. */
unsigned char *lt_keyed_batch(const struct lt_record *r, uint32_t n, int64_t base_ts, size_t *len);
/* Walk the records of whole batches in buf: cb(offset, timestamp, key, key
 * length (-1 null), value, value length (-1 null)); checks every CRC and
 * that each batch's last offset delta is its last record's (at or past it for a
 * batch with a producer id: a cleaned producer's last batch).  0, or -1
 * (malformed, or cb < 0). */
typedef int (*lt_record_cb)(void *arg, int64_t offset, int64_t ts, const char *key, int64_t klen,
			    const char *value, int64_t vlen);
int lt_walk_records(const unsigned char *buf, size_t len, lt_record_cb cb, void *arg);
/* A cmocka fixture: an lt_env (tag) and one substrate on it. */
struct lt_fx {
	struct lt_env env;
	struct kaas_substrate *sub;
};
/* *state = a new lt_fx: 0, or -1. */
int lt_fx_setup(void **state, const char *tag);
int lt_fx_teardown(void **state);
/* A compacted partition's config for the cleaner tests: the defaults with
 * these sizes and delete.retention.ms, no retention by time or size, no
 * roll by age. */
struct kaas_log_config lt_compact_cfg(uint64_t segment_bytes, size_t max_pending_bytes,
				      int64_t delete_retention_ms);
/* Small segments (4 KiB), index every 256 bytes, checkpoint every 2 KiB. */
struct kaas_log_config lt_small_cfg(void);
/* Read and walk every record from `from` to the high watermark; cb must
 * keep *last at the offset of the last record it saw.  0, or -errno /
 * -EBADMSG (a malformed batch, or no progress). */
int lt_read_records(struct kaas_log *log, int64_t from, int64_t *last, lt_record_cb cb, void *arg);
/* Count the segment files of dir: with a cleaning generation in the name
 * (<base>-<epoch>-<gen>.log) and without. */
void lt_count_segments(struct kaas_substrate *sub, const char *dir, int *cleaned, int *plain);

/* Open env's partition at `epoch` as another host would, from inside a step
 * hook: a new substrate on the env (*sub, for the caller to close) and
 * kaas_log_open on a thread of its own (the hook runs on the old leader's
 * thread, under its log's locks; one thread holding two logs' locks is
 * outside the lock order the sanitizer build checks, util/lock_rank.h).
 * Returns kaas_log_open's result; *log is set only on 0. */
int lt_open_elsewhere(struct lt_env *env, uint32_t epoch, const struct kaas_log_config *cfg,
		      struct kaas_substrate **sub, struct kaas_log **log);

#endif
