/* test_recompress.c — compression.type's pieces (issue 33): a record set
 * recompressed from every codec into every codec validates, keeps its
 * header fields and records byte for byte, and leaves batches already in
 * the codec alone; the topic config's list edit (APPEND/SUBTRACT from the
 * default) and the message.format.version check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broker/topic_config.h"
#include "kafka/batch.h"
#include "kafka/codec.h"
#include "util/crc32c.h"

/* n records of a few hundred bytes each, as a batch's uncompressed payload. */
static void records(struct kaas_kw *out, int n)
{
	for (int i = 0; i < n; i++) {
		struct kaas_kw rec;
		char val[200];
		int vl = snprintf(val, sizeof val, "value %d of a batch that compresses well %0120d", i, i);
		kaas_kw_init(&rec);
		kaas_kw_i8(&rec, 0);
		kaas_kw_varlong(&rec, i);
		kaas_kw_varint(&rec, i);
		kaas_kw_varint(&rec, 3);
		kaas_kw_raw(&rec, "key", 3);
		kaas_kw_varint(&rec, vl);
		kaas_kw_raw(&rec, val, (size_t)vl);
		kaas_kw_varint(&rec, 0);
		kaas_kw_varint(out, (int32_t)rec.len);
		kaas_kw_raw(out, rec.buf, rec.len);
		kaas_kw_free(&rec);
	}
}

/* A batch (producer 77, epoch 3, sequence 10) of n records in `codec`,
 * appended to b. */
