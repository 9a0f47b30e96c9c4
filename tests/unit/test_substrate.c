/* Dispatch layer and POSIX backend: path checks, poisoning, helpers. */
#include "tests/unit/unit.h"

#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile_paths_are_refused),
		cmocka_unit_test(urls_open_the_right_backend),
		cmocka_unit_test(url_subdirs_keep_the_query),
		cmocka_unit_test(failed_fsync_poisons_the_handle),
		cmocka_unit_test(mkdirs_list_and_read_all),
		cmocka_unit_test(sendfile_and_its_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
