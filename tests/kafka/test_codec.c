/* test_codec.c — the Kafka wire codec, request headers and RecordBatch v2
 * validation (every codec, raw and xerial snappy, corrupt variants). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "kafka/batch.h"
#include "kafka/codec.h"
#include "kafka/header.h"
#include "kafka/protocol.h"
#include "util/crc32c.h"

static void test_varints(void **state)
{
	int64_t vals[] = { 0, 1, -1, 63, -64, 64, 300, -300, INT32_MAX, INT32_MIN,
			   INT64_MAX, INT64_MIN };
	struct kaas_kw w;
	kaas_kw_init(&w);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		kaas_kw_varlong(&w, vals[i]);
		if (vals[i] >= INT32_MIN && vals[i] <= INT32_MAX)
			kaas_kw_varint(&w, (int32_t)vals[i]);
	}
	struct kaas_kr r;
	kaas_kr_init(&r, w.buf, w.len);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		assert_int_equal(kaas_kr_varlong(&r), vals[i]);
		if (vals[i] >= INT32_MIN && vals[i] <= INT32_MAX)
			assert_int_equal(kaas_kr_varint(&r), vals[i]);
	}
	assert_true(kaas_kr_ok(&r));
	assert_int_equal(kaas_kr_left(&r), 0);
	kaas_kw_free(&w);
	/* Known encodings: zig-zag 1 => 0x02, -1 => 0x01, 300 => 0xd8 0x04. */
	uint8_t b[] = { 0x02, 0x01, 0xd8, 0x04 };
	kaas_kr_init(&r, b, sizeof(b));
	assert_int_equal(kaas_kr_varint(&r), 1);
	assert_int_equal(kaas_kr_varint(&r), -1);
	assert_int_equal(kaas_kr_varint(&r), 300);
}

static void test_reader_bounds(void **state)
{
	uint8_t b[] = { 0x00, 0x05, 'a', 'b' }; /* string claims 5, has 2 */
	struct kaas_kr r;
	kaas_kr_init(&r, b, sizeof(b));
	struct kaas_kslice s = kaas_kr_str(&r, 0);
	assert_false(kaas_kr_ok(&r));
	assert_int_equal(s.len, -1);
	assert_int_equal(kaas_kr_i32(&r), 0); /* sticky */
	/* A varint that never ends. */
	uint8_t v[12];
	memset(v, 0xff, sizeof(v));
	kaas_kr_init(&r, v, sizeof(v));
	(void)kaas_kr_varlong(&r);
	assert_false(kaas_kr_ok(&r));
	/* A compact string whose length varint is beyond int32 (0xffffffff - 1
	 * bytes): the reader fails, it does not hand back a null slice as if
	 * the string were read (a DescribeTopicPartitions crash came of it). */
	uint8_t big[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 'a' };
	kaas_kr_init(&r, big, sizeof(big));
	s = kaas_kr_str(&r, 1);
	assert_int_equal(s.len, -1);
	assert_false(kaas_kr_ok(&r));
	kaas_kr_init(&r, big, sizeof(big));
	(void)kaas_kr_nbytes(&r, 1);
	assert_false(kaas_kr_ok(&r));
	/* An array count larger than the bytes left. */
	uint8_t a[] = { 0x7f, 0xff, 0xff, 0xff, 0, 0 };
	kaas_kr_init(&r, a, sizeof(a));
	(void)kaas_kr_array(&r, 0, 4);
	assert_false(kaas_kr_ok(&r));
	/* Compact (flexible) forms and a null string. */
	struct kaas_kw w;
	kaas_kw_init(&w);
	kaas_kw_str(&w, 1, "topic");
	kaas_kw_str(&w, 1, NULL);
	kaas_kw_array(&w, 1, 3);
	kaas_kw_uvarint(&w, 1); /* one tagged field */
	kaas_kw_uvarint(&w, 0);
	kaas_kw_uvarint(&w, 2);
	kaas_kw_raw(&w, "xy", 2);
	kaas_kr_init(&r, w.buf, w.len);
	assert_true(kaas_kslice_eq(kaas_kr_str(&r, 1), "topic"));
	assert_int_equal(kaas_kr_nstr(&r, 1).len, -1);
	assert_int_equal(kaas_kr_array(&r, 1, 0), 3);
	kaas_kr_tags(&r, 1);
	assert_true(kaas_kr_ok(&r));
	assert_int_equal(kaas_kr_left(&r), 0);
	kaas_kw_free(&w);
}

