/*
 * batch.h — RecordBatch v2 validation, before anything is written.
 *
 * A Produce request carries, per partition, a record set: one or more
 * RecordBatch v2 structures back to back.  kaas stores them as sent, so
 * every batch is checked first: sizes, magic 2, CRC32C, attributes, record
 * count and offset deltas; for compressed batches (gzip, snappy — raw or
 * xerial framing —, lz4 frame, zstd) the payload is decompressed and every
 * record inside is parsed and checked the same way.
 */
#ifndef KAAS_KAFKA_BATCH_H
#define KAAS_KAFKA_BATCH_H

#include <stddef.h>
#include <stdint.h>

/* Fixed RecordBatch v2 header: 61 bytes before the first record. */
#define KAAS_BATCH_HEADER 61
/* Offset of fields inside a batch. */
#define KAAS_BATCH_OFF_LENGTH 8
#define KAAS_BATCH_OFF_MAGIC 16
#define KAAS_BATCH_OFF_CRC 17
#define KAAS_BATCH_OFF_ATTR 21
#define KAAS_BATCH_OFF_LAST_DELTA 23
#define KAAS_BATCH_OFF_BASE_TS 27
#define KAAS_BATCH_OFF_MAX_TS 35
#define KAAS_BATCH_OFF_COUNT 57

/* Upper bound on a decompressed payload that validation will inflate. */
#define KAAS_BATCH_MAX_INFLATED (256u << 20)

/* What validation learned about one record set. */
struct kaas_batch_summary {
	uint32_t batches;       /* number of batches */
	uint64_t records;       /* records over all batches */
	int64_t max_timestamp;  /* largest maxTimestamp */
	size_t largest_batch;   /* bytes of the largest batch */
};

/* Validate the record set buf[0..len).  Returns a Kafka error code:
 *   0 (NONE)                  every batch is intact; *sum filled
 *   CORRUPT_MESSAGE (2)       the framing: sizes, a CRC that does not
 *                             match, a payload that does not decompress
 *                             (the Java client retries it)
 *   INVALID_RECORD (87)       a right CRC over wrong content: magic not 2,
 *                             a record count that does not match the
 *                             records (or the last offset delta), records
 *                             that do not parse, an empty record set (as
 *                             Kafka; clients do not retry it)
 *   MESSAGE_TOO_LARGE (10)    a batch larger than max_batch bytes
 *   UNSUPPORTED_COMPRESSION_TYPE (76)  compression codec > 4
 * `why` (may be NULL) receives a static string naming the problem. */
int kaas_batch_validate(const uint8_t *buf, size_t len, size_t max_batch,
			struct kaas_batch_summary *sum, const char **why);

/* Decompress a batch payload with `codec` (1 gzip, 2 snappy, 3 lz4,
 * 4 zstd) into a malloc'd buffer of at most `limit` bytes.  Returns 0 and
 * *out and *outlen, or -EBADMSG (corrupt), -EFBIG (over limit), -ENOMEM,
 * -ENOTSUP (codec). */
int kaas_batch_decompress(int codec, const uint8_t *in, size_t inlen, size_t limit,
			  uint8_t **out, size_t *outlen);

/* compression.type (issue 33): does the validated record set buf[0..len)
 * hold a batch with records, not a control batch, whose codec is not
 * `codec` (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)?  1 or 0. */
int kaas_batch_needs_recompress(const uint8_t *buf, size_t len, int codec);

/* The validated record set buf[0..len) with every such batch's records
 * decompressed and compressed again in `codec` (recompress.c): the codec
 * bits of its attributes, its batchLength and CRC rewritten, nothing else
 * (records, offsets, timestamps, producer fields as sent); other batches
 * copied.  0 and a malloc'd *out of *outlen bytes, or -ENOMEM, -EBADMSG,
 * -EOVERFLOW (a codec failed). */
int kaas_batch_recompress(const uint8_t *buf, size_t len, int codec, uint8_t **out,
			  size_t *outlen);

/* Write into out an empty RecordBatch v2 (KAAS_BATCH_HEADER bytes, no
 * records) covering offsets [base, last] (base <= last; a range longer
 * than INT32_MAX + 1 offsets is covered from base up to that many): no
 * producer, no timestamps (-1), partition leader epoch -1, CRC set.  A
 * consumer moves past it to last + 1, as past the empty batches Kafka's
 * cleaner keeps.  Returns the number of offsets covered. */
int64_t kaas_batch_empty(uint8_t *out, int64_t base, int64_t last);

/* Attribute bit: the batch's timestamps are its append time (maxTimestamp). */
#define KAAS_BATCH_ATTR_LOG_APPEND_TIME 0x08

/* Record timestamps found in one batch by kaas_batch_time_scan. */
struct kaas_batch_times {
	int64_t ge_offset;      /* first record with timestamp >= target (-1: none) */
	int64_t ge_timestamp;   /* its timestamp */
	int64_t max_offset;     /* first record with the largest timestamp (-1: none) */
	int64_t max_timestamp;  /* that timestamp */
};

/* Look at the records of the whole RecordBatch v2 b[0..len) (as stored: its
 * base offset is the records' first offset) whose offset is >= min_offset,
 * decompressing the payload if needed.  A record's timestamp is the batch's
 * base timestamp plus its delta, or, in a LogAppendTime batch (attribute
 * bit 3), the batch's maxTimestamp.  Returns 0 with *out filled (offsets -1
 * when no record qualifies), -EBADMSG (malformed, or does not decompress),
 * or -ENOMEM. */
int kaas_batch_time_scan(const uint8_t *b, size_t len, int64_t min_offset, int64_t target,
			 struct kaas_batch_times *out);

#endif
