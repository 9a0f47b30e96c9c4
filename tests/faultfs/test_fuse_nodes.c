/* test_fuse_nodes — the FUSE front's inode table: paths, renames, removals,
 * lookup counts and open handles. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "faultfs/fuse_nodes.h"

static void expect_path(struct kaas_ll_nodes *t, uint64_t id, int rc, const char *path)
{
	char *p = NULL;
	assert_int_equal(kaas_ll_path(t, id, &p), rc);
	if (path) {
		assert_non_null(p);
		assert_string_equal(p, path);
	}
	free(p);
}

static void test_paths_and_moves(void **state)
{
	struct kaas_ll_nodes *t = kaas_ll_nodes_new();
	expect_path(t, KAAS_LL_ROOT, 0, "");
	uint64_t a = kaas_ll_ref(t, KAAS_LL_ROOT, "a");
	uint64_t b = kaas_ll_ref(t, a, "b");
	uint64_t f = kaas_ll_ref(t, b, "f");
	assert_true(a && b && f);
	assert_int_equal(kaas_ll_ref(t, a, "b"), b); /* same node, one more ref */
	expect_path(t, f, 0, "a/b/f");
	char *c = kaas_ll_child_path(t, b, "g");
	assert_string_equal(c, "a/b/g");
	free(c);
	/* moving a directory moves everything under it */
	kaas_ll_move(t, KAAS_LL_ROOT, "a", KAAS_LL_ROOT, "z");
	expect_path(t, f, 0, "z/b/f");
	/* a rename over an existing entry detaches the old one */
	uint64_t g = kaas_ll_ref(t, b, "g");
	kaas_ll_move(t, b, "f", b, "g");
	expect_path(t, f, 0, "z/b/g");
	expect_path(t, g, -ESTALE, "z/b/g"); /* stale, with the path it had */
	/* removal */
	kaas_ll_remove(t, b, "g");
	expect_path(t, f, -ESTALE, "z/b/g");
	kaas_ll_forget(t, g, 1);
	kaas_ll_forget(t, f, 1);
	kaas_ll_nodes_free(t);
}

static int use_handle(void *h, void *arg)
{
	*(void **)arg = h;
	return 7;
}

static void test_handles_and_forget(void **state)
{
	struct kaas_ll_nodes *t = kaas_ll_nodes_new();
	uint64_t f = kaas_ll_ref(t, KAAS_LL_ROOT, "f");
	int dummy;
	void *got = NULL;
	assert_int_equal(kaas_ll_with_handle(t, f, use_handle, &got), -ENOENT);
	kaas_ll_attach(t, f, &dummy);
	/* silly-renamed: the node follows its new name and keeps its handle */
	kaas_ll_move(t, KAAS_LL_ROOT, "f", KAAS_LL_ROOT, ".nfs0000000000000001deadbeef");
	expect_path(t, f, 0, ".nfs0000000000000001deadbeef");
	/* forgotten by the kernel but still open: it stays */
	kaas_ll_forget(t, f, 1);
	assert_int_equal(kaas_ll_with_handle(t, f, use_handle, &got), 7);
	assert_ptr_equal(got, &dummy);
	kaas_ll_detach(t, f, &dummy); /* now it goes */
	/* a new lookup of the name makes a new node */
	uint64_t f2 = kaas_ll_ref(t, KAAS_LL_ROOT, "f");
	assert_true(f2 != 0);
	kaas_ll_nodes_free(t); /* frees what is left, referenced or not */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_and_moves),
		cmocka_unit_test(test_handles_and_forget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
