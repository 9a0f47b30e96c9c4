/* test_log_describe.c — what the admin APIs ask of a log (log_describe.c):
 * the end offset of each leader epoch across leaders (OffsetForLeaderEpoch,
 * as Kafka's leader-epoch cache answers), the bytes of its segments, and
 * its producers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "log/log.h"
#include "tests/log/logtest.h"

/* Append n one-record batches of producer 42 from sequence seq: their bytes. */
static size_t append(struct kaas_log *log, int n, int32_t seq)
{
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		size_t len;
		unsigned char *b = lt_batch(60, 1, 1000 + seq + i, 42, 1, seq + i, (uint32_t)i, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		assert_true(kaas_log_append_sync(log, &d) >= 0);
		total += len;
		free(b);
	}
	return total;
}

/* kaas_log_epoch_end(log, asked) answers (found, end) with return rc. */
static void expect_end(struct kaas_log *log, int32_t asked, int rc, int32_t found, int64_t end)
{
	int32_t fe;
	int64_t eo;
	assert_int_equal(kaas_log_epoch_end(log, asked, &fe, &eo), rc);
	assert_int_equal(fe, found);
	assert_int_equal(eo, end);
}

static void test_epochs_sizes_producers(void **state)
{
	(void)state;
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "describe"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(sub, env.dir, 1, NULL, &log), 0);
	size_t bytes = append(log, 3, 0);
	expect_end(log, 1, 0, 1, 3);
	assert_int_equal(kaas_log_close(log), 0);

	assert_int_equal(kaas_log_open(sub, env.dir, 3, NULL, &log), 0);
	bytes += append(log, 2, 3);
	expect_end(log, 0, 0, 0, 0);           /* older than any: the first start */
	expect_end(log, 1, 0, 1, 3);           /* ends where epoch 3 starts */
	expect_end(log, 2, 0, 1, 3);           /* never a leader: the one before */
	expect_end(log, 3, 0, 3, 5);           /* the latest: the log end */
	expect_end(log, 4, -ENOENT, -1, -1);   /* later than any */
	expect_end(log, -1, -ENOENT, -1, -1);
	assert_int_equal(kaas_log_size(log), (int64_t)bytes);

	struct kaas_log_producer *p;
	size_t n;
	assert_int_equal(kaas_log_producers(log, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].producer_id, 42);
	assert_int_equal(p[0].batches[p[0].n - 1].last_seq, 4);
	free(p);

	/* DeleteRecords into epoch 3's segment: epoch 1 ends at the log start. */
	assert_int_equal(kaas_log_delete_records(log, 4), 0);
	expect_end(log, 1, 0, 1, 4);
	assert_int_equal(kaas_log_close(log), 0);

	/* A new leader that wrote nothing yet: its epoch starts at the end. */
	assert_int_equal(kaas_log_open(sub, env.dir, 5, NULL, &log), 0);
	expect_end(log, 3, 0, 3, 5);
	expect_end(log, 4, 0, 3, 5);
	expect_end(log, 5, 0, 5, 5);
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_epochs_sizes_producers) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