/* The flexible versions' primitives: unsigned varints, compact bytes and
 * arrays and their nulls, tagged-field sections with unknown fields. */
static void test_flexible_primitives(void **state)
{
	/* Known uvarint encodings, and one too long for 32 bits. */
	uint8_t u[] = { 0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f };
	struct kaas_kr r;
	kaas_kr_init(&r, u, sizeof(u));
	assert_int_equal(kaas_kr_uvarint(&r), 0);
	assert_int_equal(kaas_kr_uvarint(&r), 127);
	assert_int_equal(kaas_kr_uvarint(&r), 128);
	assert_int_equal(kaas_kr_uvarint(&r), UINT32_MAX);
	assert_true(kaas_kr_ok(&r));
	uint8_t longer[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	kaas_kr_init(&r, longer, sizeof(longer));
	(void)kaas_kr_uvarint(&r);
	assert_false(kaas_kr_ok(&r));

	struct kaas_kw w;
	kaas_kw_init(&w);
	kaas_kw_bytes(&w, 1, "abc", 3);
	kaas_kw_bytes(&w, 1, NULL, -1);
	kaas_kw_array(&w, 1, -1);
	kaas_kw_array(&w, 1, 0);
	kaas_kw_tags(&w, 1);   /* an empty section: one 0 byte */
	kaas_kw_tags(&w, 0);   /* classic: nothing */
	/* A section with two unknown fields (tags 0 and 7). */
	kaas_kw_uvarint(&w, 2);
	kaas_kw_uvarint(&w, 0);
	kaas_kw_uvarint(&w, 1);
	kaas_kw_raw(&w, "z", 1);
	kaas_kw_uvarint(&w, 7);
	kaas_kw_uvarint(&w, 3);
	kaas_kw_raw(&w, "abc", 3);
	assert_int_equal(w.len, 4 + 1 + 1 + 1 + 1 + 9);
	assert_int_equal(w.buf[0], 4); /* length + 1 */
	kaas_kr_init(&r, w.buf, w.len);
	struct kaas_kslice b = kaas_kr_nbytes(&r, 1);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.p, "abc", 3);
	assert_int_equal(kaas_kr_nbytes(&r, 1).len, -1);
	assert_int_equal(kaas_kr_array(&r, 1, 4), -1);
	assert_int_equal(kaas_kr_array(&r, 1, 4), 0);
	kaas_kr_tags(&r, 1);
	kaas_kr_tags(&r, 0);
	kaas_kr_tags(&r, 1);
	assert_true(kaas_kr_ok(&r));
	assert_int_equal(kaas_kr_left(&r), 0);
	/* A tagged field longer than what is left fails the reader. */
	kaas_kr_init(&r, w.buf + w.len - 9, 8);
	kaas_kr_tags(&r, 1);
	assert_false(kaas_kr_ok(&r));
	/* A compact string that is null where it may not be. */
	uint8_t nul[] = { 0x00 };
	kaas_kr_init(&r, nul, 1);
	(void)kaas_kr_str(&r, 1);
	assert_false(kaas_kr_ok(&r));
	kaas_kw_free(&w);
}

/* Which versions are flexible comes from the API table: the header parser
 * reads a v2 header (with tags) for them and the answer gets header v1,
 * except ApiVersions; a version past the range is parsed as header v1. */
