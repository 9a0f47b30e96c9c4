/* test_log_retention_fence.c — a fenced leader's retention never removes
 * what the newer leader's view names.  The old leader's DeleteRecords (and
 * housekeeping's retention, the same drop_front) checks the fence, then
 * renames its manifest; a newer leader that claims the partition between
 * the check and the rename reads the old list.  The old leader must then
 * keep the segment files (the newer leader's now) and fail fenced; before
 * the fix it unlinked them and the newer leader's read of offset 0 failed
 * with ENOENT. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contract/contract.h"
#include "log/log.h"
#include "tests/log/logtest.h"
#include "util/step.h"

#define NBATCHES 64

/* Opens the newer leader (epoch 2) at the old leader's manifest rename. */
struct steal {
	struct lt_env *env;
	struct kaas_substrate *sub;
	struct kaas_log *newer;
	int started; /* the newer leader's own open writes a manifest too */
};

/* The newer leader is another host (lt_open_elsewhere). */
static void steal_hook(void *arg, const char *name)
{
	struct steal *s = arg;
	if (strcmp(name, "log.manifest.before-rename") != 0 || s->started)
		return;
	s->started = 1;
	struct kaas_log_config c = lt_small_cfg();
	assert_int_equal(lt_open_elsewhere(s->env, 2, &c, &s->sub, &s->newer), 0);
}

static void fill(struct kaas_log *log)
{
	for (uint32_t i = 0; i < NBATCHES; i++) {
		size_t len;
		unsigned char *b = lt_batch(300, 2, 1000 + i, -1, -1, -1, i, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		assert_int_equal(kaas_log_append_sync(log, &d), (int64_t)i * 2);
		free(b);
	}
	assert_int_equal(kaas_log_roll(log), 0);
}

/* Every batch from `from` on reads back whole through `log`. */
static void read_every(struct kaas_log *log, int64_t from)
{
	for (int64_t off = from; off < NBATCHES * 2; off += 2) {
		void *got;
		size_t glen;
		int64_t first;
		int rc = kaas_log_read_copy(log, off, 1, &got, &glen, &first);
		if (rc != 0)
			print_error("read of offset %lld: %d\n", (long long)off, rc);
		assert_int_equal(rc, 0);
		assert_int_equal(first, off);
		free(got);
	}
}

static void fenced_drop(int housekeep)
{
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, housekeep ? "ret-fence-hk" : "ret-fence-dr"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log_config c = lt_small_cfg();
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(sub, env.dir, 1, &c, &log), 0);
	fill(log);

	struct steal s = { .env = &env };
	kaas_step_set_hook(steal_hook, &s);
	int rc;
	if (housekeep) {
		c.retention_bytes = 4096; /* most sealed segments go */
		kaas_log_retune(log, &c);
		rc = kaas_log_housekeep(log, 0);
	} else {
		rc = kaas_log_delete_records(log, NBATCHES); /* half the log */
	}
	kaas_step_set_hook(NULL, NULL);
	assert_non_null(s.newer);
	assert_int_equal(rc, KAAS_LOG_EFENCED);
	assert_int_equal(kaas_log_status(log), KAAS_LOG_EFENCED);
	kaas_log_close(log);

	/* The newer leader read the list before the old one's rename: every
	 * segment it names is still there. */
	read_every(s.newer, 0);
	assert_int_equal(kaas_log_close(s.newer), 0);
	/* And after a reopen by a third leader. */
	struct kaas_log *third;
	c = lt_small_cfg();
	assert_int_equal(kaas_log_open(s.sub, env.dir, 3, &c, &third), 0);
	read_every(third, kaas_log_start_offset(third));
	assert_int_equal(kaas_log_close(third), 0);
	kaas_substrate_close(s.sub);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

static void test_delete_records_fenced(void **state)
{
	(void)state;
	fenced_drop(0);
}

static void test_retention_fenced(void **state)
{
	(void)state;
	fenced_drop(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_records_fenced),
		cmocka_unit_test(test_retention_fenced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
