/* converge, pending work and the convergent recursive delete. */
#include "tests/unit/unit.h"

#include <errno.h>

#include "contract/contract.h"

struct counter {
	int calls, done_at, fail_with;
};

static int count_step(void *arg)
{
	struct counter *c = arg;
	c->calls++;
	if (c->fail_with)
		return c->fail_with;
	return c->calls >= c->done_at ? KAAS_DONE : KAAS_NOT_YET;
}

static void converge_outcomes(void **state)
{
	struct kaas_converge_opts o = {.max_attempts = 10, .first_delay_us = 10, .max_delay_us = 100};
	struct counter c = {.done_at = 4};
	assert_int_equal(kaas_converge(count_step, &c, &o), 0);
	assert_int_equal(c.calls, 4);
	struct counter never = {.done_at = 1000};
	assert_int_equal(kaas_converge(count_step, &never, &o), -EAGAIN);
	assert_int_equal(never.calls, 10);
	struct counter broken = {.fail_with = -EROFS};
	assert_int_equal(kaas_converge(count_step, &broken, &o), -EROFS);
	assert_int_equal(broken.calls, 1);
	struct kaas_converge_opts timed = {.max_attempts = 100000, .first_delay_us = 1000, .deadline_ms = 30};
	struct counter slow = {.done_at = 1000000};
	assert_int_equal(kaas_converge(count_step, &slow, &timed), -EAGAIN);
	assert_true(slow.calls < 1000);
}

static int freed;
static void free_counter(void *p)
{
	freed++;
	free(p);
}

static void pending_work_is_never_dropped(void **state)
{
	struct kaas_pending p = {0};
	struct counter *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	a->done_at = 2;
	b->done_at = 4;
	assert_int_equal(kaas_pending_add(&p, "a", count_step, a, free_counter), 0);
	assert_int_equal(kaas_pending_add(&p, "b", count_step, b, free_counter), 0);
	assert_int_equal(kaas_pending_drive(&p), 2);
	assert_int_equal(kaas_pending_drive(&p), 1); /* a done */
	assert_int_equal(freed, 1);
	assert_int_equal(kaas_pending_drive(&p), 1);
	assert_int_equal(kaas_pending_drive(&p), 0); /* b done */
	assert_int_equal(freed, 2);
	struct counter *c = calloc(1, sizeof *c);
	c->done_at = 100;
	assert_int_equal(kaas_pending_add(&p, "c", count_step, c, free_counter), 0);
	kaas_pending_clear(&p);
	assert_int_equal(freed, 3);
	assert_int_equal(p.count, 0);
}

static void make_tree(struct kaas_substrate *s)
{
	assert_int_equal(kaas_sub_mkdirs(s, "t/0/sub", 0755), 0);
	assert_int_equal(kaas_sub_mkdirs(s, "t/1", 0755), 0);
	unit_put(s, "t/.topic-id.json", "id");
	unit_put(s, "t/0/a.log", "a");
	unit_put(s, "t/0/b.log", "b");
	unit_put(s, "t/0/sub/c", "c");
	unit_put(s, "t/1/d.log", "d");
}

static void remove_tree_basic(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	make_tree(s);
	unit_put(s, "keep", "k");
	assert_int_equal(kaas_remove_tree(s, "t", NULL), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(s, "t", &st), -ENOENT);
	assert_int_equal(kaas_sub_stat(s, "keep", &st), 0);
	/* Already gone is done. */
	assert_int_equal(kaas_remove_tree_step(s, "t"), KAAS_DONE);
	/* It refuses to remove the root or escape it. */
	assert_int_equal(kaas_remove_tree_step(s, ""), -EINVAL);
	assert_int_equal(kaas_remove_tree_step(s, "../x"), -EINVAL);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* Interrupted at every op (EIO), the next pass resumes and finishes. */
static void remove_tree_resumes_after_interruption(void **state)
{
	for (unsigned n = 1; n <= 30; n++) {
		char *dir;
		struct kaas_substrate *lower = unit_open_tmp(&dir);
		make_tree(lower);
		struct kaas_substrate *s;
		struct kaas_crashsub_opts o = {.fail_op_at = n, .fail_errno = EIO};
		assert_int_equal(kaas_crashsub_wrap(lower, &o, &s), 0);
		int rc = kaas_remove_tree_step(s, "t");
		assert_true(rc == KAAS_DONE || rc == -EIO);
		if (rc == -EIO) /* the one injected failure is spent: this pass finishes */
			assert_int_equal(kaas_remove_tree_step(s, "t"), KAAS_DONE);
		struct kaas_stat st;
		assert_int_equal(kaas_sub_stat(lower, "t", &st), -ENOENT);
		kaas_substrate_close(s);
		kaas_testdir_remove(dir);
	}
}

/* A silly-renamed entry (EBUSY on unlink), ENOTEMPTY from rmdir or ESTALE
 * mean "not yet", never a final failure; converging finishes the job. */
static void remove_tree_waits_for_busy_entries(void **state)
{
	static const struct {
		int err;
		int on_rmdir;
	} cases[] = {{EBUSY, 0}, {ESTALE, 0}, {ENOTEMPTY, 1}, {EBUSY, 1}};
	for (size_t e = 0; e < sizeof cases / sizeof *cases; e++) {
		for (unsigned n = 1; n <= 5; n++) {
			char *dir;
			struct kaas_substrate *lower = unit_open_tmp(&dir);
			make_tree(lower);
			struct kaas_substrate *s;
			struct kaas_crashsub_opts o = {.fail_errno = cases[e].err};
			if (cases[e].on_rmdir)
				o.fail_rmdir_at = n > 4 ? 4 : n;
			else
				o.fail_unlink_at = n;
			assert_int_equal(kaas_crashsub_wrap(lower, &o, &s), 0);
			assert_int_equal(kaas_remove_tree_step(s, "t"), KAAS_NOT_YET);
			struct kaas_converge_opts co = {.max_attempts = 5, .first_delay_us = 10};
			assert_int_equal(kaas_remove_tree(s, "t", &co), 0);
			struct kaas_stat st;
			assert_int_equal(kaas_sub_stat(lower, "t", &st), -ENOENT);
			kaas_substrate_close(s);
			kaas_testdir_remove(dir);
		}
	}
	assert_true(kaas_is_silly_name(".nfs000000000012abcd00000001"));
	assert_false(kaas_is_silly_name(".nfs"));
	assert_false(kaas_is_silly_name(".nfsXYZ"));
	assert_false(kaas_is_silly_name("nfs0001"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(converge_outcomes),
		cmocka_unit_test(pending_work_is_never_dropped),
		cmocka_unit_test(remove_tree_basic),
		cmocka_unit_test(remove_tree_resumes_after_interruption),
		cmocka_unit_test(remove_tree_waits_for_busy_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