static void test_header_versions(void **state)
{
	const struct kaas_api_range *m = kaas_api_find(KAAS_API_METADATA);
	assert_non_null(m);
	assert_true(m->flex_from <= m->max);
	struct kaas_kw w;
	kaas_kw_init(&w);
	kaas_kw_i16(&w, KAAS_API_METADATA);
	kaas_kw_i16(&w, m->flex_from);
	kaas_kw_i32(&w, 7);
	kaas_kw_str(&w, 0, "c"); /* client id: classic even in header v2 */
	kaas_kw_uvarint(&w, 1);  /* one unknown header tag */
	kaas_kw_uvarint(&w, 3);
	kaas_kw_uvarint(&w, 1);
	kaas_kw_i8(&w, 9);
	kaas_kw_i8(&w, 42);      /* the body */
	struct kaas_kr r;
	struct kaas_req_header h;
	kaas_kr_init(&r, w.buf, w.len);
	assert_int_equal(kaas_req_header_parse(&r, &h), 0);
	assert_true(h.flex);
	assert_true(h.resp_tags);
	assert_int_equal(kaas_kr_i8(&r), 42);
	/* The version before: classic, no header tags. */
	w.buf[3] = (uint8_t)(m->flex_from - 1);
	kaas_kr_init(&r, w.buf, w.len);
	assert_int_equal(kaas_req_header_parse(&r, &h), 0);
	assert_false(h.flex);
	assert_false(h.resp_tags);
	assert_int_equal(kaas_kr_uvarint(&r), 1); /* the bytes after the client id */
	/* Past the range: not flexible (the dispatcher closes it). */
	w.buf[3] = (uint8_t)(m->max + 1);
	kaas_kr_init(&r, w.buf, w.len);
	assert_int_equal(kaas_req_header_parse(&r, &h), 0);
	assert_false(h.flex);
	assert_false(kaas_api_answered(KAAS_API_METADATA, (int16_t)(m->max + 1)));
	kaas_kw_free(&w);
	/* Every API: min <= max, and the table's refused range below min is
	 * only Produce's and Fetch's. */
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++) {
		assert_true(a->oldest <= a->min && a->min <= a->max);
		assert_true(a->oldest == a->min || a->key == KAAS_API_PRODUCE ||
			    a->key == KAAS_API_FETCH);
	}
}

static void test_header(void **state)
{
	struct kaas_kw w;
	kaas_kw_init(&w);
	kaas_kw_i16(&w, KAAS_API_API_VERSIONS);
	kaas_kw_i16(&w, 3);
	kaas_kw_i32(&w, 42);
	kaas_kw_str(&w, 0, "rdkafka");
	kaas_kw_uvarint(&w, 0); /* header tags (v2) */
	kaas_kw_str(&w, 1, "librdkafka");
	struct kaas_kr r;
	kaas_kr_init(&r, w.buf, w.len);
	struct kaas_req_header h;
	assert_int_equal(kaas_req_header_parse(&r, &h), 0);
	assert_int_equal(h.correlation_id, 42);
	assert_true(h.flex);
	assert_false(h.resp_tags); /* ApiVersions answers with header v0 */
	assert_true(kaas_kslice_eq(h.client_id, "rdkafka"));
	assert_true(kaas_kslice_eq(kaas_kr_str(&r, 1), "librdkafka"));
	/* Truncated header. */
	kaas_kr_init(&r, w.buf, 5);
	assert_int_equal(kaas_req_header_parse(&r, &h), -EBADMSG);
	kaas_kw_free(&w);
	const struct kaas_api_range *f = kaas_api_find(KAAS_API_FETCH);
	assert_non_null(f);
	assert_true(kaas_api_supported(KAAS_API_FETCH, 4));
	assert_true(kaas_api_supported(KAAS_API_FETCH, f->max));
	assert_false(kaas_api_supported(KAAS_API_FETCH, f->max + 1));
	/* Fetch 0-3 are refused in their own format, not closed. */
	assert_false(kaas_api_supported(KAAS_API_FETCH, 3));
	assert_true(kaas_api_answered(KAAS_API_FETCH, 0));
	assert_false(kaas_api_answered(KAAS_API_FETCH, f->max + 1));
	assert_true(kaas_api_answered(KAAS_API_API_VERSIONS, 99));
	assert_false(kaas_api_supported(999, 0));
	assert_false(kaas_api_answered(999, 0));
}