static void add_batch(struct kaas_kw *b, int codec, int n)
{
	struct kaas_kw plain, one;
	kaas_kw_init(&plain);
	records(&plain, n);
	uint8_t *payload = plain.buf;
	size_t plen = plain.len;
	uint8_t *tmp = NULL;
	if (codec) { /* compress with kaas's own compressor: a batch of codec 0 recompressed */
		struct kaas_kw raw;
		kaas_kw_init(&raw);
		add_batch(&raw, 0, n);
		size_t tl;
		assert_int_equal(kaas_batch_recompress(raw.buf, raw.len, codec, &tmp, &tl), 0);
		kaas_kw_raw(b, tmp, tl);
		free(tmp);
		kaas_kw_free(&raw);
		kaas_kw_free(&plain);
		return;
	}
	kaas_kw_init(&one);
	kaas_kw_i64(&one, 0);
	kaas_kw_i32(&one, 0);
	kaas_kw_i32(&one, -1);
	kaas_kw_i8(&one, 2);
	kaas_kw_i32(&one, 0);
	kaas_kw_i16(&one, 0);
	kaas_kw_i32(&one, n - 1);
	kaas_kw_i64(&one, 1000);
	kaas_kw_i64(&one, 1000 + n - 1);
	kaas_kw_i64(&one, 77);
	kaas_kw_i16(&one, 3);
	kaas_kw_i32(&one, 10);
	kaas_kw_i32(&one, n);
	kaas_kw_raw(&one, payload, plen);
	kaas_kw_put_i32_at(&one, 8, (int32_t)(one.len - 12));
	kaas_kw_put_i32_at(&one, 17, (int32_t)kaas_crc32c(0, one.buf + 21, one.len - 21));
	kaas_kw_raw(b, one.buf, one.len);
	kaas_kw_free(&one);
	kaas_kw_free(&plain);
}

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* The records of the batch at b, decompressed (malloc'd, *len). */
static uint8_t *payload_of(const uint8_t *b, size_t *len)
{
	size_t blen = be32(b + 8) + 12;
	int codec = b[22] & 7;
	uint8_t *out;
	if (!codec) {
		*len = blen - KAAS_BATCH_HEADER;
		out = malloc(*len);
		memcpy(out, b + KAAS_BATCH_HEADER, *len);
		return out;
	}
	assert_int_equal(kaas_batch_decompress(codec, b + KAAS_BATCH_HEADER, blen - KAAS_BATCH_HEADER,
					       KAAS_BATCH_MAX_INFLATED, &out, len),
			 0);
	return out;
}

static void test_every_codec_pair(void **state)
{
	(void)state;
	for (int from = 0; from <= 4; from++) {
		struct kaas_kw set;
		kaas_kw_init(&set);
		add_batch(&set, from, 50);
		add_batch(&set, from, 7);
		for (int to = 0; to <= 4; to++) {
			assert_int_equal(kaas_batch_needs_recompress(set.buf, set.len, to), from != to);
			uint8_t *out;
			size_t ol;
			assert_int_equal(kaas_batch_recompress(set.buf, set.len, to, &out, &ol), 0);
			struct kaas_batch_summary sum;
			const char *why = NULL;
			assert_int_equal(kaas_batch_validate(out, ol, 1 << 20, &sum, &why), 0);
			assert_int_equal(sum.batches, 2);
			assert_int_equal(sum.records, 57);
			assert_false(kaas_batch_needs_recompress(out, ol, to));
			size_t ip = 0, op = 0;
			for (int k = 0; k < 2; k++) {
				const uint8_t *a = set.buf + ip, *b = out + op;
				assert_int_equal(b[22] & 7, to);
				/* every header field but length, CRC and codec as sent */
				assert_memory_equal(a, b, 8);
				assert_memory_equal(a + 12, b + 12, 5);
				assert_int_equal(a[21], b[21]);
				assert_memory_equal(a + 23, b + 23, KAAS_BATCH_HEADER - 23);
				size_t la, lb;
				uint8_t *pa = payload_of(a, &la), *pb = payload_of(b, &lb);
				assert_int_equal(la, lb);
				assert_memory_equal(pa, pb, la);
				free(pa);
				free(pb);
				if (from == to) /* left alone: the same bytes */
					assert_memory_equal(a, b, be32(a + 8) + 12);
				ip += be32(a + 8) + 12;
				op += be32(b + 8) + 12;
			}
			assert_int_equal(op, ol);
			free(out);
		}
		kaas_kw_free(&set);
	}
}

static void list_edit(const char *key, const char *cur, const char *val, int append,
		      const char *want)
{
	char out[256];
	assert_int_equal(kaas_topic_config_list_edit(key, cur, val, append, out, sizeof out), 0);
	assert_string_equal(out, want);
}

static void test_list_edit(void **state)
{
	(void)state;
	list_edit("cleanup.policy", NULL, "compact", 1, "delete,compact");
	list_edit("cleanup.policy", "compact", "compact", 1, "compact");
	list_edit("cleanup.policy", "compact", "compact,delete", 1, "compact,delete");
	list_edit("cleanup.policy", NULL, "delete", 0, "");
	list_edit("cleanup.policy", "delete,compact", "delete", 0, "compact");
	list_edit("cleanup.policy", "delete,compact", "compact", 0, "delete");
	list_edit("cleanup.policy", "delete,compact", "shred", 0, "delete,compact");
	list_edit("leader.replication.throttled.replicas", NULL, "0:1", 1, "0:1");
	list_edit("leader.replication.throttled.replicas", "0:1,1:2", "0:1", 0, "1:2");
	char tiny[8];
	assert_int_equal(kaas_topic_config_list_edit("cleanup.policy", NULL, "compact", 1, tiny,
						     sizeof tiny),
			 -1);
}

static int format_version_ok(const char *v)
{
	struct kaas_kvlist l = { 0 };
	char msg[KAAS_CONFIG_MSG];
	assert_int_equal(kaas_kvlist_set(&l, "message.format.version", v), 0);
	int rc = kaas_topic_config_check(&l, msg);
	kaas_kvlist_clear(&l);
	return rc == 0;
}

static void test_format_version(void **state)
{
	(void)state;
	const char *good[] = { "0.8.0", "0.10.0", "0.10.2-IV0", "0.11.0", "1.0", "1.1", "2.8",
			       "2.8.1", "3.0", "3.0-IV1", "3.9", NULL };
	const char *bad[] = { "", "banana", "3", "0.7.0", "4.0", "3.10", "2.9", "3.0-IV", "3.0-",
			      "3.0x", "1.2", NULL };
	for (int i = 0; good[i]; i++)
		assert_true(format_version_ok(good[i]));
	for (int i = 0; bad[i]; i++)
		assert_false(format_version_ok(bad[i]));
	assert_non_null(kaas_topic_config_ignored("message.format.version"));
	assert_null(kaas_topic_config_ignored("retention.ms"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_codec_pair),
		cmocka_unit_test(test_list_edit),
		cmocka_unit_test(test_format_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
