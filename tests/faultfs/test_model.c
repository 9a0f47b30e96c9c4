/*
 * test_model — the fault-injection behaviours of faultfs through the
 * in-process front (`fault+` URLs): torn flushes, interrupted deletes,
 * crashes, error rules and the control channel, the behaviour switches,
 * seed determinism.  Two instances over one lower directory are two hosts
 * of one simulated volume; the NFS client behaviours are in test_model_nfs.c.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract/contract.h"
#include "faultfs/model.h"
#include "faultfs/substrate.h"
#include "substrate/substrate.h"
#include "tests/faultfs/model_fx.h"
#include "tests/support/testdir.h"

/* ---- torn publication ---- */

static void test_torn_flush_loses_rest(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	set_rule(x.m, "{\"op\":\"fsync\",\"path\":\"f\",\"fault\":\"torn\",\"times\":1}");
	struct kaas_file *w;
	char data[4096];
	memset(data, 'z', sizeof data);
	assert_int_equal(kaas_sub_open(x.a, "f", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &w), 0);
	assert_int_equal(kaas_sub_pwrite_full(w, data, sizeof data, 0), 0);
	assert_int_equal(kaas_sub_fsync(w), -EIO);
	kaas_sub_close(w);
	struct kaas_file *r;
	assert_int_equal(kaas_sub_open(x.b, "f", KAAS_O_READ, 0, &r), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_fstat(r, &st), 0);
	assert_true(st.size > 0 && st.size < sizeof data); /* a prefix */
	kaas_sub_close(r);
	fx_close(&x);
}

struct torn_arg {
	struct kaas_substrate *sub;
	int rc;
};

static void *torn_writer(void *p)
{
	struct torn_arg *t = p;
	struct kaas_file *w;
	char data[8192];
	memset(data, 'q', sizeof data);
	t->rc = kaas_sub_open(t->sub, "f", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &w);
	if (t->rc == 0) {
		t->rc = kaas_sub_pwrite_full(w, data, sizeof data, 0);
		if (t->rc == 0)
			t->rc = kaas_sub_fsync(w);
		kaas_sub_close(w);
	}
	return NULL;
}

static void test_torn_flush_concurrent_opener(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	set_rule(x.m, "{\"op\":\"fsync\",\"fault\":\"torn\",\"delay_ms\":1500,\"times\":1}");
	struct torn_arg t = { x.a, -1 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, torn_writer, &t), 0);
	/* wait (bounded) until the prefix is out, then look from host b */
	struct kaas_stat st = { 0 };
	for (int i = 0; i < 1000 && !(kaas_sub_stat(x.lower, "f", &st) == 0 && st.size > 0); i++)
		usleep(5000);
	struct kaas_file *r;
	assert_int_equal(kaas_sub_open(x.b, "f", KAAS_O_READ, 0, &r), 0);
	assert_int_equal(kaas_sub_fstat(r, &st), 0);
	assert_true(st.size > 0 && st.size < 8192); /* the concurrent opener saw a prefix */
	kaas_sub_close(r);
	pthread_join(th, NULL);
	assert_int_equal(t.rc, 0); /* the torn flush itself completed */
	assert_int_equal(kaas_sub_stat(x.lower, "f", &st), 0);
	assert_int_equal(st.size, 8192);
	fx_close(&x);
}

/* ---- interrupted recursive delete ---- */

static void make_tree(struct kaas_substrate *s)
{
	assert_int_equal(kaas_sub_mkdirs(s, "tree/a/b", 0755), 0);
	for (int i = 0; i < 5; i++) {
		char p[64];
		snprintf(p, sizeof p, "tree/a/f%d", i);
		put(s, p, "x");
		snprintf(p, sizeof p, "tree/a/b/g%d", i);
		put(s, p, "y");
	}
}

static void test_interrupted_delete_eio(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	make_tree(x.a);
	set_rule(x.m, "{\"op\":\"unlink,rmdir\",\"path\":\"tree/*\",\"after\":4,\"fault\":\"EIO\"}");
	assert_true(kaas_remove_tree_step(x.a, "tree") < 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(x.lower, "tree", &st), 0); /* half done */
	free(ctl(x.m, "{\"cmd\":\"clear\"}"));
	assert_int_equal(kaas_remove_tree(x.a, "tree", NULL), 0); /* re-driven to the end */
	assert_int_equal(kaas_sub_stat(x.lower, "tree", &st), -ENOENT);
	fx_close(&x);
}

