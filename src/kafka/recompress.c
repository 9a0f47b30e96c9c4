/*
 * recompress.c — a topic's compression.type applied to produced batches
 * (issue 33; see batch.h).  Kafka's broker recompresses a batch whose
 * codec is not the topic's; so does kaas, on the partition's lane, before
 * the batch reaches the log.  Only the payload and the fields that describe
 * it change: the codec bits of the attributes, batchLength and the CRC.
 * Every record keeps its bytes (offset deltas, timestamps, keys, values,
 * headers), and the batch its base offset, timestamps and producer fields,
 * so idempotence and transactions see the batch the producer sent.
 */
#include "kafka/batch.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "util/crc32c.h"

/* The xerial framing Kafka's Java clients and brokers write snappy with
 * (magic, version 1, compatible version 1, then [length][block]...), in
 * blocks of 32 KiB as theirs. */
static const uint8_t xerial_head[16] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
					 0,    0,   0,   1,   0,   0,   0,   1 };
#define XERIAL_BLOCK 32768

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* gzip (a gzip member, as java.util.zip.GZIPOutputStream writes). */
static int gzip_into(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap, size_t *len)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)inlen;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*len = z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -EOVERFLOW;
}

static size_t gzip_bound(size_t inlen)
{
	return compressBound((uLong)inlen) + 32; /* the gzip header and trailer */
}

static size_t snappy_bound(size_t inlen)
{
	size_t blocks = inlen / XERIAL_BLOCK + 1;
	return sizeof xerial_head + blocks * 4 +
	       blocks * snappy_max_compressed_length(XERIAL_BLOCK);
}

static int snappy_into(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap, size_t *len)
{
	size_t pos = 0, n = sizeof xerial_head;
	memcpy(out, xerial_head, n);
	while (pos < inlen) {
		size_t bl = inlen - pos < XERIAL_BLOCK ? inlen - pos : XERIAL_BLOCK;
		size_t room = cap - n - 4;
		if (cap < n + 4 || snappy_compress((const char *)in + pos, bl, (char *)out + n + 4,
						   &room) != SNAPPY_OK)
			return -EOVERFLOW;
		put_be32(out + n, (uint32_t)room);
		n += 4 + room;
		pos += bl;
	}
	*len = n;
	return 0;
}

/* An lz4 frame with independent 64 KiB blocks and no content size, as
 * Kafka's KafkaLZ4BlockOutputStream writes. */
static const LZ4F_preferences_t lz4_prefs = {
	.frameInfo = { .blockSizeID = LZ4F_max64KB, .blockMode = LZ4F_blockIndependent },
};

static int lz4_into(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = LZ4F_compressFrame(out, cap, in, inlen, &lz4_prefs);
	if (LZ4F_isError(n))
		return -EOVERFLOW;
	*len = n;
	return 0;
}

static int zstd_into(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = ZSTD_compress(out, cap, in, inlen, ZSTD_CLEVEL_DEFAULT);
	if (ZSTD_isError(n))
		return -EOVERFLOW;
	*len = n;
	return 0;
}

/* The most bytes `codec` may make of inlen bytes. */
static size_t bound(int codec, size_t inlen)
{
	switch (codec) {
	case 1: return gzip_bound(inlen);
	case 2: return snappy_bound(inlen);
	case 3: return LZ4F_compressFrameBound(inlen, &lz4_prefs);
	case 4: return ZSTD_compressBound(inlen);
	default: return inlen;
	}
}

/* Compress (codec 0: copy) in[0..inlen) into out[0..cap): 0 and *len. */
static int compress_into(int codec, const uint8_t *in, size_t inlen, uint8_t *out, size_t cap,
			 size_t *len)
{
	switch (codec) {
	case 1: return gzip_into(in, inlen, out, cap, len);
	case 2: return snappy_into(in, inlen, out, cap, len);
	case 3: return lz4_into(in, inlen, out, cap, len);
	case 4: return zstd_into(in, inlen, out, cap, len);
	default:
		if (inlen > cap)
			return -EOVERFLOW;
		memcpy(out, in, inlen);
		*len = inlen;
		return 0;
	}
}

