/*
 * test_model — every faultfs behaviour through the in-process front
 * (`fault+` URLs): two instances over one lower directory are two hosts of
 * one simulated volume.
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
#include "tests/support/testdir.h"

struct fx {
	char *dir;
	struct kaas_substrate *a, *b, *lower;
	struct kaas_fault_model *m;
};

static struct kaas_substrate *open_host(const char *dir, int host, const char *extra)
{
	char *url = NULL;
	assert_true(asprintf(&url, "fault+%s?seed=7&host=%d%s", dir, host, extra ? extra : "") > 0);
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open(url, &s);
	if (rc < 0)
		fprintf(stderr, "open %s: %s\n", url, kaas_sub_errdetail());
	assert_int_equal(rc, 0);
	free(url);
	return s;
}

static void fx_open(struct fx *x, const char *extra)
{
	memset(x, 0, sizeof *x);
	x->dir = kaas_testdir_make("faultfs");
	x->a = open_host(x->dir, 0, extra);
	x->b = open_host(x->dir, 1, extra);
	x->m = kaas_fault_substrate_model(x->a);
	assert_non_null(x->m);
	assert_ptr_equal(x->m, kaas_fault_substrate_model(x->b)); /* one shared model */
	assert_int_equal(kaas_substrate_open(x->dir, &x->lower), 0);
}

static void fx_close(struct fx *x)
{
	kaas_substrate_close(x->a);
	kaas_substrate_close(x->b);
	kaas_substrate_close(x->lower);
	kaas_testdir_remove(x->dir);
}

static void put(struct kaas_substrate *s, const char *path, const char *text)
{
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, text, strlen(text), 0), 0);
	assert_int_equal(kaas_sub_close(f), 0);
}

/* Read all of a handle as a string. */
static char *slurp_handle(struct kaas_file *f, ssize_t *rc)
{
	static char buf[65536];
	*rc = kaas_sub_pread_full(f, buf, sizeof buf - 1, 0);
	if (*rc < 0)
		return NULL;
	buf[*rc] = '\0';
	return buf;
}

static char *get(struct kaas_substrate *s, const char *path)
{
	char *buf;
	size_t len;
	int rc = kaas_sub_read_all(s, path, 1 << 20, &buf, &len);
	return rc == 0 ? buf : NULL;
}

static int count_silly(struct kaas_substrate *lower, const char *dir)
{
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(lower, dir, &l), 0);
	int n = 0;
	for (size_t i = 0; i < l.n; i++)
		n += !strncmp(l.names[i], ".nfs", 4) && strlen(l.names[i]) == 4 + 16 + 8;
	kaas_dirlist_free(&l);
	return n;
}

static char *ctl(struct kaas_fault_model *m, const char *cmd)
{
	char *reply = NULL;
	int rc = kaas_fault_ctl(m, cmd, &reply);
	if (rc < 0)
		fprintf(stderr, "ctl %s -> %s\n", cmd, reply);
	assert_int_equal(rc, 0);
	return reply;
}

static void set_rule(struct kaas_fault_model *m, const char *rule)
{
	char *cmd = NULL;
	assert_true(asprintf(&cmd, "{\"cmd\":\"set\",\"rule\":%s}", rule) > 0);
	free(ctl(m, cmd));
	free(cmd);
}

/* ---- silly-rename ---- */

static void test_silly_rename_on_unlink(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	assert_int_equal(kaas_sub_mkdir(x.a, "d", 0755), 0);
	put(x.a, "d/f", "hello");
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(x.a, "d/f", KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_unlink(x.a, "d/f"), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(x.lower, "d/f", &st), -ENOENT);
	assert_int_equal(count_silly(x.lower, "d"), 1);
	ssize_t rc;
	assert_string_equal(slurp_handle(f, &rc), "hello"); /* still readable */
	/* unlinking the .nfs name: EBUSY; rmdir: ENOTEMPTY */
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(x.a, "d", &l), 0);
	assert_int_equal(l.n, 1);
	char *silly = kaas_path_join("d", l.names[0]);
	kaas_dirlist_free(&l);
	assert_int_equal(kaas_sub_unlink(x.a, silly), -EBUSY);
	assert_int_equal(kaas_sub_rmdir(x.b, "d"), -ENOTEMPTY);
	free(silly);
	/* the last close removes it */
	assert_int_equal(kaas_sub_close(f), 0);
	assert_int_equal(count_silly(x.lower, "d"), 0);
	assert_int_equal(kaas_sub_rmdir(x.b, "d"), 0);
	fx_close(&x);
}

