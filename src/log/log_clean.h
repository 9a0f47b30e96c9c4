/*
 * log_clean.h — shared between the log cleaner's files (log_clean.c: the
 * pass and its publication; log_clean_map.c: records and the key map).
 * Not for use outside src/log/.
 */
#ifndef KAAS_LOG_CLEAN_H
#define KAAS_LOG_CLEAN_H

#include <stddef.h>
#include <stdint.h>

#include "log/log_internal.h"

/* RecordBatch v2 attribute bits the cleaner looks at. */
#define KAAS_CLEAN_ATTR_CODEC 0x07
#define KAAS_CLEAN_ATTR_TXN 0x10
#define KAAS_CLEAN_ATTR_CONTROL 0x20
#define KAAS_CLEAN_ATTR_HORIZON 0x40 /* a marker's base timestamp is its
                                         delete horizon (as Kafka's KIP-534) */

/* How the cleaner treats a batch. */
enum {
	KAAS_CLEAN_KEYED,   /* its records are filtered by key (transactional
	                       ones too, once their transaction is known to be
	                       committed: log_clean.c) */
	KAAS_CLEAN_MARKER,  /* a control batch (transaction marker) */
	KAAS_CLEAN_OPAQUE,  /* kept whole, its keys ignored: compressed batches
	                       without a decompressor */
};
int kaas_clean_batch_kind(const struct kaas_batch_header *h);

/* One record of a batch, as kaas_clean_records finds it. */
struct kaas_clean_record {
	int64_t offset;
	int64_t timestamp;          /* base + delta, or the batch's max (LogAppendTime) */
	int32_t offset_delta;
	const unsigned char *key;   /* NULL: no key */
	int64_t key_len;            /* -1: no key */
	int tombstone;              /* the value is null */
	const unsigned char *raw;   /* the record's bytes (length prefix included) */
	size_t raw_len;
};

/* Called per record, then once with r NULL (the end of the batch); < 0
 * stops the walk with that result. */
typedef int (*kaas_clean_record_cb)(void *arg, const struct kaas_clean_record *r);
/* Walk the records of the len-byte batch (header h; decompressed first if
 * it is compressed: the records' raw bytes then point into a buffer valid
 * until the callback's end-of-batch call returns).  0, or -EBADMSG, -ENOTSUP, -ENOMEM, or the
 * callback's result. */
int kaas_clean_records(const unsigned char *batch, size_t len, const struct kaas_batch_header *h,
		       kaas_clean_record_cb cb, void *arg);
/* Write into out (room for KAAS_BATCH_HEADER_LEN plus the records' raw bytes) a
 * batch with the original's header and the n records of `keep` (in offset
 * order), uncompressed, with its length, count and CRC set.  Its last
 * offset delta is the last kept record's, or with keep_last (a producer's
 * last batch, kept for its sequence numbers: n may be 0) the original's.
 * Returns its length. */
size_t kaas_clean_rebuild(const unsigned char *batch, const struct kaas_clean_record *keep,
			  size_t n, int keep_last, unsigned char *out);
/* Copy the len-byte control batch into out with its delete horizon set:
 * base timestamp `horizon`, attribute KAAS_CLEAN_ATTR_HORIZON, CRC again. */
void kaas_clean_set_horizon(const unsigned char *batch, size_t len, int64_t horizon,
			    unsigned char *out);

/* Key → offset of its latest record.  Keys are copied in. */
struct kaas_clean_map;
struct kaas_clean_map *kaas_clean_map_new(void);
void kaas_clean_map_free(struct kaas_clean_map *m);
/* Record `offset` for the key (the highest offset wins): 0 or -ENOMEM. */
int kaas_clean_map_put(struct kaas_clean_map *m, const unsigned char *k, size_t len,
		       int64_t offset);
/* The latest offset of the key, or -1. */
int64_t kaas_clean_map_get(const struct kaas_clean_map *m, const unsigned char *k, size_t len);
size_t kaas_clean_map_keys(const struct kaas_clean_map *m);

#endif
