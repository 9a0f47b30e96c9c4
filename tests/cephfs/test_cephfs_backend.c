/*
 * test_cephfs_backend — the libcephfs backend against a lab cluster
 * (scripts/ceph-lab, started by tests/cephfs/cephfs.sh): what CephFS gives
 * beyond the conformance suite, and what it does to a client it evicts.
 *
 * Environment (set by the wrapper):
 *   KAAS_CEPHFS_URL_A, KAAS_CEPHFS_URL_B  one directory, as two clients
 *   KAAS_CEPHFS_URL_E   the same directory as a third client, which the
 *                       eviction test evicts (it is dead after it)
 *   KAAS_CEPHFS_EVICT_E a shell command that evicts client E
 *   KAAS_CEPHFS_BADKEY  the directory's URL with a keyring of another
 *                       cluster's key (authentication must fail)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "substrate/substrate.h"

static const char *url_a, *url_b, *url_e, *evict_e, *badkey;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct kaas_substrate *open_sub(const char *u)
{
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open(u, &s);
	if (rc < 0)
		print_error("open %s: %s\n", u, kaas_sub_errdetail());
	assert_int_equal(rc, 0);
	return s;
}

static void fill(char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

static void put(struct kaas_substrate *s, const char *path, const char *buf, size_t len)
{
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, buf, len, 0), 0);
	assert_int_equal(kaas_sub_fsync(f), 0);
	assert_int_equal(kaas_sub_close(f), 0);
}

/* Every errno the substrate header promises, from libcephfs. */
static void error_codes(void **state)
{
	struct kaas_substrate *a = open_sub(url_a);
	struct kaas_file *f;
	struct kaas_stat st;
	assert_int_equal(kaas_sub_mkdir(a, "err", 0755), 0);
	assert_int_equal(kaas_sub_mkdir(a, "err", 0755), -EEXIST);
	assert_int_equal(kaas_sub_open(a, "err/none", KAAS_O_READ, 0, &f), -ENOENT);
	assert_int_equal(kaas_sub_stat(a, "err/none", &st), -ENOENT);
	assert_int_equal(kaas_sub_open(a, "err", KAAS_O_WRITE, 0, &f), -EISDIR);
	assert_int_equal(kaas_sub_open(a, "err", KAAS_O_READ, 0, &f), -EISDIR);
	assert_int_equal(kaas_sub_open(a, "err", KAAS_O_READ | KAAS_O_DIRECTORY, 0, &f), 0);
	assert_int_equal(kaas_sub_close(f), 0);
	put(a, "err/x", "x", 1);
	assert_int_equal(kaas_sub_open(a, "err/x", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f), -EEXIST);
	assert_int_equal(kaas_sub_open(a, "err/x/y", KAAS_O_READ, 0, &f), -ENOTDIR);
	assert_int_equal(kaas_sub_rmdir(a, "err"), -ENOTEMPTY);
	int rc = kaas_sub_unlink(a, "err/..x");
	assert_int_equal(rc, -ENOENT);
	rc = kaas_sub_unlink(a, "err");
	if (rc != -EISDIR)
		fail_msg("unlink of a directory: %d (%s), expected -EISDIR", rc, kaas_sub_errdetail());
	assert_int_equal(kaas_sub_rename(a, "err/none", "err/y"), -ENOENT);
	assert_int_equal(kaas_sub_unlink(a, "err/x"), 0);
	assert_int_equal(kaas_sub_rmdir(a, "err"), 0);
	assert_int_equal(kaas_sub_rmdir(a, "err"), -ENOENT);
	struct kaas_statfs sf;
	assert_int_equal(kaas_sub_statfs(a, "", &sf), 0);
	assert_true(sf.total_bytes > 0 && sf.free_bytes > 0);
	kaas_substrate_close(a);
}