/* Only the holding client refuses to unlink a .nfs name (EBUSY); on
 * another client it is a plain remove on the server (the lab: a broker on
 * another mount finishing a delete removed a held silly file), and the
 * holder's handle goes stale. */
static void test_silly_unlinked_by_other_host(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	assert_int_equal(kaas_sub_mkdir(x.a, "d", 0755), 0);
	put(x.a, "d/f", "hello");
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(x.a, "d/f", KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_unlink(x.a, "d/f"), 0);
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(x.b, "d", &l), 0);
	assert_int_equal(l.n, 1);
	char *silly = kaas_path_join("d", l.names[0]);
	kaas_dirlist_free(&l);
	assert_int_equal(kaas_sub_unlink(x.a, silly), -EBUSY);
	assert_int_equal(kaas_sub_unlink(x.b, silly), 0);
	assert_int_equal(count_silly(x.lower, "d"), 0);
	char buf[8];
	assert_int_equal(kaas_sub_pread(f, buf, sizeof buf, 0), -ESTALE);
	(void)kaas_sub_close(f);
	assert_int_equal(count_silly(x.lower, "d"), 0);
	assert_int_equal(kaas_sub_rmdir(x.a, "d"), 0);
	free(silly);
	fx_close(&x);
}

static void test_silly_rename_on_rename_over(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	put(x.a, "t", "old");
	put(x.a, "n", "new");
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(x.a, "t", KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_rename(x.a, "n", "t"), 0);
	assert_int_equal(count_silly(x.lower, ""), 1);
	ssize_t rc;
	assert_string_equal(slurp_handle(f, &rc), "old");
	char *s = get(x.b, "t");
	assert_string_equal(s, "new");
	free(s);
	assert_int_equal(kaas_sub_close(f), 0);
	assert_int_equal(count_silly(x.lower, ""), 0);
	fx_close(&x);
}

/* ---- ESTALE ---- */

static void test_estale_other_host(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	put(x.a, "f", "data");
	struct kaas_file *fb;
	assert_int_equal(kaas_sub_open(x.b, "f", KAAS_O_READ | KAAS_O_WRITE, 0, &fb), 0);
	assert_int_equal(kaas_sub_unlink(x.a, "f"), 0); /* a has no handle: really removed */
	assert_int_equal(count_silly(x.lower, ""), 0);
	char buf[8];
	assert_int_equal(kaas_sub_pread(fb, buf, sizeof buf, 0), -ESTALE);
	assert_int_equal(kaas_sub_pwrite(fb, "x", 1, 0), -ESTALE);
	kaas_sub_close(fb);
	/* replaced by rename on another host: stale too */
	put(x.a, "g", "one");
	put(x.a, "g2", "two");
	assert_int_equal(kaas_sub_open(x.b, "g", KAAS_O_READ, 0, &fb), 0);
	assert_int_equal(kaas_sub_rename(x.a, "g2", "g"), 0);
	assert_int_equal(kaas_sub_pread(fb, buf, sizeof buf, 0), -ESTALE);
	kaas_sub_close(fb);
	/* a silly-renamed file stays readable by other hosts until its last close */
	struct kaas_file *fa;
	assert_int_equal(kaas_sub_open(x.a, "g", KAAS_O_READ, 0, &fa), 0);
	assert_int_equal(kaas_sub_open(x.b, "g", KAAS_O_READ, 0, &fb), 0);
	assert_int_equal(kaas_sub_unlink(x.a, "g"), 0);
	assert_int_equal(kaas_sub_pread(fb, buf, 3, 0), 3);
	assert_int_equal(kaas_sub_close(fa), 0);
	assert_int_equal(kaas_sub_pread(fb, buf, 3, 0), -ESTALE);
	kaas_sub_close(fb);
	fx_close(&x);
}