static void test_interrupted_delete_kill(void **state)
{
	char *dir = kaas_testdir_make("faultfs");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct kaas_substrate *s = open_host(dir, 0, NULL);
		make_tree(s);
		set_rule(kaas_fault_substrate_model(s),
			 "{\"op\":\"unlink\",\"path\":\"tree/*\",\"after\":3,\"fault\":\"kill\"}");
		kaas_remove_tree_step(s, "tree");
		_exit(0); /* not reached */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	struct kaas_substrate *s = open_host(dir, 0, NULL);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(s, "tree", &st), 0);
	assert_int_equal(kaas_remove_tree(s, "tree", NULL), 0);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* ---- host crash ---- */

static void test_crash(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	put(x.a, "kept", "published");
	struct kaas_file *w, *h;
	assert_int_equal(kaas_sub_open(x.a, "lost", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &w), 0);
	assert_int_equal(kaas_sub_pwrite_full(w, "unpublished", 11, 0), 0);
	assert_int_equal(kaas_sub_open(x.a, "held", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &h), 0);
	assert_int_equal(kaas_sub_unlink(x.a, "held"), 0); /* silly-renamed */
	assert_int_equal(kaas_fault_crash(x.m, 0), 0);
	char buf[4];
	assert_int_equal(kaas_sub_pread(w, buf, 4, 0), -EIO);
	assert_int_equal(kaas_sub_close(w), -EIO);
	kaas_sub_close(h);
	char *s = get(x.b, "lost");
	assert_non_null(s);
	assert_string_equal(s, ""); /* the data never reached the volume */
	free(s);
	s = get(x.b, "kept");
	assert_string_equal(s, "published");
	free(s);
	assert_int_equal(count_silly(x.lower, ""), 1); /* left behind */
	char *reply = ctl(x.m, "{\"cmd\":\"dump\"}");
	assert_non_null(strstr(reply, "leftovers"));
	assert_non_null(strstr(reply, ".nfs"));
	free(reply);
	assert_int_equal(kaas_fault_heal(x.m, 0), 1);
	assert_int_equal(count_silly(x.lower, ""), 0);
	/* the host works again after the crash */
	put(x.a, "after", "ok");
	fx_close(&x);
}

/* ---- errors and latency by rule ---- */

static void test_error_rules(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	set_rule(x.m, "{\"op\":\"write\",\"path\":\"*.log\",\"fault\":\"ENOSPC\"}");
	set_rule(x.m, "{\"op\":\"create\",\"path\":\"q*\",\"host\":1,\"fault\":\"EDQUOT\"}");
	set_rule(x.m, "{\"op\":\"read\",\"path\":\"r\",\"after\":2,\"times\":1,\"fault\":\"EIO\"}");
	set_rule(x.m, "{\"op\":\"stat\",\"path\":\"s\",\"fault\":\"ESTALE\",\"times\":2}");
	set_rule(x.m, "{\"op\":\"mkdir\",\"fault\":\"delay\",\"delay_ms\":10}");
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(x.a, "a.log", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite(f, "x", 1, 0), -ENOSPC);
	kaas_sub_close(f);
	assert_int_equal(kaas_sub_open(x.b, "q1", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), -EDQUOT);
	assert_int_equal(kaas_sub_open(x.a, "q1", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), 0); /* host 0 */
	kaas_sub_close(f);
	put(x.a, "r", "abc");
	assert_int_equal(kaas_sub_open(x.a, "r", KAAS_O_READ, 0, &f), 0);
	char b[3];
	assert_int_equal(kaas_sub_pread(f, b, 3, 0), 3);   /* 1st */
	assert_int_equal(kaas_sub_pread(f, b, 3, 0), 3);   /* 2nd */
	assert_int_equal(kaas_sub_pread(f, b, 3, 0), -EIO); /* the countdown */
	assert_int_equal(kaas_sub_pread(f, b, 3, 0), 3);   /* once only */
	kaas_sub_close(f);
	struct kaas_stat st;
	put(x.a, "s", "1");
	assert_int_equal(kaas_sub_stat(x.a, "s", &st), -ESTALE);
	assert_int_equal(kaas_sub_stat(x.a, "s", &st), -ESTALE);
	assert_int_equal(kaas_sub_stat(x.a, "s", &st), 0); /* for N ops */
	assert_int_equal(kaas_sub_mkdir(x.a, "slow", 0755), 0);
	char *reply = ctl(x.m, "{\"cmd\":\"counters\"}");
	assert_non_null(strstr(reply, "\"faults\""));
	free(reply);
	reply = ctl(x.m, "{\"cmd\":\"dump\"}");
	assert_non_null(strstr(reply, "\"fault\":\"delay\""));
	assert_non_null(strstr(reply, "\"fault\":\"EDQUOT\""));
	free(reply);
	fx_close(&x);
}

