/* test_log_stress.c — appenders, readers (copying and zero-copy), time
 * lookups, rolls, retention and DeleteRecords all at once on one log.  Every
 * read must return whole, CRC-valid batches holding the asked offset. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log/log.h"
#include "tests/log/logtest.h"

#define APPENDERS 4
#define PER_APPENDER 400

struct shared {
	struct kaas_log *log;
	int stop;          /* atomic */
	int errors;        /* atomic */
	long reads;        /* atomic */
};

/* Count (and say) a failed check. */
static void bad(struct shared *sh, int line, int rc)
{
	fprintf(stderr, "check at line %d failed (rc %d: %s)\n", line, rc, kaas_sub_errdetail());
	__atomic_fetch_add(&sh->errors, 1, __ATOMIC_SEQ_CST);
}

static void *appender(void *arg)
{
	struct shared *sh = arg;
	static int ids;
	int id = __atomic_fetch_add(&ids, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < PER_APPENDER; i++) {
		size_t len;
		unsigned char *b = lt_batch(64 + (size_t)((i * 97 + id * 13) % 1500), 1 + (uint32_t)(i % 5),
					    1000 + i, 100 + id, 0, i * 5, (uint32_t)(id * 100000 + i), &len);
		struct kaas_log_batch d = lt_desc(b, len);
		int64_t r;
		if (i % 3 == 0)
			r = kaas_log_append(sh->log, &d, NULL, NULL, NULL); /* fire and forget */
		else
			r = kaas_log_append_sync(sh->log, &d);
		if (r < 0)
			bad(sh, __LINE__, 0);
		free(b);
	}
	return NULL;
}

static int check_slice_bytes(const unsigned char *p, size_t len, int64_t want)
{
	size_t pos = 0;
	int64_t expect = -1;
	while (pos < len) {
		struct kaas_batch_header h;
		if (kaas_batch_parse_header(p + pos, len - pos, &h) < 0)
			return -1;
		size_t blen = (size_t)h.batch_length + 12;
		if (blen > len - pos || !kaas_batch_crc_ok(p + pos, blen))
			return -1;
		if (expect < 0 && (want < h.base_offset || want > h.base_offset + h.last_offset_delta))
			return -1;
		if (expect >= 0 && h.base_offset != expect)
			return -1;
		expect = h.base_offset + h.last_offset_delta + 1;
		pos += blen;
	}
	return 0;
}

static void *reader(void *arg)
{
	struct shared *sh = arg;
	unsigned seed = 12345;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_SEQ_CST)) {
		int64_t start = kaas_log_start_offset(sh->log), hwm = kaas_log_high_watermark(sh->log);
		if (hwm <= start) {
			usleep(1000);
			continue;
		}
		seed = seed * 1103515245 + 12345;
		int64_t off = start + (int64_t)(seed >> 8) % (hwm - start);
		size_t max = (seed & 1) ? 1 : 16384;
		if (seed & 2) {
			struct kaas_log_slice s;
			int rc = kaas_log_read(sh->log, off, max, &s);
			if (rc == -ERANGE)
				continue; /* the start moved meanwhile */
			if (rc < 0 || s.len == 0) {
				bad(sh, __LINE__, rc);
				kaas_log_slice_release(&s);
				continue;
			}
			unsigned char *buf = malloc(s.len);
			if (kaas_log_slice_pread(&s, buf, s.len, 0) != (ssize_t)s.len ||
			    check_slice_bytes(buf, s.len, off) < 0)
				bad(sh, __LINE__, 0);
			free(buf);
			kaas_log_slice_release(&s);
		} else {
			void *buf;
			size_t len;
			int rc = kaas_log_read_copy(sh->log, off, max, &buf, &len, NULL);
			if (rc == -ERANGE)
				continue;
			if (rc < 0 || len == 0 || check_slice_bytes(buf, len, off) < 0)
				bad(sh, __LINE__, 0);
			free(buf);
		}
		int64_t o;
		int rc = kaas_log_offset_for_time(sh->log, 1000 + (int64_t)(seed % 400), &o, NULL);
		if (rc < 0 && rc != -ENOENT)
			bad(sh, __LINE__, 0);
		__atomic_fetch_add(&sh->reads, 1, __ATOMIC_SEQ_CST);
		usleep(100);
	}
	return NULL;
}

static void *keeper(void *arg)
{
	struct shared *sh = arg;
	for (int i = 0; !__atomic_load_n(&sh->stop, __ATOMIC_SEQ_CST); i++) {
		int rc = (i % 3 == 0) ? kaas_log_roll(sh->log) : kaas_log_housekeep(sh->log, 0);
		if (rc >= 0 && i % 17 == 16) {
			int64_t hwm = kaas_log_high_watermark(sh->log);
			int64_t start = kaas_log_start_offset(sh->log);
			rc = kaas_log_delete_records(sh->log, start + (hwm - start) / 4);
		}
		if (rc < 0)
			bad(sh, __LINE__, 0);
		usleep(2000);
	}
	return NULL;
}

static void test_stress(void **state)
{
	(void)state;
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "stress"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 16384;
	c.checkpoint_bytes = 8192;
	c.index_interval_bytes = 512;
	c.retention_bytes = 200000;
	c.retention_ms = -1;
	c.max_loaded_indexes = 2; /* readers keep evicting and reloading indexes */
	struct shared sh = { .stop = 0 };
	assert_int_equal(kaas_log_open(sub, env.dir, 1, &c, &sh.log), 0);
	pthread_t ta[APPENDERS], tr[2], tk;
	for (int i = 0; i < APPENDERS; i++)
		pthread_create(&ta[i], NULL, appender, &sh);
	for (int i = 0; i < 2; i++)
		pthread_create(&tr[i], NULL, reader, &sh);
	pthread_create(&tk, NULL, keeper, &sh);
	for (int i = 0; i < APPENDERS; i++)
		pthread_join(ta[i], NULL);
	assert_int_equal(kaas_log_wait(sh.log, kaas_log_end_offset(sh.log) - 1, 30000), 1);
	__atomic_store_n(&sh.stop, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 2; i++)
		pthread_join(tr[i], NULL);
	pthread_join(tk, NULL);
	struct kaas_log_stats st;
	kaas_log_get_stats(sh.log, &st);
	printf("# %ld reads, %llu appends in %llu fsyncs, %llu rolls, start %lld hwm %lld\n",
	       sh.reads, (unsigned long long)st.appends, (unsigned long long)st.fsyncs,
	       (unsigned long long)st.rolls, (long long)kaas_log_start_offset(sh.log),
	       (long long)kaas_log_high_watermark(sh.log));
	assert_int_equal(sh.errors, 0);
	assert_int_equal(st.appends, APPENDERS * PER_APPENDER);
	int64_t hwm = kaas_log_high_watermark(sh.log);
	assert_int_equal(kaas_log_close(sh.log), 0);
	/* And the result reopens to the same end. */
	assert_int_equal(kaas_log_open(sub, env.dir, 2, &c, &sh.log), 0);
	assert_int_equal(kaas_log_high_watermark(sh.log), hwm);
	assert_int_equal(kaas_log_close(sh.log), 0);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
