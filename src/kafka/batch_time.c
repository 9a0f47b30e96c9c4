/* batch_time.c — record timestamps inside one stored batch (see batch.h). */
#include "kafka/batch.h"

#include <errno.h>
#include <stdlib.h>

#include "kafka/codec.h"

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int64_t be64(const uint8_t *p)
{
	return (int64_t)(((uint64_t)be32(p) << 32) | be32(p + 4));
}

int kaas_batch_time_scan(const uint8_t *b, size_t len, int64_t min_offset, int64_t target,
			 struct kaas_batch_times *out)
{
	out->ge_offset = out->ge_timestamp = -1;
	out->max_offset = out->max_timestamp = -1;
	if (len < KAAS_BATCH_HEADER || b[KAAS_BATCH_OFF_MAGIC] != 2 ||
	    (size_t)be32(b + KAAS_BATCH_OFF_LENGTH) + 12 != len)
		return -EBADMSG;
	int64_t base = be64(b);
	uint16_t attr = (uint16_t)((b[KAAS_BATCH_OFF_ATTR] << 8) | b[KAAS_BATCH_OFF_ATTR + 1]);
	int32_t count = (int32_t)be32(b + KAAS_BATCH_OFF_COUNT);
	int64_t base_ts = be64(b + KAAS_BATCH_OFF_BASE_TS);
	int64_t max_ts = be64(b + KAAS_BATCH_OFF_MAX_TS);
	int32_t last_delta = (int32_t)be32(b + KAAS_BATCH_OFF_LAST_DELTA);
	if (count <= 0 || last_delta != count - 1)
		return -EBADMSG;
	if (attr & KAAS_BATCH_ATTR_LOG_APPEND_TIME) {
		/* Every record carries the batch's append time: the first one
		 * at or after min_offset answers both questions. */
		int64_t first = base > min_offset ? base : min_offset;
		if (first > base + last_delta)
			return 0;
		out->max_offset = first;
		out->max_timestamp = max_ts;
		if (max_ts >= target) {
			out->ge_offset = first;
			out->ge_timestamp = max_ts;
		}
		return 0;
	}
	const uint8_t *recs = b + KAAS_BATCH_HEADER;
	size_t rlen = len - KAAS_BATCH_HEADER;
	uint8_t *raw = NULL;
	int codec = attr & 0x7;
	if (codec) {
		int rc = kaas_batch_decompress(codec, recs, rlen, KAAS_BATCH_MAX_INFLATED, &raw,
					       &rlen);
		if (rc < 0)
			return rc == -EFBIG || rc == -ENOTSUP ? -EBADMSG : rc;
		recs = raw;
	}
	struct kaas_kr r;
	kaas_kr_init(&r, recs, rlen);
	for (int32_t i = 0; i < count && kaas_kr_ok(&r); i++) {
		int32_t n = kaas_kr_varint(&r);
		if (n < 0 || (size_t)n > kaas_kr_left(&r)) {
			kaas_kr_fail(&r);
			break;
		}
		struct kaas_kr rec;
		kaas_kr_init(&rec, r.p, (size_t)n);
		r.p += n;
		(void)kaas_kr_i8(&rec);                 /* attributes */
		int64_t ts = base_ts + kaas_kr_varlong(&rec);
		int64_t off = base + kaas_kr_varint(&rec);
		if (!kaas_kr_ok(&rec)) {
			kaas_kr_fail(&r);
			break;
		}
		if (off < min_offset)
			continue;
		if (out->ge_offset < 0 && ts >= target) {
			out->ge_offset = off;
			out->ge_timestamp = ts;
		}
		if (out->max_offset < 0 || ts > out->max_timestamp) {
			out->max_offset = off;
			out->max_timestamp = ts;
		}
	}
	int ok = kaas_kr_ok(&r);
	free(raw);
	return ok ? 0 : -EBADMSG;
}
