/* decompress.c — inflate Kafka batch payloads for validation (see batch.h). */
#include "kafka/batch.h"
#include "util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

struct growbuf {
	uint8_t *p;
	size_t len, cap, limit;
};

/* Make room for at least `want` more bytes: 0, -EFBIG or -ENOMEM. */
static int gb_room(struct growbuf *g, size_t want)
{
	if (g->cap - g->len >= want)
		return 0;
	if (g->len + want > g->limit)
		want = g->limit - g->len;
	if (want == 0)
		return -EFBIG;
	uint8_t *n = kaas_reserve(g->p, &g->cap, g->len + want, 4096, g->limit);
	if (!n)
		return -ENOMEM;
	g->p = n;
	return 0;
}

static int do_gzip(const uint8_t *in, size_t inlen, struct growbuf *g)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)inlen;
	int rc = 0;
	for (;;) {
		if ((rc = gb_room(g, 65536)) < 0)
			break;
		zs.next_out = g->p + g->len;
		zs.avail_out = (uInt)(g->cap - g->len);
		int z = inflate(&zs, Z_NO_FLUSH);
		g->len = g->cap - zs.avail_out;
		if (z == Z_STREAM_END) {
			/* Concatenated gzip members are legal; Kafka writes one. */
			if (zs.avail_in == 0)
				break;
			if (inflateReset(&zs) != Z_OK) {
				rc = -EBADMSG;
				break;
			}
			continue;
		}
		if (z != Z_OK) {
			rc = -EBADMSG;
			break;
		}
		if (zs.avail_in == 0 && zs.avail_out != 0) {
			rc = -EBADMSG; /* truncated stream */
			break;
		}
	}
	inflateEnd(&zs);
	return rc;
}

static int snappy_block(const uint8_t *in, size_t inlen, struct growbuf *g)
{
	size_t n;
	if (snappy_uncompressed_length((const char *)in, inlen, &n) != SNAPPY_OK)
		return -EBADMSG;
	int rc = gb_room(g, n ? n : 1);
	if (rc < 0)
		return rc;
	if (g->cap - g->len < n)
		return -EFBIG;
	size_t outn = n;
	if (snappy_uncompress((const char *)in, inlen, (char *)g->p + g->len, &outn) != SNAPPY_OK ||
	    outn != n)
		return -EBADMSG;
	g->len += n;
	return 0;
}

static const uint8_t xerial_magic[8] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0 };

static int do_snappy(const uint8_t *in, size_t inlen, struct growbuf *g)
{
	if (inlen < 16 || memcmp(in, xerial_magic, 8) != 0)
		return snappy_block(in, inlen, g);
	/* xerial framing: magic, version, compat, then [u32 len][block]... */
	size_t pos = 16;
	while (pos < inlen) {
		if (inlen - pos < 4)
			return -EBADMSG;
		uint32_t bl = ((uint32_t)in[pos] << 24) | ((uint32_t)in[pos + 1] << 16) |
			      ((uint32_t)in[pos + 2] << 8) | in[pos + 3];
		pos += 4;
		if (bl > inlen - pos)
			return -EBADMSG;
		int rc = snappy_block(in + pos, bl, g);
		if (rc < 0)
			return rc;
		pos += bl;
	}
	return 0;
}

static int do_lz4(const uint8_t *in, size_t inlen, struct growbuf *g)
{
	LZ4F_dctx *dctx;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
		return -ENOMEM;
	size_t pos = 0;
	int rc = 0;
	size_t hint = 1;
	while (hint != 0) {
		if ((rc = gb_room(g, 65536)) < 0)
			break;
		size_t outsz = g->cap - g->len;
		size_t insz = inlen - pos;
		hint = LZ4F_decompress(dctx, g->p + g->len, &outsz, in + pos, &insz, NULL);
		if (LZ4F_isError(hint)) {
			rc = -EBADMSG;
			break;
		}
		g->len += outsz;
		pos += insz;
		if (hint != 0 && pos == inlen && outsz == 0) {
			rc = -EBADMSG; /* frame truncated */
			break;
		}
	}
	if (rc == 0 && pos != inlen)
		rc = -EBADMSG; /* trailing garbage after the frame */
	LZ4F_freeDecompressionContext(dctx);
	return rc;
}

static int do_zstd(const uint8_t *in, size_t inlen, struct growbuf *g)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (!d)
		return -ENOMEM;
	ZSTD_inBuffer ib = { in, inlen, 0 };
	int rc = 0;
	size_t ret = 1;
	for (;;) {
		if ((rc = gb_room(g, 65536)) < 0)
			break;
		ZSTD_outBuffer ob = { g->p + g->len, g->cap - g->len, 0 };
		ret = ZSTD_decompressStream(d, &ob, &ib);
		if (ZSTD_isError(ret)) {
			rc = -EBADMSG;
			break;
		}
		g->len += ob.pos;
		if (ret == 0 && ib.pos == ib.size)
			break;
		if (ib.pos == ib.size && ob.pos < ob.size) {
			rc = -EBADMSG; /* truncated */
			break;
		}
	}
	ZSTD_freeDCtx(d);
	return rc;
}

int kaas_batch_decompress(int codec, const uint8_t *in, size_t inlen, size_t limit,
			  uint8_t **out, size_t *outlen)
{
	struct growbuf g = { NULL, 0, 0, limit };
	int rc;
	switch (codec) {
	case 1: rc = do_gzip(in, inlen, &g); break;
	case 2: rc = do_snappy(in, inlen, &g); break;
	case 3: rc = do_lz4(in, inlen, &g); break;
	case 4: rc = do_zstd(in, inlen, &g); break;
	default: rc = -ENOTSUP; break;
	}
	if (rc < 0) {
		free(g.p);
		return rc;
	}
	*out = g.p;
	*outlen = g.len;
	return 0;
}
