/*
 * test_model_nfs — the NFS client behaviours faultfs reproduces, through
 * the in-process front (`fault+` URLs; two instances over one lower
 * directory are two hosts of one volume): silly-rename, ESTALE across
 * hosts, close-to-open, the attribute cache and the negative lookup cache.
 * The fault-injection behaviours are in test_model.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "faultfs/model.h"
#include "faultfs/substrate.h"
#include "substrate/substrate.h"
#include "tests/faultfs/model_fx.h"

/* ---- silly-rename ---- */

/* d/f ("hello") created and opened on host a, then unlinked there while
 * held: the open handle. */
static struct kaas_file *open_then_unlink(struct fx *x)
{
	assert_int_equal(kaas_sub_mkdir(x->a, "d", 0755), 0);
	put(x->a, "d/f", "hello");
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(x->a, "d/f", KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_unlink(x->a, "d/f"), 0);
	return f;
}

/* The path of the one name in d as s lists it (malloc'd). */
static char *only_name_in_d(struct kaas_substrate *s)
{
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(s, "d", &l), 0);
	assert_int_equal(l.n, 1);
	char *path = kaas_path_join("d", l.names[0]);
	kaas_dirlist_free(&l);
	return path;
}

static void test_silly_rename_on_unlink(void **state)
{
	struct fx x;
	fx_open(&x, NULL);
	struct kaas_file *f = open_then_unlink(&x);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(x.lower, "d/f", &st), -ENOENT);
	assert_int_equal(count_silly(x.lower, "d"), 1);
	ssize_t rc;
	assert_string_equal(slurp_handle(f, &rc), "hello"); /* still readable */
	/* unlinking the .nfs name: EBUSY; rmdir: ENOTEMPTY */
	char *silly = only_name_in_d(x.a);
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
	struct kaas_file *f = open_then_unlink(&x);
	char *silly = only_name_in_d(x.b);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