int kaas_batch_needs_recompress(const uint8_t *buf, size_t len, int codec)
{
	assert(codec >= 0 && codec <= 4);
	for (size_t pos = 0; pos + KAAS_BATCH_HEADER <= len;) {
		const uint8_t *b = buf + pos;
		size_t blen = (size_t)be32(b + KAAS_BATCH_OFF_LENGTH) + 12;
		if (blen > len - pos)
			break; /* validated before: cannot happen */
		uint16_t attrs = (uint16_t)((b[KAAS_BATCH_OFF_ATTR] << 8) | b[KAAS_BATCH_OFF_ATTR + 1]);
		if ((attrs & 0x07) != codec && !(attrs & 0x20 /* control */) &&
		    be32(b + KAAS_BATCH_OFF_COUNT) > 0)
			return 1;
		pos += blen;
	}
	return 0;
}

/* Append batch b[0..blen) to *o (*cap bytes, *at used; grown as needed)
 * in `codec`: 0 or -errno. */
static int one_batch(const uint8_t *b, size_t blen, int codec, uint8_t **o, size_t *cap,
		     size_t *at)
{
	uint16_t attrs = (uint16_t)((b[KAAS_BATCH_OFF_ATTR] << 8) | b[KAAS_BATCH_OFF_ATTR + 1]);
	int from = attrs & 0x07;
	int keep = from == codec || (attrs & 0x20) || be32(b + KAAS_BATCH_OFF_COUNT) == 0;
	const uint8_t *recs = b + KAAS_BATCH_HEADER;
	size_t rlen = blen - KAAS_BATCH_HEADER;
	uint8_t *plain = NULL;
	if (!keep && from != 0) {
		int rc = kaas_batch_decompress(from, recs, rlen, KAAS_BATCH_MAX_INFLATED, &plain, &rlen);
		if (rc < 0)
			return rc; /* validated before: only -ENOMEM */
		recs = plain;
	}
	size_t need = keep ? blen : KAAS_BATCH_HEADER + bound(codec, rlen);
	if (*cap - *at < need) {
		size_t ncap = *cap * 2 > *at + need ? *cap * 2 : *at + need;
		uint8_t *n = realloc(*o, ncap);
		if (!n) {
			free(plain);
			return -ENOMEM;
		}
		*o = n;
		*cap = ncap;
	}
	uint8_t *out = *o + *at;
	if (keep) { /* already the topic's codec, a control or an empty batch */
		memcpy(out, b, blen);
		*at += blen;
		return 0;
	}
	size_t n = 0;
	int rc = compress_into(codec, recs, rlen, out + KAAS_BATCH_HEADER, need - KAAS_BATCH_HEADER,
			       &n);
	free(plain);
	if (rc < 0)
		return rc;
	memcpy(out, b, KAAS_BATCH_HEADER);
	attrs = (uint16_t)((attrs & ~0x07) | codec);
	out[KAAS_BATCH_OFF_ATTR] = (uint8_t)(attrs >> 8);
	out[KAAS_BATCH_OFF_ATTR + 1] = (uint8_t)attrs;
	put_be32(out + KAAS_BATCH_OFF_LENGTH, (uint32_t)(KAAS_BATCH_HEADER - 12 + n));
	put_be32(out + KAAS_BATCH_OFF_CRC,
		 kaas_crc32c(0, out + KAAS_BATCH_OFF_ATTR, KAAS_BATCH_HEADER + n - KAAS_BATCH_OFF_ATTR));
	*at += KAAS_BATCH_HEADER + n;
	return 0;
}

int kaas_batch_recompress(const uint8_t *buf, size_t len, int codec, uint8_t **out,
			  size_t *outlen)
{
	assert(codec >= 0 && codec <= 4);
	size_t cap = len + 64, at = 0;
	uint8_t *o = malloc(cap);
	if (!o)
		return -ENOMEM;
	for (size_t pos = 0; pos + KAAS_BATCH_HEADER <= len;) {
		const uint8_t *b = buf + pos;
		size_t blen = (size_t)be32(b + KAAS_BATCH_OFF_LENGTH) + 12;
		int rc = blen > len - pos || blen < KAAS_BATCH_HEADER
				 ? -EBADMSG
				 : one_batch(b, blen, codec, &o, &cap, &at);
		if (rc < 0) {
			free(o);
			return rc;
		}
		pos += blen;
	}
	*out = o;
	*outlen = at;
	return 0;
}
