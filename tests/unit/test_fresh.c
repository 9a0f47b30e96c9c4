/* fresh lookups (contract.h): an ENOENT confirmed by revalidating the
 * directories on the way.  On the NFS-floor model (fault+, two hosts over
 * one lower directory, negative lookup cache on) a host that looked a name
 * up before another host made it keeps being told "missing" by a plain
 * listing of it; kaas_list_fresh sees it at once.  Also on POSIX. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <string.h>

#include "contract/contract.h"

struct hosts {
	char *dir;
	struct kaas_substrate *a, *b;
};

static void open_hosts(struct hosts *h, int fault)
{
	h->dir = kaas_testdir_make("fresh");
	assert_non_null(h->dir);
	char url[600];
	if (fault) {
		snprintf(url, sizeof url, "fault+%s?seed=3&host=1", h->dir);
		assert_int_equal(kaas_substrate_open(url, &h->a), 0);
		snprintf(url, sizeof url, "fault+%s?seed=3&host=2", h->dir);
		assert_int_equal(kaas_substrate_open(url, &h->b), 0);
	} else {
		assert_int_equal(kaas_substrate_open(h->dir, &h->a), 0);
		assert_int_equal(kaas_substrate_open(h->dir, &h->b), 0);
	}
}

static void close_hosts(struct hosts *h)
{
	kaas_substrate_close(h->a);
	kaas_substrate_close(h->b);
	kaas_testdir_remove(h->dir);
}

static void sees_other_hosts_names(int fault)
{
	struct hosts h;
	open_hosts(&h, fault);
	struct kaas_stat st;
	struct kaas_dirlist l;
	/* Host a looks groups/ up before it exists (as a broker's discovery
	 * does before the first commit), then host b makes groups/g/doc. */
	assert_int_equal(kaas_sub_stat(h.a, "groups/g", &st), -ENOENT);
	assert_int_equal(kaas_list_fresh(h.a, "groups/g", &l), -ENOENT);
	assert_int_equal(kaas_sub_mkdirs(h.b, "groups/g", 0755), 0);
	assert_int_equal(kaas_replace(h.b, "groups/g/doc", "x", 1), 0);
	if (fault) /* the cached answer a plain listing trusts */
		assert_int_equal(kaas_sub_list(h.a, "groups/g", &l), -ENOENT);
	assert_int_equal(kaas_list_fresh(h.a, "groups/g", &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.names[0], "doc");
	kaas_dirlist_free(&l);
	/* And the revalidation alone makes the next plain lookup fresh. */
	assert_int_equal(kaas_sub_stat(h.a, "groups/h", &st), -ENOENT);
	assert_int_equal(kaas_sub_mkdirs(h.b, "groups/h/x", 0755), 0);
	if (fault)
		assert_int_equal(kaas_sub_stat(h.a, "groups/h/x", &st), -ENOENT);
	assert_int_equal(kaas_revalidate_parents(h.a, "groups/h/x"), 0);
	assert_int_equal(kaas_sub_stat(h.a, "groups/h/x", &st), 0);
	/* What is missing on the server stays missing. */
	assert_int_equal(kaas_list_fresh(h.a, "groups/none", &l), -ENOENT);
	assert_int_equal(kaas_list_fresh(h.a, "nothing/none", &l), -ENOENT);
	assert_int_equal(kaas_revalidate_parents(h.a, "nothing/none/x"), -ENOENT);
	assert_int_equal(kaas_revalidate_parents(h.a, "top"), 0);
	close_hosts(&h);
}

static void fresh_posix(void **state) { (void)state; sees_other_hosts_names(0); }
static void fresh_fault(void **state) { (void)state; sees_other_hosts_names(1); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fresh_posix),
		cmocka_unit_test(fresh_fault),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
