/* test_log_segment_size.c — segment_bytes bounds every segment, however
 * many appends one group commit gathers.  A round (everything queued while
 * the previous fsync ran) used to go whole into the active segment after a
 * roll: with the produce lanes queueing a partition's batches back to back,
 * kaasd wrote 3 MB into a segment of segment.bytes=1 MiB
 * (tests/topics/topic_configs.sh saw 2 segments instead of 4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract/contract.h"
#include "log/log.h"
#include "tests/log/logtest.h"

#define NBATCHES 200
#define PAYLOAD 300

static atomic_int done;

static void on_done(void *arg, int64_t result)
{
	(void)arg;
	assert_true(result >= 0);
	atomic_fetch_add(&done, 1);
}

static void test_round_never_overfills_a_segment(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log_config c = lt_small_cfg(); /* 4 KiB segments */
	c.linger_us = 50000; /* every append below joins one round */
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	size_t len = 0;
	atomic_store(&done, 0);
	for (uint32_t i = 0; i < NBATCHES; i++) {
		unsigned char *b = lt_batch(PAYLOAD, 1, 1000 + i, -1, -1, -1, i, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		assert_int_equal(kaas_log_append(log, &d, on_done, NULL, NULL), 0);
		free(b);
	}
	for (int t = 0; atomic_load(&done) < NBATCHES && t < 30000; t++)
		usleep(1000);
	assert_int_equal(atomic_load(&done), NBATCHES);
	assert_int_equal(kaas_log_close(log), 0);

	/* Every segment file is within segment_bytes, and together they hold
	 * every batch. */
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(f->sub, f->env.dir, &l), 0);
	uint64_t total = 0;
	int segs = 0;
	for (size_t i = 0; i < l.n; i++) {
		size_t n = strlen(l.names[i]);
		if (n < 4 || strcmp(l.names[i] + n - 4, ".log") != 0)
			continue;
		char *p = kaas_path_join(f->env.dir, l.names[i]);
		struct kaas_stat st;
		assert_int_equal(kaas_sub_stat(f->sub, p, &st), 0);
		if (st.size > c.segment_bytes)
			print_error("%s: %llu bytes, segment_bytes %llu\n", l.names[i],
				    (unsigned long long)st.size, (unsigned long long)c.segment_bytes);
		assert_true(st.size <= c.segment_bytes);
		total += st.size;
		segs++;
		free(p);
	}
	kaas_dirlist_free(&l);
	assert_int_equal(total, (uint64_t)NBATCHES * len);
	assert_true(segs >= (int)((uint64_t)NBATCHES * len / c.segment_bytes));
}

static int setup(void **state)
{
	return lt_fx_setup(state, "segsize");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_never_overfills_a_segment, setup,
						lt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