/* Large gathered writes (pwritev) and reads through another client. */
static void big_io_across_clients(void **state)
{
	struct kaas_substrate *a = open_sub(url_a), *b = open_sub(url_b);
	enum { N = 5 * 1024 * 1024 + 17 };
	char *w = malloc(N), *r = malloc(N);
	assert_non_null(w);
	assert_non_null(r);
	fill(w, N, 3);
	struct iovec iov[4] = {{w, 1}, {w + 1, 0}, {w + 1, 3 * 1024 * 1024}, {w + 1 + 3 * 1024 * 1024, N - 1 - 3 * 1024 * 1024}};
	struct kaas_file *f, *g;
	assert_int_equal(kaas_sub_open(a, "big", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f), 0);
	assert_true(kaas_sub_has_pwritev(f));
	assert_int_equal(kaas_sub_pwritev_full(f, iov, 4, 0), 0);
	assert_int_equal(kaas_sub_fsync(f), 0);
	assert_int_equal(kaas_sub_close(f), 0);
	assert_int_equal(kaas_sub_open(b, "big", KAAS_O_READ, 0, &g), 0);
	assert_int_equal(kaas_sub_pread_full(g, r, N, 0), N);
	assert_memory_equal(w, r, N);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_fstat(g, &st), 0);
	assert_int_equal(st.size, N);
	assert_int_equal(st.type, KAAS_FT_FILE);
	assert_int_equal(kaas_sub_close(g), 0);
	assert_int_equal(kaas_sub_unlink(b, "big"), 0);
	free(w);
	free(r);
	kaas_substrate_close(a);
	kaas_substrate_close(b);
}

static int count_cb(void *arg, const char *name, enum kaas_file_type t)
{
	(*(int *)arg)++;
	return 0;
}

/* No silly rename: a file another client unlinks stays readable through a
 * handle opened before, and leaves no hidden name behind. */