/* ---- close-to-open ---- */

static void test_close_to_open(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	struct kaas_substrate *c = open_host(x.dir, 2, NULL);
	put(x.a, "f", "v1");
	struct kaas_file *early, *w;
	assert_int_equal(kaas_sub_open(x.b, "f", KAAS_O_READ, 0, &early), 0);
	assert_int_equal(kaas_sub_open(x.a, "f", KAAS_O_WRITE, 0, &w), 0);
	assert_int_equal(kaas_sub_pwrite_full(w, "version-two", 11, 0), 0);
	/* not published yet: another host's new open sees v1 */
	char *s = get(c, "f");
	assert_string_equal(s, "v1");
	free(s);
	/* the writing host sees its own write, and a reader's close there
	 * publishes nothing */
	s = get(x.a, "f");
	assert_string_equal(s, "version-two");
	free(s);
	s = get(c, "f");
	assert_string_equal(s, "v1");
	free(s);
	assert_int_equal(kaas_sub_close(w), 0); /* published */
	s = get(c, "f");
	assert_string_equal(s, "version-two");
	free(s);
	/* the earlier opener (host b, which has not re-opened since) keeps
	 * what it saw at open; a re-open on host b would revalidate */
	ssize_t rc;
	assert_string_equal(slurp_handle(early, &rc), "v1");
	struct kaas_stat st;
	assert_int_equal(kaas_sub_fstat(early, &st), 0);
	assert_int_equal(st.size, 2);
	kaas_sub_close(early);
	/* fsync publishes too (without close) */
	assert_int_equal(kaas_sub_open(x.a, "f", KAAS_O_WRITE, 0, &w), 0);
	assert_int_equal(kaas_sub_pwrite_full(w, "VERSION", 7, 0), 0);
	assert_int_equal(kaas_sub_fsync(w), 0);
	s = get(x.b, "f");
	assert_string_equal(s, "VERSION-two");
	free(s);
	kaas_sub_close(w);
	kaas_substrate_close(c);
	fx_close(&x);
}

static void test_attr_cache_stale(void **state)
{
	struct fx x;
	fx_open(&x, "&attr_timeout_ms=300");
	put(x.a, "f", "ab");
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(x.b, "f", &st), 0);
	assert_int_equal(st.size, 2);
	put(x.a, "f", "abcdef");
	assert_int_equal(kaas_sub_stat(x.b, "f", &st), 0);
	assert_int_equal(st.size, 2); /* stale, from host b's attribute cache */
	assert_int_equal(kaas_sub_stat(x.a, "f", &st), 0);
	assert_int_equal(st.size, 6); /* the writer knows */
	/* an open revalidates (close-to-open) */
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(x.b, "f", KAAS_O_READ, 0, &f), 0);
	kaas_sub_close(f);
	assert_int_equal(kaas_sub_stat(x.b, "f", &st), 0);
	assert_int_equal(st.size, 6);
	/* and the cache expires */
	put(x.a, "f", "abcdefghij");
	for (int i = 0; i < 100 && st.size != 10; i++) {
		usleep(20000);
		assert_int_equal(kaas_sub_stat(x.b, "f", &st), 0);
	}
	assert_int_equal(st.size, 10);
	fx_close(&x);
}

/* The negative lookup cache (what the lab saw the Linux NFS client do with
 * default mount options): host b looked "n" up and found it missing; host
 * a creates it; b's open and stat keep failing with ENOENT until the entry
 * times out, b lists or opens the directory, or b creates the name. */