static void test_ctl_and_config_errors(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	char *reply = NULL;
	assert_int_equal(kaas_fault_ctl(x.m, "not json", &reply), -EINVAL);
	assert_non_null(strstr(reply, "\"ok\":false"));
	free(reply);
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"set\",\"rule\":{\"op\":\"wrte\",\"fault\":\"EIO\"}}", &reply), -EINVAL);
	assert_non_null(strstr(reply, "op"));
	free(reply);
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"set\",\"rule\":{\"fault\":\"EWHAT\"}}", &reply), -EINVAL);
	free(reply);
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"crash\",\"host\":99}", &reply), -EINVAL);
	free(reply);
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"fly\"}", &reply), -EINVAL);
	assert_non_null(strstr(reply, "unknown command"));
	free(reply);
	assert_int_equal(kaas_fault_configure(x.m, "{\"colour\":1}"), -EINVAL);
	assert_non_null(strstr(kaas_sub_errdetail(), "colour"));
	/* set, then clear by id */
	reply = ctl(x.m, "{\"cmd\":\"set\",\"rule\":{\"op\":\"unlink\",\"fault\":\"EIO\"}}");
	assert_non_null(strstr(reply, "\"id\":1"));
	free(reply);
	put(x.a, "u", "1");
	assert_int_equal(kaas_sub_unlink(x.a, "u"), -EIO);
	free(ctl(x.m, "{\"cmd\":\"clear\",\"id\":1}"));
	assert_int_equal(kaas_sub_unlink(x.a, "u"), 0);
	/* bad URLs are named */
	struct kaas_substrate *s;
	assert_int_equal(kaas_substrate_open("fault+", &s), -EINVAL);
	char *url = NULL;
	assert_true(asprintf(&url, "fault+%s?host=77", x.dir) > 0);
	assert_int_equal(kaas_substrate_open(url, &s), -EINVAL);
	assert_non_null(strstr(kaas_sub_errdetail(), "host"));
	free(url);
	fx_close(&x);
}

/* ---- disqualified switches ---- */

static void test_switch_fsync_lies(void **state)
{
	struct fx x;
	fx_open(&x, "&fsync_lies=1");
	struct kaas_file *w;
	assert_int_equal(kaas_sub_open(x.a, "f", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &w), 0);
	assert_int_equal(kaas_sub_pwrite_full(w, "acked", 5, 0), 0);
	assert_int_equal(kaas_sub_fsync(w), 0); /* the lie */
	char *s = get(x.b, "f");
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(kaas_fault_crash(x.m, 0), 0); /* ... and the crash discards it */
	kaas_sub_close(w);
	s = get(x.b, "f");
	assert_string_equal(s, "");
	free(s);
	fx_close(&x);
}

static void test_switch_rename_copy(void **state)
{
	struct fx x;
	fx_open(&x, "&rename_copy=1");
	put(x.a, "src", "payload");
	put(x.a, "dst", "previous");
	assert_int_equal(kaas_sub_rename(x.a, "src", "dst"), 0);
	char *s = get(x.b, "dst");
	assert_string_equal(s, "payload");
	free(s);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(x.lower, "src", &st), -ENOENT);
	assert_int_equal(kaas_fault_configure(x.m, "{\"rename_copy\":false}"), 0);
	fx_close(&x);
}

static int count_cb(void *arg, const char *name, enum kaas_file_type type)
{
	(void)name;
	(void)type;
	++*(int *)arg;
	return 0;
}