/* n records (keys, values, a header, a null value) as a batch payload. */
static void records(struct kaas_kw *out, int n)
{
	for (int i = 0; i < n; i++) {
		struct kaas_kw rec;
		kaas_kw_init(&rec);
		kaas_kw_i8(&rec, 0);
		kaas_kw_varlong(&rec, i);
		kaas_kw_varint(&rec, i);
		kaas_kw_varint(&rec, 3);
		kaas_kw_raw(&rec, "key", 3);
		if (i % 3 == 2) {
			kaas_kw_varint(&rec, -1);
		} else {
			kaas_kw_varint(&rec, 11);
			kaas_kw_raw(&rec, "hello world", 11);
		}
		kaas_kw_varint(&rec, 1);
		kaas_kw_varint(&rec, 1);
		kaas_kw_raw(&rec, "h", 1);
		kaas_kw_varint(&rec, 1);
		kaas_kw_raw(&rec, "v", 1);
		kaas_kw_varint(&out[0], (int32_t)rec.len);
		kaas_kw_raw(out, rec.buf, rec.len);
		kaas_kw_free(&rec);
	}
}

static void build_batch(struct kaas_kw *b, int codec, int n, const uint8_t *payload, size_t plen)
{
	kaas_kw_init(b);
	kaas_kw_i64(b, 0);
	kaas_kw_i32(b, 0);
	kaas_kw_i32(b, -1);
	kaas_kw_i8(b, 2);
	kaas_kw_i32(b, 0);
	kaas_kw_i16(b, (int16_t)codec);
	kaas_kw_i32(b, n - 1);
	kaas_kw_i64(b, 1000);
	kaas_kw_i64(b, 1000 + n - 1);
	kaas_kw_i64(b, -1);
	kaas_kw_i16(b, -1);
	kaas_kw_i32(b, -1);
	kaas_kw_i32(b, n);
	kaas_kw_raw(b, payload, plen);
	kaas_kw_put_i32_at(b, 8, (int32_t)(b->len - 12));
	kaas_kw_put_i32_at(b, 17, (int32_t)kaas_crc32c(0, b->buf + 21, b->len - 21));
}

static int validate(struct kaas_kw *b)
{
	struct kaas_batch_summary s;
	return kaas_batch_validate(b->buf, b->len, 1 << 20, &s, NULL);
}

static void compress_with(int codec, const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen,
			  int xerial)
{
	size_t cap = inlen * 2 + 1024;
	uint8_t *o = malloc(cap);
	size_t n = cap;
	switch (codec) {
	case 1: {
		uLongf zl = (uLongf)cap;
		assert_int_equal(compress2(o, &zl, in, (uLong)inlen, 6), Z_OK);
		n = zl;
		break;
	}
	case 2:
		if (!xerial) {
			assert_int_equal(snappy_compress((const char *)in, inlen, (char *)o, &n),
					 SNAPPY_OK);
		} else {
			static const uint8_t magic[16] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
							   0, 0, 0, 1, 0, 0, 0, 1 };
			memcpy(o, magic, 16);
			size_t pos = 16, half = inlen / 2;
			for (int part = 0; part < 2; part++) {
				const uint8_t *src = in + (part ? half : 0);
				size_t sl = part ? inlen - half : half;
				size_t cl = cap - pos - 4;
				assert_int_equal(snappy_compress((const char *)src, sl,
								 (char *)o + pos + 4, &cl),
						 SNAPPY_OK);
				o[pos] = (uint8_t)(cl >> 24);
				o[pos + 1] = (uint8_t)(cl >> 16);
				o[pos + 2] = (uint8_t)(cl >> 8);
				o[pos + 3] = (uint8_t)cl;
				pos += 4 + cl;
			}
			n = pos;
		}
		break;
	case 3:
		n = LZ4F_compressFrame(o, cap, in, inlen, NULL);
		assert_false(LZ4F_isError(n));
		break;
	case 4:
		n = ZSTD_compress(o, cap, in, inlen, 3);
		assert_false(ZSTD_isError(n));
		break;
	}
	*out = o;
	*outlen = n;
}