static void test_negative_lookup_cache(void **state)
{
	struct fx x;
	fx_open(&x, "&neg_timeout_ms=400");
	struct kaas_stat st;
	struct kaas_file *f;
	assert_int_equal(kaas_sub_mkdir(x.a, "d", 0755), 0);
	assert_int_equal(kaas_sub_stat(x.b, "d/n", &st), -ENOENT);
	put(x.a, "d/n", "new");
	assert_int_equal(kaas_sub_stat(x.a, "d/n", &st), 0); /* the creator sees it */
	assert_int_equal(kaas_sub_stat(x.b, "d/n", &st), -ENOENT);
	assert_int_equal(kaas_sub_open(x.b, "d/n", KAAS_O_READ, 0, &f), -ENOENT);
	assert_int_equal(kaas_sub_unlink(x.b, "d/n"), -ENOENT);
	/* an exclusive create asks the server: EEXIST, and the name is known */
	assert_int_equal(kaas_sub_open(x.b, "d/n", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f),
			 -EEXIST);
	assert_int_equal(kaas_sub_stat(x.b, "d/n", &st), 0);

	/* a listing of the directory revalidates it */
	assert_int_equal(kaas_sub_stat(x.b, "d/m", &st), -ENOENT);
	put(x.a, "d/m", "m");
	assert_int_equal(kaas_sub_open(x.b, "d/m", KAAS_O_READ, 0, &f), -ENOENT);
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(x.b, "d", &l), 0);
	assert_int_equal(l.n, 2); /* listed at once */
	kaas_dirlist_free(&l);
	assert_int_equal(kaas_sub_open(x.b, "d/m", KAAS_O_READ, 0, &f), 0);
	kaas_sub_close(f);

	/* so does an open of the directory */
	assert_int_equal(kaas_sub_open(x.b, "d/o", KAAS_O_READ, 0, &f), -ENOENT);
	put(x.a, "d/o", "o");
	assert_int_equal(kaas_sub_stat(x.b, "d/o", &st), -ENOENT);
	assert_int_equal(kaas_sub_open(x.b, "d", KAAS_O_READ | KAAS_O_DIRECTORY, 0, &f), 0);
	kaas_sub_close(f);
	assert_int_equal(kaas_sub_stat(x.b, "d/o", &st), 0);

	/* a missing parent hides what is made under it; b's own unlink leaves
	 * the name missing to b */
	assert_int_equal(kaas_sub_stat(x.b, "e/f", &st), -ENOENT);
	assert_int_equal(kaas_sub_mkdir(x.a, "e", 0755), 0);
	put(x.a, "e/f", "f");
	assert_int_equal(kaas_sub_stat(x.b, "e", &st), -ENOENT);
	assert_int_equal(kaas_sub_stat(x.b, "e/f", &st), -ENOENT);
	assert_int_equal(kaas_sub_open(x.b, "e/g", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), -ENOENT);
	assert_int_equal(kaas_sub_unlink(x.b, "d/n"), 0);
	put(x.a, "d/n", "again");
	assert_int_equal(kaas_sub_stat(x.b, "d/n", &st), -ENOENT);

	/* and every entry times out (d/n's, the younger, last) */
	int rc = -ENOENT;
	for (int i = 0; i < 100 && rc == -ENOENT; i++) {
		usleep(20000);
		rc = kaas_sub_stat(x.b, "d/n", &st);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(kaas_sub_stat(x.b, "e/f", &st), 0);

	/* off (0): no entry at all, through ctl config */
	char *reply = NULL;
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"config\",\"config\":{\"neg_timeout_ms\":0}}", &reply), 0);
	free(reply);
	assert_int_equal(kaas_sub_stat(x.b, "d/p", &st), -ENOENT);
	put(x.a, "d/p", "p");
	assert_int_equal(kaas_sub_stat(x.b, "d/p", &st), 0);
	fx_close(&x);
}

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
		cmocka_unit_test(test_silly_rename_on_unlink),
		cmocka_unit_test(test_silly_unlinked_by_other_host),
		cmocka_unit_test(test_silly_rename_on_rename_over),
		cmocka_unit_test(test_estale_other_host),
		cmocka_unit_test(test_close_to_open),
		cmocka_unit_test(test_attr_cache_stale),
		cmocka_unit_test(test_negative_lookup_cache),
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
