/* replace and sweep: interrupted at every op and crashed at every sync, the
 * target is always the whole old or the whole new document, and a re-run
 * reaches the end state. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contract/contract.h"

static void replace_basic(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	assert_int_equal(kaas_sub_mkdir(s, "d", 0755), 0);
	assert_int_equal(kaas_replace(s, "d/doc", "one", 3), 0);
	assert_int_equal(kaas_replace(s, "d/doc", "two!", 4), 0);
	int rc;
	char *t = unit_get(s, "d/doc", &rc);
	assert_string_equal(t, "two!");
	free(t);
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(s, "d", &l), 0);
	assert_int_equal(l.n, 1); /* no temp left behind */
	kaas_dirlist_free(&l);
	assert_int_equal(kaas_replace(s, "missingdir/doc", "x", 1), -ENOENT);
	assert_int_equal(kaas_replace(s, "../doc", "x", 1), -EINVAL);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* Is the file exactly one of the two texts? */
static void assert_old_or_new(struct kaas_substrate *s, const char *path, const char *a, const char *b)
{
	int rc;
	char *t = unit_get(s, path, &rc);
	assert_int_equal(rc, 0);
	if (strcmp(t, a) != 0 && strcmp(t, b) != 0)
		fail_msg("%s holds '%s', neither '%s' nor '%s'", path, t, a, b);
	free(t);
}

static void replace_interrupted_at_every_op(void **state)
{
	/* replace is five ops: open temp, write, fsync, rename, fsync dir. */
	for (unsigned n = 1; n <= 5; n++) {
		char *dir;
		struct kaas_substrate *lower = unit_open_tmp(&dir);
		unit_put(lower, "doc", "old-version");
		struct kaas_substrate *s;
		struct kaas_crashsub_opts o = {.fail_op_at = n, .fail_errno = EIO};
		assert_int_equal(kaas_crashsub_wrap(lower, &o, &s), 0);
		int rc = kaas_replace(s, "doc", "new-version", 11);
		assert_int_equal(rc, -EIO); /* every op's failure is reported */
		assert_non_null(strstr(kaas_sub_errdetail(), "replace doc"));
		assert_old_or_new(s, "doc", "old-version", "new-version");
		/* Re-driven, it reaches the end state; then no temp remains. */
		assert_int_equal(kaas_replace(s, "doc", "final", 5), 0);
		assert_true(kaas_sweep_temps(s, "", KAAS_SWEEP_ALL) >= 0);
		struct kaas_dirlist l;
		assert_int_equal(kaas_sub_list(s, "", &l), 0);
		assert_int_equal(l.n, 1);
		assert_string_equal(l.names[0], "doc");
		kaas_dirlist_free(&l);
		kaas_substrate_close(s);
		kaas_testdir_remove(dir);
	}
}

static void replace_crashed_at_every_sync(void **state)
{
	for (unsigned mode = 0; mode < 3; mode++) {
		char *dir;
		struct kaas_substrate *lower = unit_open_tmp(&dir);
		unit_put(lower, "doc", "old-version");
		struct kaas_substrate *s;
		struct kaas_crashsub_opts o = {0};
		if (mode < 2)
			o.crash_at_fsync = mode + 1; /* the file fsync, then the directory fsync */
		else
			o.crash_at_rename = 1;
		assert_int_equal(kaas_crashsub_wrap(lower, &o, &s), 0);
		int rc = kaas_replace(s, "doc", "new-version", 11);
		assert_int_equal(rc, -EIO);
		assert_true(kaas_crashsub_crashed(s));
		kaas_substrate_close(s);
		/* A new incarnation on the same directory. */
		struct kaas_substrate *after;
		assert_int_equal(kaas_substrate_open(dir, &after), 0);
		assert_old_or_new(after, "doc", "old-version", "new-version");
		assert_true(kaas_sweep_temps(after, "", KAAS_SWEEP_ALL) >= 0);
		assert_int_equal(kaas_replace(after, "doc", "again", 5), 0);
		struct kaas_dirlist l;
		assert_int_equal(kaas_sub_list(after, "", &l), 0);
		assert_int_equal(l.n, 1);
		kaas_dirlist_free(&l);
		kaas_substrate_close(after);
		kaas_testdir_remove(dir);
	}
}

static pid_t dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

static void sweep_dead_local_spares_the_living(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	char name[256];
	pid_t dead = dead_pid();
	snprintf(name, sizeof name, ".tmp.doc.%s.%ld.0", s->host, (long)dead);
	unit_put(s, name, "dead");
	snprintf(name, sizeof name, ".tmp.doc.%s.%ld.1", s->host, (long)getppid());
	unit_put(s, name, "alive");
	snprintf(name, sizeof name, ".tmp.doc.%s.%ld.2", s->host, (long)getpid());
	unit_put(s, name, "me");
	snprintf(name, sizeof name, ".tmp.doc.otherhost.%ld.3", (long)dead);
	unit_put(s, name, "other host: cannot judge");
	unit_put(s, "doc", "the document");
	assert_int_equal(kaas_sweep_temps(s, "", KAAS_SWEEP_DEAD_LOCAL), 1);
	assert_int_equal(kaas_sweep_temps(s, "", KAAS_SWEEP_DEAD_LOCAL), 0); /* idempotent */
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(s, "", &l), 0);
	assert_int_equal(l.n, 4);
	kaas_dirlist_free(&l);
	/* The fenced single writer takes every temp, never the document. */
	assert_int_equal(kaas_sweep_temps(s, "", KAAS_SWEEP_ALL), 3);
	assert_int_equal(kaas_sub_list(s, "", &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.names[0], "doc");
	kaas_dirlist_free(&l);
	assert_true(kaas_is_temp_name(".tmp.x"));
	assert_false(kaas_is_temp_name("manifest.json"));
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replace_basic),
		cmocka_unit_test(replace_interrupted_at_every_op),
		cmocka_unit_test(replace_crashed_at_every_sync),
		cmocka_unit_test(sweep_dead_local_spares_the_living),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
