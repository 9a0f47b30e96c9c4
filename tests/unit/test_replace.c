/* replace and sweep: interrupted at every op and crashed at every sync, the
 * target is always the whole old or the whole new document, and a re-run
 * reaches the end state. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/sweep.h"
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

/* A private name of this process's kind for another writer: host, pid and
 * incarnation given (the current format). */
static void name_of(char *buf, size_t size, const char *prefix, const char *host, long pid,
		    uint64_t inc, unsigned seq)
{
	snprintf(buf, size, "%s%s.%ld.%016llx.%u", prefix, host, pid, (unsigned long long)inc, seq);
}

static void sweep_dead_local_spares_the_living(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	char name[256];
	pid_t dead = dead_pid();
	uint64_t other = kaas_incarnation() ^ 0x5a5a5a5a00000000ull;
	snprintf(name, sizeof name, ".tmp.doc.%s.%ld.0", s->host, (long)dead);
	unit_put(s, name, "dead (the format before incarnations)");
	snprintf(name, sizeof name, ".tmp.doc.%s.%ld.1", s->host, (long)getppid());
	unit_put(s, name, "alive");
	/* Our pid, but not us: an earlier life of a restarted container (PID 1
	 * in every container).  Both name formats. */
	snprintf(name, sizeof name, ".tmp.doc.%s.%ld.2", s->host, (long)getpid());
	unit_put(s, name, "earlier life, old format");
	name_of(name, sizeof name, ".tmp.doc.", s->host, (long)getpid(), other, 3);
	unit_put(s, name, "earlier life");
	name_of(name, sizeof name, KAAS_EXCL_PREFIX, s->host, (long)getpid(), other, 4);
	unit_put(s, name, "earlier life's exclusive-create link name");
	/* This very process: a live writer. */
	assert_int_equal(kaas_private_name(name, sizeof name, ".tmp.doc.", s->host), 0);
	unit_put(s, name, "me");
	snprintf(name, sizeof name, ".tmp.doc.otherhost.%ld.3", (long)dead);
	unit_put(s, name, "other host: cannot judge");
	unit_put(s, "doc", "the document");
	assert_int_equal(kaas_sweep_temps(s, "", KAAS_SWEEP_DEAD_LOCAL), 4);
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
	assert_true(kaas_is_excl_name(".kaas-excl.h.1.2"));
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* Private names: this process's incarnation, parsed back from the right
 * (a temp's target name may hold dots). */
static void private_names_parse(void **state)
{
	(void)state;
	char name[256], host[64];
	long pid;
	uint64_t inc;
	assert_int_equal(kaas_private_name(name, sizeof name, ".tmp.a.b.json.", "h-1"), 0);
	assert_int_equal(kaas_private_name_parse(name, ".tmp.", host, sizeof host, &pid, &inc), 0);
	assert_string_equal(host, "h-1");
	assert_int_equal(pid, (long)getpid());
	assert_true(inc == kaas_incarnation() && inc != 0);
	assert_int_equal(kaas_private_name_parse(".tmp.a.b.json.h-2.77.5", ".tmp.", host, sizeof host, &pid,
						 &inc), 0);
	assert_string_equal(host, "h-2");
	assert_int_equal(pid, 77);
	assert_true(inc == 0); /* the format before incarnations */
	assert_int_equal(kaas_private_name_parse("doc.json", ".tmp.", host, sizeof host, &pid, &inc), -EINVAL);
	assert_int_equal(kaas_private_name_parse(".tmp.doc", ".tmp.", host, sizeof host, &pid, &inc), -EINVAL);
	/* A forked child is another writer: another incarnation. */
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t p = fork();
	if (p == 0) {
		uint64_t c = kaas_incarnation();
		ssize_t w = write(fd[1], &c, sizeof c);
		_exit(w == (ssize_t)sizeof c ? 0 : 1);
	}
	uint64_t child = 0;
	assert_int_equal(read(fd[0], &child, sizeof child), (ssize_t)sizeof child);
	waitpid(p, NULL, 0);
	close(fd[0]);
	close(fd[1]);
	assert_true(child != 0 && child != kaas_incarnation());
}

/* kaas_sweep_stale: keyed by incarnation, decided by the caller's view. */
static uint64_t live_inc;
static int live_one(void *arg, uint64_t inc, const char *name)
{
	(void)name;
	(*(int *)arg)++;
	return inc == live_inc;
}

static void sweep_stale_by_incarnation(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	char name[256];
	live_inc = 0x1111222233334444ull;
	name_of(name, sizeof name, ".tmp.b.json.", "otherhost", 1, live_inc, 1);
	unit_put(s, name, "a live broker's temp (pid 1 elsewhere)");
	name_of(name, sizeof name, ".tmp.b.json.", "otherhost", 1, 0x9999ull, 2);
	unit_put(s, name, "a dead incarnation's temp, same pid");
	name_of(name, sizeof name, ".tmp.b.json.", s->host, (long)getpid(), 0x9999ull, 3);
	unit_put(s, name, "an earlier life of this container");
	name_of(name, sizeof name, KAAS_EXCL_PREFIX, "otherhost", 1, 0x9999ull, 4);
	unit_put(s, name, "a dead incarnation's link name");
	assert_int_equal(kaas_private_name(name, sizeof name, ".tmp.b.json.", s->host), 0);
	unit_put(s, name, "ours");
	unit_put(s, "b.json", "the document");
	int asked = 0;
	assert_int_equal(kaas_sweep_stale(s, "", live_one, &asked), 3);
	assert_int_equal(asked, 4); /* never asked about our own */
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(s, "", &l), 0);
	assert_int_equal(l.n, 3);
	kaas_dirlist_free(&l);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* The broker's sweeper: an unknown incarnation gets a grace period on the
 * sweeper's own clock; a broker it believes alive, and itself, are never
 * swept; every directory that holds temps is visited. */
static void sweeper_pass_dirs_and_grace(void **state)
{
	(void)state;
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_substrate *cluster = NULL, *data = s;
	assert_int_equal(kaas_sub_mkdirs(s, "__cluster/brokers", 0755), 0);
	assert_int_equal(kaas_sub_mkdirs(s, "__cluster/groups/g1", 0755), 0);
	assert_int_equal(kaas_sub_mkdirs(s, "__cluster/topics", 0755), 0);
	assert_int_equal(kaas_sub_mkdirs(s, "t1/0", 0755), 0);
	char *curl = kaas_path_join(dir, "__cluster");
	assert_int_equal(kaas_substrate_open(curl, &cluster), 0);
	free(curl);
	const char *dirs[] = { "__cluster/brokers", "__cluster/groups/g1", "__cluster/topics", "t1" };
	char name[256], path[512];
	for (size_t i = 0; i < 4; i++) {
		name_of(name, sizeof name, ".tmp.x.", s->host, (long)getpid(), 0x7777ull, (unsigned)i);
		snprintf(path, sizeof path, "%s/%s", dirs[i], name);
		unit_put(s, path, "dead");
		assert_int_equal(kaas_private_name(name, sizeof name, ".tmp.x.", s->host), 0);
		snprintf(path, sizeof path, "%s/%s", dirs[i], name);
		unit_put(s, path, "ours");
	}
	name_of(name, sizeof name, KAAS_EXCL_PREFIX, "h2", 1, 0x8888ull, 9);
	snprintf(path, sizeof path, "__cluster/groups/g1/%s", name);
	unit_put(s, path, "dead link name");
	/* A partition directory is its leader's to sweep (log open). */
	name_of(name, sizeof name, ".tmp.manifest.json.", "h2", 1, 0x8888ull, 10);
	snprintf(path, sizeof path, "t1/0/%s", name);
	unit_put(s, path, "the partition leader's business");
	struct kaas_sweeper sw = { .grace_ms = 1000 };
	assert_int_equal(kaas_sweeper_pass(&sw, NULL, cluster, data, 10000), 0); /* first sight */
	assert_int_equal(kaas_sweeper_pass(&sw, NULL, cluster, data, 10500), 0); /* within grace */
	assert_int_equal(kaas_sweeper_pass(&sw, NULL, cluster, data, 11000), 5);
	assert_int_equal(kaas_sweeper_pass(&sw, NULL, cluster, data, 20000), 0);
	for (size_t i = 0; i < 4; i++) {
		struct kaas_dirlist l;
		assert_int_equal(kaas_sub_list(s, dirs[i], &l), 0);
		size_t temps = 0;
		for (size_t k = 0; k < l.n; k++)
			temps += kaas_is_temp_name(l.names[k]) || kaas_is_excl_name(l.names[k]);
		assert_int_equal(temps, 1); /* ours */
		kaas_dirlist_free(&l);
	}
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(s, "t1/0", &l), 0);
	assert_int_equal(l.n, 1);
	kaas_dirlist_free(&l);
	/* Incarnations of live brokers are kept whatever their age. */
	live_inc = 0;
	assert_true(kaas_sweeper_live(&sw, 0x4242ull, "x") == 1); /* first sight */
	sw.now_ms += 5000;
	assert_true(kaas_sweeper_live(&sw, 0x4242ull, "x") == 0);
	uint64_t brokers[1] = { 0x4242ull };
	sw.live = brokers;
	sw.nlive = 1;
	assert_true(kaas_sweeper_live(&sw, 0x4242ull, "x") == 1);
	sw.live = NULL;
	sw.nlive = 0;
	kaas_sweeper_free(&sw);
	kaas_substrate_close(cluster);
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
		cmocka_unit_test(private_names_parse),
		cmocka_unit_test(sweep_stale_by_incarnation),
		cmocka_unit_test(sweeper_pass_dirs_and_grace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
