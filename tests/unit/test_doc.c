/* JSON documents: round trip; torn, corrupt, foreign and newer documents are
 * errors naming the file, never an empty default. */
#include "tests/unit/unit.h"

#include <errno.h>

#include "contract/doc.h"
#include "util/crc32c.h"

static void crc32c_known_answers(void **state)
{
	assert_int_equal(kaas_crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(kaas_crc32c(0, "", 0), 0);
	/* Incremental equals one shot, at every split and alignment. */
	char buf[300];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (char)(i * 7 + 3);
	uint32_t whole = kaas_crc32c(0, buf, sizeof buf);
	for (size_t k = 0; k <= sizeof buf; k += 13)
		assert_int_equal(kaas_crc32c(kaas_crc32c(0, buf, k), buf + k, sizeof buf - k), whole);
	/* 32 zero bytes, a published CRC-32C test vector (RFC 3720). */
	char z[32] = {0};
	assert_int_equal(kaas_crc32c(0, z, 32), 0x8a9136aa);
}

static cJSON *sample(void)
{
	cJSON *b = cJSON_CreateObject();
	kaas_json_add_u64(b, "leader_epoch", 7);
	kaas_json_add_u64(b, "log_start", 1234567890123ull);
	cJSON_AddStringToObject(b, "topic", "orders");
	return b;
}

static void doc_round_trip(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	cJSON *b = sample();
	assert_int_equal(kaas_doc_write(s, "manifest.json", "manifest", 1, b), 0);
	cJSON_Delete(b);
	cJSON *got;
	int ver;
	assert_int_equal(kaas_doc_read(s, "manifest.json", "manifest", 1, &got, &ver), 0);
	assert_int_equal(ver, 1);
	uint64_t v;
	assert_int_equal(kaas_json_get_u64(got, "log_start", &v), 0);
	assert_true(v == 1234567890123ull);
	assert_int_equal(kaas_json_get_u64(got, "missing", &v), -ENOENT);
	assert_int_equal(kaas_json_get_u64(got, "topic", &v), -EINVAL);
	int64_t i;
	assert_int_equal(kaas_json_get_i64(got, "leader_epoch", &i), 0);
	assert_int_equal(i, 7);
	cJSON_Delete(got);
	assert_int_equal(kaas_doc_read(s, "nothing.json", "manifest", 1, &got, &ver), -ENOENT);
	cJSON *big = cJSON_CreateObject();
	assert_int_equal(kaas_json_add_u64(big, "x", (1ull << 53) + 2), -ERANGE);
	cJSON_Delete(big);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void expect_bad(struct kaas_substrate *s, const char *text, size_t len, int want)
{
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, "bad.json", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, text, len, 0), 0);
	kaas_sub_close(f);
	cJSON *got = (cJSON *)1;
	int ver;
	assert_int_equal(kaas_doc_read(s, "bad.json", "manifest", 1, &got, &ver), want);
	assert_null(got);
	assert_non_null(strstr(kaas_sub_errdetail(), "bad.json"));
}

static void doc_damage_is_an_error(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	cJSON *b = sample();
	char *enc;
	size_t len;
	assert_int_equal(kaas_doc_encode("manifest", 1, b, &enc, &len), 0);
	/* Every truncation (a torn write) is caught. */
	for (size_t cut = 0; cut < len; cut++)
		expect_bad(s, enc, cut, -EBADMSG);
	/* Every single flipped byte in the body is caught. */
	const char *body = strchr(enc, '\n') + 1;
	for (size_t k = (size_t)(body - enc); k + 1 < len; k++) {
		char *copy = malloc(len);
		memcpy(copy, enc, len);
		copy[k] ^= 0x01;
		expect_bad(s, copy, len, -EBADMSG);
		free(copy);
	}
	expect_bad(s, "", 0, -EBADMSG);
	expect_bad(s, "{}\n{}\n", 6, -EBADMSG);
	free(enc);
	/* Another kind of document. */
	assert_int_equal(kaas_doc_encode("producer-state", 1, b, &enc, &len), 0);
	expect_bad(s, enc, len, -EBADMSG);
	free(enc);
	/* A newer format is refused, not guessed at. */
	assert_int_equal(kaas_doc_encode("manifest", 2, b, &enc, &len), 0);
	expect_bad(s, enc, len, -EPROTO);
	free(enc);
	cJSON_Delete(b);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32c_known_answers),
		cmocka_unit_test(doc_round_trip),
		cmocka_unit_test(doc_damage_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
