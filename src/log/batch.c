/* batch.c — RecordBatch v2 header parsing and CRC check. */
#include <errno.h>

#include "log/log_internal.h"
#include "util/crc32c.h"

int kaas_batch_parse_header(const void *buf, size_t len, struct kaas_batch_header *h)
{
	const unsigned char *p = buf;
	if (len < KAAS_BATCH_HEADER_LEN)
		return -EINVAL;
	h->base_offset = (int64_t)rd64(p);
	h->batch_length = (int32_t)rd32(p + 8);
	h->leader_epoch = (int32_t)rd32(p + 12);
	h->magic = (int8_t)p[16];
	h->crc = rd32(p + 17);
	h->attributes = (int16_t)rd16(p + 21);
	h->last_offset_delta = (int32_t)rd32(p + 23);
	h->base_timestamp = (int64_t)rd64(p + 27);
	h->max_timestamp = (int64_t)rd64(p + 35);
	h->producer_id = (int64_t)rd64(p + 43);
	h->producer_epoch = (int16_t)rd16(p + 51);
	h->base_sequence = (int32_t)rd32(p + 53);
	h->record_count = (int32_t)rd32(p + 57);
	if (h->magic != 2 || h->batch_length < KAAS_BATCH_HEADER_LEN - 12 ||
	    h->last_offset_delta < 0 || h->base_offset < 0)
		return -EINVAL;
	return 0;
}

int kaas_batch_crc_ok(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	if (len < KAAS_BATCH_HEADER_LEN)
		return 0;
	return kaas_crc32c(0, p + 21, len - 21) == rd32(p + 17);
}

int kaas_batch_varint(const unsigned char **p, const unsigned char *end, int64_t *v)
{
	uint64_t u = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -EBADMSG;
		unsigned char c = *(*p)++;
		u |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
			return 0;
		}
	}
	return -EBADMSG;
}