static void unlink_while_open_elsewhere(void **state)
{
	struct kaas_substrate *a = open_sub(url_a), *b = open_sub(url_b);
	char w[65536], r[65536];
	fill(w, sizeof w, 9);
	assert_int_equal(kaas_sub_mkdir(a, "held", 0755), 0);
	put(a, "held/f", w, sizeof w);
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(a, "held/f", KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_unlink(b, "held/f"), 0);
	int n = 0;
	assert_int_equal(kaas_sub_readdir(a, "held", count_cb, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(kaas_sub_readdir(b, "held", count_cb, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(kaas_sub_pread_full(f, r, sizeof r, 0), (ssize_t)sizeof r);
	assert_memory_equal(w, r, sizeof r);
	assert_int_equal(kaas_sub_rmdir(b, "held"), 0); /* empty, though the file is held */
	assert_int_equal(kaas_sub_close(f), 0);
	kaas_substrate_close(a);
	kaas_substrate_close(b);
}

/* A key the cluster does not know, and a root that is not there: refused
 * at once, naming the URL (and never the keyring's file). */
static void refused_clients(void **state)
{
	struct kaas_substrate *s = NULL;
	double t0 = now();
	int rc = kaas_substrate_open(badkey, &s);
	assert_true(rc < 0);
	assert_null(s);
	print_message("    a wrong key: %s (%.1f s)\n", kaas_sub_errdetail(), now() - t0);
	assert_true(now() - t0 < 30);
	assert_null(strstr(kaas_sub_errdetail(), "keyring="));
	char u[4096];
	const char *q = strchr(url_a, '?');
	snprintf(u, sizeof u, "%.*s/no-such-dir%s", (int)(q - url_a), url_a, q);
	rc = kaas_substrate_open(u, &s);
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(kaas_sub_errdetail(), "no-such-dir"));
}

/* fs= names the file system: the lab's own works, another is refused. */
static void names_the_file_system(void **state)
{
	char u[4096];
	snprintf(u, sizeof u, "%s&fs=cephfs", url_a);
	struct kaas_substrate *s = open_sub(u);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(s, "", &st), 0);
	assert_int_equal(st.type, KAAS_FT_DIR);
	kaas_substrate_close(s);
	snprintf(u, sizeof u, "%s&fs=nosuchfs&timeout=5", url_a);
	s = NULL;
	int rc = kaas_substrate_open(u, &s);
	print_message("    fs=nosuchfs: %d (%s)\n", rc, kaas_sub_errdetail());
	assert_true(rc < 0);
	assert_null(s);
	assert_non_null(strstr(kaas_sub_errdetail(), "fs=nosuchfs"));
}

/* Eviction, the contract's fence of last resort: the evicted client's
 * fsync of writes it had not synced fails (never 0: the broker must not
 * acknowledge them), every later op fails, and another client sees the
 * synced bytes intact. */
static void evicted_client_never_syncs(void **state)
{
	struct kaas_substrate *e = open_sub(url_e), *b = open_sub(url_b);
	char w[16384], r[16384];
	fill(w, sizeof w, 5);
	struct kaas_file *f, *g, *h;
	assert_int_equal(kaas_sub_open(e, "evict.log", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, w, 4096, 0), 0);
	assert_int_equal(kaas_sub_fsync(f), 0);
	/* a second handle, synced before and written after the eviction too */
	assert_int_equal(kaas_sub_open(e, "evict2.log", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &h), 0);
	assert_int_equal(kaas_sub_pwrite_full(h, w, 100, 0), 0);
	assert_int_equal(kaas_sub_fsync(h), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, w + 4096, 5000, 4096), 0); /* not synced */
	double t0 = now();
	assert_int_equal(system(evict_e), 0);
	print_message("    evicted in %.2f s\n", now() - t0);
	int rc = kaas_sub_fsync(f);
	print_message("    fsync after eviction: %d (%s)\n", rc, kaas_sub_errdetail());
	assert_int_equal(rc, -ESHUTDOWN);
	assert_int_equal(kaas_sub_fsync(f), -ESHUTDOWN); /* poisoned: never 0 again */
	/* the other handle: whatever its write answers, its fsync is not 0 */
	kaas_sub_pwrite_full(h, w, 200, 100);
	assert_int_equal(kaas_sub_fsync(h), -ESHUTDOWN);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(e, "evict.log", &st), -ESHUTDOWN);
	assert_int_equal(kaas_sub_open(e, "other", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &g), -ESHUTDOWN);
	assert_int_equal(kaas_sub_close(f), -ESHUTDOWN);
	kaas_sub_close(h);
	kaas_substrate_close(e);
	/* another client: the synced 4096 bytes, intact; what was not synced
	 * may be there or not, but nothing else */
	assert_int_equal(kaas_sub_open(b, "evict.log", KAAS_O_READ, 0, &g), 0);
	ssize_t n = kaas_sub_pread_full(g, r, sizeof r, 0);
	print_message("    another client reads %zd bytes (4096 synced, 9096 written)\n", n);
	assert_true(n == 4096 || n == 9096);
	assert_memory_equal(w, r, (size_t)n);
	assert_int_equal(kaas_sub_close(g), 0);
	assert_int_equal(kaas_sub_unlink(b, "evict.log"), 0);
	assert_int_equal(kaas_sub_unlink(b, "evict2.log"), 0);
	kaas_substrate_close(b);
}

int main(void)
{
	url_a = getenv("KAAS_CEPHFS_URL_A");
	url_b = getenv("KAAS_CEPHFS_URL_B");
	url_e = getenv("KAAS_CEPHFS_URL_E");
	evict_e = getenv("KAAS_CEPHFS_EVICT_E");
	badkey = getenv("KAAS_CEPHFS_BADKEY");
	if (!url_a || !url_b || !url_e || !evict_e || !badkey) {
		fprintf(stderr, "test_cephfs_backend: run by tests/cephfs/cephfs.sh (KAAS_CEPHFS_URL_A... unset)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(error_codes),
		cmocka_unit_test(big_io_across_clients),
		cmocka_unit_test(unlink_while_open_elsewhere),
		cmocka_unit_test(refused_clients),
		cmocka_unit_test(names_the_file_system),
		cmocka_unit_test(evicted_client_never_syncs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