static void test_batch_plain(void **state)
{
	struct kaas_kw p, b;
	kaas_kw_init(&p);
	records(&p, 10);
	build_batch(&b, 0, 10, p.buf, p.len);
	struct kaas_batch_summary s;
	assert_int_equal(kaas_batch_validate(b.buf, b.len, 1 << 20, &s, NULL), 0);
	assert_int_equal(s.batches, 1);
	assert_int_equal(s.records, 10);
	/* Two batches back to back. */
	struct kaas_kw two;
	kaas_kw_init(&two);
	kaas_kw_raw(&two, b.buf, b.len);
	kaas_kw_raw(&two, b.buf, b.len);
	assert_int_equal(kaas_batch_validate(two.buf, two.len, 1 << 20, &s, NULL), 0);
	assert_int_equal(s.batches, 2);
	/* Truncated set, wrong CRC, wrong magic, too large. */
	assert_int_equal(kaas_batch_validate(two.buf, two.len - 1, 1 << 20, &s, NULL),
			 KAAS_KERR_CORRUPT_MESSAGE);
	b.buf[b.len - 1] ^= 1;
	assert_int_equal(validate(&b), KAAS_KERR_CORRUPT_MESSAGE);
	b.buf[b.len - 1] ^= 1;
	b.buf[16] = 1; /* magic 1: INVALID_RECORD (87), as Kafka; not retried */
	assert_int_equal(validate(&b), KAAS_KERR_INVALID_RECORD);
	b.buf[16] = 2;
	assert_int_equal(kaas_batch_validate(b.buf, b.len, 100, &s, NULL),
			 KAAS_KERR_MESSAGE_TOO_LARGE);
	assert_int_equal(kaas_batch_validate(b.buf, 0, 100, &s, NULL), KAAS_KERR_INVALID_RECORD);
	kaas_kw_free(&two);
	kaas_kw_free(&b);
	/* Count says 11 but 10 records: CRC right, content wrong (Kafka:
	 * INVALID_RECORD; CORRUPT_MESSAGE is for a CRC that does not match). */
	build_batch(&b, 0, 11, p.buf, p.len);
	assert_int_equal(validate(&b), KAAS_KERR_INVALID_RECORD);
	kaas_kw_free(&b);
	/* Records that do not parse, under a right CRC. */
	{
		uint8_t junk[12];
		memset(junk, 0x7f, sizeof junk);
		build_batch(&b, 0, 1, junk, sizeof junk);
		assert_int_equal(validate(&b), KAAS_KERR_INVALID_RECORD);
		kaas_kw_free(&b);
	}
	/* Unknown codec 5. */
	build_batch(&b, 5, 10, p.buf, p.len);
	assert_int_equal(validate(&b), KAAS_KERR_UNSUPPORTED_COMPRESSION_TYPE);
	kaas_kw_free(&b);
	kaas_kw_free(&p);
}

static void test_batch_codecs(void **state)
{
	struct kaas_kw p;
	kaas_kw_init(&p);
	records(&p, 500);
	for (int codec = 1; codec <= 4; codec++) {
		for (int xerial = 0; xerial <= (codec == 2); xerial++) {
			uint8_t *z;
			size_t zl;
			compress_with(codec, p.buf, p.len, &z, &zl, xerial);
			struct kaas_kw b;
			build_batch(&b, codec, 500, z, zl);
			assert_int_equal(validate(&b), 0);
			kaas_kw_free(&b);
			/* Wrong record count inside a valid compressed payload. */
			build_batch(&b, codec, 499, z, zl);
			assert_int_equal(validate(&b), KAAS_KERR_INVALID_RECORD);
			kaas_kw_free(&b);
			/* Truncated payload (CRC recomputed: only decompression can tell). */
			build_batch(&b, codec, 500, z, zl / 2);
			assert_int_equal(validate(&b), KAAS_KERR_CORRUPT_MESSAGE);
			kaas_kw_free(&b);
			/* Garbage payload. */
			for (size_t i = 0; i < zl; i++)
				z[i] = (uint8_t)(i * 37 + 11);
			build_batch(&b, codec, 500, z, zl);
			assert_int_equal(validate(&b), KAAS_KERR_CORRUPT_MESSAGE);
			kaas_kw_free(&b);
			free(z);
		}
	}
	kaas_kw_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varints),
		cmocka_unit_test(test_reader_bounds),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_flexible_primitives),
		cmocka_unit_test(test_header_versions),
		cmocka_unit_test(test_batch_plain),
		cmocka_unit_test(test_batch_codecs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
