/* Dispatch layer and POSIX backend: path checks, poisoning, helpers. */
#include "tests/unit/unit.h"

#include "substrate/metered.h"

#include <errno.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <unistd.h>

static void hostile_paths_are_refused(void **state)
{
	static const char *bad[] = {"/etc/passwd", "../x", "a/../../b", "a//b", "a/", ".", "a/./b", ".."};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(kaas_path_check(bad[i]), -EINVAL);
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(kaas_path_check(longname), -ENAMETOOLONG);
	assert_int_equal(kaas_path_check(""), 0);
	assert_int_equal(kaas_path_check("topic/0/manifest.json"), 0);
	assert_int_equal(kaas_path_check(".topic-id.json"), 0);

	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_file *f = NULL;
	assert_int_equal(kaas_sub_open(s, "../escape", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), -EINVAL);
	assert_null(f);
	assert_non_null(strstr(kaas_sub_errdetail(), "../escape"));
	assert_int_equal(kaas_sub_mkdir(s, "/abs", 0755), -EINVAL);
	assert_int_equal(kaas_sub_rename(s, "a", "../b"), -EINVAL);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void urls_open_the_right_backend(void **state)
{
	char *dir = kaas_testdir_make("unit");
	char url[4200];
	struct kaas_substrate *s = NULL;
	snprintf(url, sizeof url, "file://%s", dir);
	assert_int_equal(kaas_substrate_open(url, &s), 0);
	assert_string_equal(s->ops->name, "posix");
	assert_true(s->host[0] != '\0');
	kaas_substrate_close(s);
	assert_int_equal(kaas_substrate_open("gopher://x/y", &s), -EPROTONOSUPPORT);
	assert_non_null(strstr(kaas_sub_errdetail(), "gopher://x/y"));
	snprintf(url, sizeof url, "%s/missing", dir);
	assert_int_equal(kaas_substrate_open(url, &s), -ENOENT);
	assert_non_null(strstr(kaas_sub_errdetail(), url));
	assert_int_equal(kaas_substrate_open("", &s), -EINVAL);
	kaas_testdir_remove(dir);
}

static void url_subdirs_keep_the_query(void **state)
{
	static const char *cases[][2] = {
		{"/data", "/data/__cluster"},
		{"/data/", "/data/__cluster"},
		{"file:///data", "file:///data/__cluster"},
		{"nfs://127.0.0.1/srv/kaas?nfsport=20490&mountport=20491",
		 "nfs://127.0.0.1/srv/kaas/__cluster?nfsport=20490&mountport=20491"},
		{"fault+/lower?seed=3&host=1", "fault+/lower/__cluster?seed=3&host=1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *u = kaas_url_subdir(cases[i][0], "__cluster");
		assert_string_equal(u, cases[i][1]);
		free(u);
	}
}

static void failed_fsync_poisons_the_handle(void **state)
{
	char *dir;
	struct kaas_substrate *lower = unit_open_tmp(&dir);
	struct kaas_substrate *s;
	/* ops: open(1) pwrite(2) fsync(3) -> the fsync fails */
	struct kaas_crashsub_opts o = {.fail_op_at = 3, .fail_errno = EIO};
	assert_int_equal(kaas_crashsub_wrap(lower, &o, &s), 0);
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, "f", KAAS_O_READ | KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, "abc", 3, 0), 0);
	assert_int_equal(kaas_sub_fsync(f), -EIO);
	/* Never retried, and nothing else goes through this handle. */
	assert_int_equal(kaas_sub_fsync(f), -EIO);
	assert_int_equal(kaas_sub_pwrite(f, "d", 1, 3), -EIO);
	char b[4];
	assert_int_equal(kaas_sub_pread(f, b, 3, 0), -EIO);
	assert_non_null(strstr(kaas_sub_errdetail(), "poisoned"));
	assert_int_equal(kaas_sub_close(f), -EIO);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void mkdirs_list_and_read_all(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	assert_int_equal(kaas_sub_mkdirs(s, "a/b/c", 0755), 0);
	assert_int_equal(kaas_sub_mkdirs(s, "a/b/c", 0755), 0); /* idempotent */
	unit_put(s, "a/b/zeta", "z");
	unit_put(s, "a/b/alpha", "hello");
	assert_int_equal(kaas_sub_mkdirs(s, "a/b/alpha/x", 0755), -ENOTDIR);
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(s, "a/b", &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.names[0], "alpha");
	assert_int_equal(l.types[0], KAAS_FT_FILE);
	assert_string_equal(l.names[1], "c");
	assert_int_equal(l.types[1], KAAS_FT_DIR);
	assert_string_equal(l.names[2], "zeta");
	kaas_dirlist_free(&l);
	int rc;
	char *t = unit_get(s, "a/b/alpha", &rc);
	assert_string_equal(t, "hello");
	free(t);
	char *buf;
	size_t len;
	assert_int_equal(kaas_sub_read_all(s, "a/b/alpha", 3, &buf, &len), -EFBIG);
	struct kaas_statfs sf;
	assert_int_equal(kaas_sub_statfs(s, "", &sf), 0);
	assert_true(sf.total_bytes > 0);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void sendfile_and_its_fallback(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	unit_put(s, "f", "0123456789");
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, "f", KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_sendfile(f, sv[0], 2, 5), 5);
	char b[8] = {0};
	assert_int_equal(read(sv[1], b, sizeof b), 5);
	assert_string_equal(b, "23456");
	/* The dispatch fallback (pread+send) gives the same bytes. */
	struct kaas_substrate_ops ops = *s->ops;
	ops.sendfile = NULL;
	const struct kaas_substrate_ops *saved = f->ops;
	f->ops = &ops;
	assert_int_equal(kaas_sub_sendfile(f, sv[0], 7, 3), 3);
	memset(b, 0, sizeof b);
	assert_int_equal(read(sv[1], b, sizeof b), 3);
	assert_string_equal(b, "789");
	f->ops = saved;
	kaas_sub_close(f);
	close(sv[0]);
	close(sv[1]);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* Write 3000 buffers of 0..9 bytes (empty ones among them: more than one
 * pwritev call's KAAS_SUB_IOV_MAX) at offset 5 of a fresh file through sub
 * with kaas_sub_pwritev_full, and check the file is their concatenation. */
static void check_pwritev(struct kaas_substrate *sub, const char *path, bool native)
{
	enum { N = 3000, AT = 5 };
	static struct iovec iov[N];
	static unsigned char want[N * 9];
	size_t len = 0;
	for (int i = 0; i < N; i++) {
		size_t n = (size_t)((i * 7) % 10);
		for (size_t k = 0; k < n; k++)
			want[len + k] = (unsigned char)(i + k);
		iov[i] = (struct iovec){ .iov_base = want + len, .iov_len = n };
		len += n;
	}
	struct kaas_file *f = NULL;
	assert_int_equal(kaas_sub_open(sub, path, KAAS_O_WRITE | KAAS_O_READ | KAAS_O_CREAT, 0644, &f), 0);
	assert_int_equal(kaas_sub_has_pwritev(f), native);
	assert_int_equal(kaas_sub_pwrite_full(f, "head!", AT, 0), 0);
	assert_int_equal(kaas_sub_pwritev_full(f, iov, N, AT), 0);
	static unsigned char got[N * 9 + AT + 1];
	assert_int_equal(kaas_sub_pread_full(f, got, sizeof got, 0), (ssize_t)(len + AT));
	assert_memory_equal(got, "head!", AT);
	assert_memory_equal(got + AT, want, len);
	/* Only empty buffers: nothing written, no error. */
	struct iovec none[2] = { { .iov_base = want, .iov_len = 0 }, { .iov_base = want, .iov_len = 0 } };
	assert_int_equal(kaas_sub_pwritev_full(f, none, 2, len + AT), 0);
	assert_int_equal(kaas_sub_close(f), 0);
	/* A read-only handle refuses, as pwrite does. */
	assert_int_equal(kaas_sub_open(sub, path, KAAS_O_READ, 0, &f), 0);
	assert_int_equal(kaas_sub_pwritev_full(f, iov, 2, 0), -EBADF);
	assert_int_equal(kaas_sub_close(f), 0);
}

/* A POSIX pwritev that writes at most 3 bytes of the first buffer: every
 * call short, most of them inside a buffer. */
static ssize_t (*posix_pwritev_op)(struct kaas_file *, const struct iovec *, int, uint64_t);
static ssize_t short_pwritev(struct kaas_file *f, const struct iovec *iov, int iovcnt, uint64_t off)
{
	assert_true(iovcnt >= 1 && iov[0].iov_len > 0); /* never handed an empty head */
	struct iovec one = iov[0];
	if (one.iov_len > 3)
		one.iov_len = 3;
	return posix_pwritev_op(f, &one, 1, off);
}

/* kaas_sub_pwritev_full writes the concatenation natively (POSIX), through
 * the metering decorator (native only when its backend is), and through the
 * fallback of a backend without the op (the in-process NFS-floor model). */
static void pwritev_writes_the_concatenation(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	check_pwritev(s, "native", true);
	/* Short writes, also in the middle of a buffer. */
	static struct kaas_substrate_ops short_ops;
	const struct kaas_substrate_ops *posix_ops = s->ops;
	short_ops = *posix_ops;
	posix_pwritev_op = posix_ops->pwritev;
	short_ops.pwritev = short_pwritev;
	s->ops = &short_ops;
	check_pwritev(s, "short", true);
	s->ops = posix_ops;
	struct kaas_substrate *m = NULL;
	assert_int_equal(kaas_metered_wrap(s, &m), 0);
	check_pwritev(m, "metered", true);
	kaas_substrate_close(m); /* closes s too */
	char url[4200];
	snprintf(url, sizeof url, "fault+%s?seed=3&host=1", dir);
	struct kaas_substrate *fs = NULL;
	assert_int_equal(kaas_substrate_open(url, &fs), 0);
	check_pwritev(fs, "fallback", false);
	assert_int_equal(kaas_metered_wrap(fs, &m), 0);
	check_pwritev(m, "metered-fallback", false);
	kaas_substrate_close(m);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile_paths_are_refused),
		cmocka_unit_test(urls_open_the_right_backend),
		cmocka_unit_test(url_subdirs_keep_the_query),
		cmocka_unit_test(failed_fsync_poisons_the_handle),
		cmocka_unit_test(mkdirs_list_and_read_all),
		cmocka_unit_test(sendfile_and_its_fallback),
		cmocka_unit_test(pwritev_writes_the_concatenation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