static void test_switch_excl_race(void **state)
{
	struct fx x;
	fx_open(&x, "&excl_race=1");
	struct kaas_file *f1, *f2;
	kaas_fault_set_caller(1001); /* two racing processes */
	assert_int_equal(kaas_sub_open(x.a, "claim", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f1), 0);
	kaas_fault_set_caller(1002);
	assert_int_equal(kaas_sub_open(x.b, "claim", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f2), 0);
	/* inside the window, another process's listing misses the name, its
	 * own does not */
	assert_int_equal(kaas_sub_mkdirs(x.a, "d", 0755), 0);
	kaas_fault_set_caller(1001);
	struct kaas_file *f3;
	assert_int_equal(kaas_sub_open(x.a, "d/block-1", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f3), 0);
	kaas_sub_close(f3);
	int n = 0;
	assert_int_equal(kaas_sub_readdir(x.a, "d", count_cb, &n), 0);
	assert_int_equal(n, 1);
	kaas_fault_set_caller(1002);
	n = 0;
	assert_int_equal(kaas_sub_readdir(x.b, "d", count_cb, &n), 0);
	assert_int_equal(n, 0);
	kaas_fault_set_caller(0);
	kaas_sub_close(f1);
	kaas_sub_close(f2);
	/* without the switch, exactly one wins */
	assert_int_equal(kaas_fault_configure(x.m, "{\"excl_race\":false}"), 0);
	assert_int_equal(kaas_sub_open(x.a, "c2", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f1), 0);
	assert_int_equal(kaas_sub_open(x.b, "c2", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f2), -EEXIST);
	kaas_sub_close(f1);
	fx_close(&x);
}

/* ---- seed determinism ---- */

static char *workload_log(uint64_t seed)
{
	char *dir = kaas_testdir_make("faultfs");
	char *log = NULL, *url = NULL;
	assert_true(asprintf(&log, "%s.events", dir) > 0);
	assert_true(asprintf(&url, "fault+%s?seed=%llu&host=0&log=%s", dir, (unsigned long long)seed, log) > 0);
	struct kaas_substrate *s;
	assert_int_equal(kaas_substrate_open(url, &s), 0);
	struct kaas_fault_model *m = kaas_fault_substrate_model(s);
	set_rule(m, "{\"op\":\"write,read,stat\",\"prob\":0.3,\"fault\":\"EIO\"}");
	set_rule(m, "{\"op\":\"create\",\"prob\":0.2,\"fault\":\"ENOSPC\"}");
	for (int i = 0; i < 200; i++) {
		char p[32];
		snprintf(p, sizeof p, "f%d", i % 17);
		struct kaas_file *f;
		if (kaas_sub_open(s, p, KAAS_O_READ | KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f) == 0) {
			char b[4];
			kaas_sub_pwrite(f, "abcd", 4, 0);
			kaas_sub_pread(f, b, 4, 0);
			kaas_sub_close(f);
		}
		struct kaas_stat st;
		kaas_sub_stat(s, p, &st);
	}
	kaas_substrate_close(s); /* closes the log */
	char *text = NULL;
	size_t len;
	struct kaas_substrate *root;
	assert_int_equal(kaas_substrate_open("/", &root), 0);
	assert_int_equal(kaas_sub_read_all(root, log + 1, 1 << 24, &text, &len), 0);
	kaas_sub_unlink(root, log + 1);
	kaas_substrate_close(root);
	free(url);
	free(log);
	kaas_testdir_remove(dir);
	return text;
}

static void test_seed_determinism(void **state)
{
	char *a = workload_log(42), *b = workload_log(42), *c = workload_log(43);
	assert_true(strlen(a) > 100);
	assert_string_equal(a, b);
	assert_true(strcmp(a, c) != 0);
	assert_non_null(strstr(a, "\"seq\":1,\"host\":0,\"op\":"));
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_flush_loses_rest),
		cmocka_unit_test(test_torn_flush_concurrent_opener),
		cmocka_unit_test(test_interrupted_delete_eio),
		cmocka_unit_test(test_interrupted_delete_kill),
		cmocka_unit_test(test_crash),
		cmocka_unit_test(test_error_rules),
		cmocka_unit_test(test_ctl_and_config_errors),
		cmocka_unit_test(test_switch_fsync_lies),
		cmocka_unit_test(test_switch_rename_copy),
		cmocka_unit_test(test_switch_excl_race),
		cmocka_unit_test(test_seed_determinism),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
