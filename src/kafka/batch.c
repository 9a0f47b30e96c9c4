/* batch.c — RecordBatch v2 validation (see batch.h). */
#include "kafka/batch.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/codec.h"
#include "kafka/protocol.h"
#include "util/crc32c.h"

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int64_t be64(const uint8_t *p)
{
	return (int64_t)(((uint64_t)be32(p) << 32) | be32(p + 4));
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

int64_t kaas_batch_empty(uint8_t *out, int64_t base, int64_t last)
{
	assert(base >= 0 && last >= base);
	int64_t delta = last - base > INT32_MAX ? INT32_MAX : last - base;
	memset(out, 0, KAAS_BATCH_HEADER);
	put_be64(out, (uint64_t)base);
	put_be32(out + KAAS_BATCH_OFF_LENGTH, KAAS_BATCH_HEADER - 12);
	put_be32(out + 12, UINT32_MAX); /* partitionLeaderEpoch -1 */
	out[KAAS_BATCH_OFF_MAGIC] = 2;
	put_be32(out + KAAS_BATCH_OFF_LAST_DELTA, (uint32_t)delta);
	put_be64(out + KAAS_BATCH_OFF_BASE_TS, UINT64_MAX); /* no timestamps: -1 */
	put_be64(out + KAAS_BATCH_OFF_MAX_TS, UINT64_MAX);
	put_be64(out + 43, UINT64_MAX);                      /* producerId -1 */
	out[51] = out[52] = 0xff;                            /* producerEpoch -1 */
	put_be32(out + 53, UINT32_MAX);                      /* baseSequence -1 */
	put_be32(out + KAAS_BATCH_OFF_COUNT, 0);
	put_be32(out + KAAS_BATCH_OFF_CRC,
		 kaas_crc32c(0, out + KAAS_BATCH_OFF_ATTR, KAAS_BATCH_HEADER - KAAS_BATCH_OFF_ATTR));
	return delta + 1;
}

/* Parse `count` records from buf[0..len): each must be well formed, carry
 * offsetDelta == its index, and together they must use every byte. */
/* Skip a varint-length field of a record: its bytes, none for length 0
 * (or -1 when nullable); another negative length fails the reader. */
static void skip_field(struct kaas_kr *r, int nullable)
{
	int32_t n = kaas_kr_varint(r);
	if (n < (nullable ? -1 : 0))
		kaas_kr_fail(r);
	else if (n > 0)
		(void)kaas_kr_raw(r, (size_t)n);
}

static int check_records(const uint8_t *buf, size_t len, int32_t count, const char **why)
{
	struct kaas_kr r;
	kaas_kr_init(&r, buf, len);
	for (int32_t i = 0; i < count; i++) {
		int32_t rlen = kaas_kr_varint(&r);
		if (!kaas_kr_ok(&r) || rlen < 0 || (size_t)rlen > kaas_kr_left(&r)) {
			*why = "record length out of bounds";
			return KAAS_KERR_INVALID_RECORD;
		}
		struct kaas_kr rec;
		kaas_kr_init(&rec, r.p, (size_t)rlen);
		r.p += rlen;
		(void)kaas_kr_i8(&rec);       /* attributes */
		(void)kaas_kr_varlong(&rec);  /* timestamp delta */
		int32_t od = kaas_kr_varint(&rec);
		if (kaas_kr_ok(&rec) && od != i) {
			*why = "record offset delta out of sequence";
			return KAAS_KERR_INVALID_RECORD;
		}
		skip_field(&rec, 1); /* key */
		skip_field(&rec, 1); /* value */
		int32_t nh = kaas_kr_varint(&rec);
		if (nh < 0 || (size_t)nh > kaas_kr_left(&rec))
			kaas_kr_fail(&rec);
		for (int32_t h = 0; h < nh && kaas_kr_ok(&rec); h++) {
			skip_field(&rec, 0); /* header key */
			skip_field(&rec, 1); /* header value */
		}
		if (!kaas_kr_ok(&rec) || kaas_kr_left(&rec) != 0) {
			*why = "malformed record";
			return KAAS_KERR_INVALID_RECORD;
		}
	}
	if (kaas_kr_left(&r) != 0) {
		*why = "bytes left after the last record";
		return KAAS_KERR_INVALID_RECORD;
	}
	return KAAS_KERR_NONE;
}

static int check_one(const uint8_t *b, size_t blen, const char **why)
{
	if (b[KAAS_BATCH_OFF_MAGIC] != 2) {
		*why = "record batch magic is not 2";
		return KAAS_KERR_INVALID_RECORD;
	}
	uint32_t crc = be32(b + KAAS_BATCH_OFF_CRC);
	if (kaas_crc32c(0, b + KAAS_BATCH_OFF_ATTR, blen - KAAS_BATCH_OFF_ATTR) != crc) {
		*why = "record batch CRC mismatch";
		return KAAS_KERR_CORRUPT_MESSAGE;
	}
	uint16_t attr = (uint16_t)((b[KAAS_BATCH_OFF_ATTR] << 8) | b[KAAS_BATCH_OFF_ATTR + 1]);
	int codec = attr & 0x7;
	int32_t last_delta = (int32_t)be32(b + KAAS_BATCH_OFF_LAST_DELTA);
	int32_t count = (int32_t)be32(b + KAAS_BATCH_OFF_COUNT);
	if (count <= 0 || last_delta != count - 1) {
		*why = "record count and last offset delta disagree";
		return KAAS_KERR_INVALID_RECORD;
	}
	if (codec > 4) {
		*why = "unknown compression codec";
		return KAAS_KERR_UNSUPPORTED_COMPRESSION_TYPE;
	}
	const uint8_t *payload = b + KAAS_BATCH_HEADER;
	size_t plen = blen - KAAS_BATCH_HEADER;
	if (codec == 0) {
		/* Each record takes at least 7 bytes. */
		if ((uint64_t)count > plen / 7 + 1) {
			*why = "record count larger than the batch";
			return KAAS_KERR_INVALID_RECORD;
		}
		return check_records(payload, plen, count, why);
	}
	uint8_t *raw;
	size_t rawlen;
	int rc = kaas_batch_decompress(codec, payload, plen, KAAS_BATCH_MAX_INFLATED, &raw, &rawlen);
	if (rc < 0) {
		*why = rc == -EFBIG ? "decompressed payload too large"
		     : rc == -ENOMEM ? "out of memory decompressing"
				     : "compressed payload does not decompress";
		return rc == -ENOMEM ? KAAS_KERR_UNKNOWN_SERVER_ERROR : KAAS_KERR_CORRUPT_MESSAGE;
	}
	if ((uint64_t)count > rawlen / 7 + 1)
		rc = (*why = "record count larger than the batch", KAAS_KERR_INVALID_RECORD);
	else
		rc = check_records(raw, rawlen, count, why);
	free(raw);
	return rc;
}

int kaas_batch_validate(const uint8_t *buf, size_t len, size_t max_batch,
			struct kaas_batch_summary *sum, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = "";
	sum->batches = 0;
	sum->records = 0;
	sum->max_timestamp = -1;
	sum->largest_batch = 0;
	if (len == 0 || !buf) {
		*why = "empty record set";
		return KAAS_KERR_INVALID_RECORD;
	}
	size_t pos = 0;
	while (pos < len) {
		if (len - pos < KAAS_BATCH_HEADER) {
			*why = "truncated record batch header";
			return KAAS_KERR_CORRUPT_MESSAGE;
		}
		const uint8_t *b = buf + pos;
		int32_t blen32 = (int32_t)be32(b + KAAS_BATCH_OFF_LENGTH);
		if (blen32 < KAAS_BATCH_HEADER - 12) {
			*why = "record batch length too small";
			return KAAS_KERR_CORRUPT_MESSAGE;
		}
		size_t blen = (size_t)blen32 + 12;
		if (blen > len - pos) {
			*why = "record batch length past the record set";
			return KAAS_KERR_CORRUPT_MESSAGE;
		}
		if (blen > max_batch) {
			*why = "record batch larger than the topic's max.message.bytes";
			return KAAS_KERR_MESSAGE_TOO_LARGE;
		}
		int rc = check_one(b, blen, why);
		if (rc != KAAS_KERR_NONE)
			return rc;
		sum->batches++;
		sum->records += (uint32_t)be32(b + KAAS_BATCH_OFF_COUNT);
		int64_t mts = be64(b + KAAS_BATCH_OFF_MAX_TS);
		if (mts > sum->max_timestamp)
			sum->max_timestamp = mts;
		if (blen > sum->largest_batch)
			sum->largest_batch = blen;
		pos += blen;
	}
	return KAAS_KERR_NONE;
}
