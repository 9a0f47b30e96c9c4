/* Committed offsets: safe names, durable commits, and a zombie coordinator
 * that can never overwrite its successor's state. */
#include "tests/unit/unit.h"

#include <errno.h>

#include "cluster/group_store.h"
#include "contract/contract.h"
#include "util/status.h"

static void hostile_group_names_map_to_distinct_safe_dirs(void **state)
{
	static const char *names[] = {"", ".", "..", "../x", "/", "a/b", "a%2Fb", "a.b", ".hidden",
				      "plain-group_1", "spaces in name", "ünïcode", "a\nb"};
	enum { N = sizeof names / sizeof *names };
	char enc[N][256];
	for (int i = 0; i < N; i++) {
		assert_int_equal(kaas_group_dirname(names[i], enc[i], sizeof enc[i]), 0);
		assert_int_equal(kaas_path_check(enc[i]), 0); /* one safe path component */
		assert_null(strchr(enc[i], '/'));
		assert_true(enc[i][0] != '.' || enc[i][1] == '\0' ? enc[i][0] != '.' : 1);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(enc[i], enc[j]);
	}
	assert_string_equal(enc[9], "plain-group_1");
	/* Long names: bounded, and two that share a long prefix stay distinct. */
	char a[1000], b[1000];
	memset(a, 'g', sizeof a - 1);
	a[sizeof a - 1] = '\0';
	memcpy(b, a, sizeof a);
	b[900] = 'h';
	char ea[256], eb[256];
	assert_int_equal(kaas_group_dirname(a, ea, sizeof ea), 0);
	assert_int_equal(kaas_group_dirname(b, eb, sizeof eb), 0);
	assert_true(strlen(ea) <= 200);
	assert_string_not_equal(ea, eb);
}

static void commits_survive_reopen(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_group_offsets g;
	assert_int_equal(kaas_group_open(s, "../evil/group", 1, &g), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(kaas_group_set(&g, "orders", 0, 42, 3, "meta", 1000), 0);
	assert_int_equal(kaas_group_set(&g, "orders", 1, 7, -1, NULL, 1000), 0);
	assert_int_equal(kaas_group_set(&g, "orders", 0, 43, 3, "meta2", 1001), 0); /* update */
	assert_int_equal(kaas_group_commit(s, &g), 0);
	kaas_group_offsets_free(&g);
	/* A restart on a fresh host (a new owner: a new epoch). */
	struct kaas_substrate *other;
	assert_int_equal(kaas_substrate_open(dir, &other), 0);
	assert_int_equal(kaas_group_open(other, "../evil/group", 2, &g), 0);
	assert_int_equal(g.n, 2);
	const struct kaas_committed *c = kaas_group_get(&g, "orders", 0);
	assert_non_null(c);
	assert_int_equal(c->offset, 43);
	assert_int_equal(c->leader_epoch, 3);
	assert_string_equal(c->metadata, "meta2");
	assert_null(kaas_group_get(&g, "orders", 1)->metadata);
	assert_null(kaas_group_get(&g, "other", 0));
	assert_int_equal(kaas_group_forget_topic(&g, "orders"), 2);
	assert_int_equal(g.n, 0);
	kaas_group_offsets_free(&g);
	/* Nothing escaped the groups directory. */
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(s, "evil", &st), -ENOENT);
	kaas_substrate_close(other);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void zombie_coordinator_is_fenced(void **state)
{
	char *dir;
	struct kaas_substrate *host_a = unit_open_tmp(&dir), *host_b;
	assert_int_equal(kaas_substrate_open(dir, &host_b), 0);
	struct kaas_group_offsets za, nb;
	/* A coordinates at epoch 1 and commits offset 10. */
	assert_int_equal(kaas_group_open(host_a, "g", 1, &za), 0);
	assert_int_equal(kaas_group_set(&za, "t", 0, 10, 0, NULL, 0), 0);
	assert_int_equal(kaas_group_commit(host_a, &za), 0);
	/* A pauses; B takes over at epoch 2 and sees 10. */
	assert_int_equal(kaas_group_open(host_b, "g", 2, &nb), 0);
	assert_int_equal(kaas_group_get(&nb, "t", 0)->offset, 10);
	/* A wakes up and commits 99: fenced, not to be acknowledged, and its
	 * file (epoch 1) is older than what B published at takeover. */
	assert_int_equal(kaas_group_set(&za, "t", 0, 99, 0, NULL, 0), 0);
	assert_int_equal(kaas_group_commit(host_a, &za), KAAS_EFENCED);
	assert_non_null(strstr(kaas_sub_errdetail(), "fenced"));
	/* Readers never see the zombie's 99. */
	struct kaas_group_offsets peek;
	assert_int_equal(kaas_group_peek(host_b, "g", &peek), 0);
	assert_int_equal(kaas_group_get(&peek, "t", 0)->offset, 10);
	kaas_group_offsets_free(&peek);
	/* B commits 11; older epochs' files are pruned. */
	assert_int_equal(kaas_group_set(&nb, "t", 0, 11, 0, NULL, 0), 0);
	assert_int_equal(kaas_group_commit(host_b, &nb), 0);
	assert_int_equal(kaas_group_peek(host_a, "g", &peek), 0);
	assert_int_equal(kaas_group_get(&peek, "t", 0)->offset, 11);
	assert_int_equal(peek.epoch, 2);
	kaas_group_offsets_free(&peek);
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(host_a, "groups/g", &l), 0);
	assert_int_equal(l.n, 2); /* fence/ and offsets-2.json */
	kaas_dirlist_free(&l);
	/* A zombie re-opening at its old epoch is refused. */
	struct kaas_group_offsets again;
	assert_int_equal(kaas_group_open(host_a, "g", 1, &again), KAAS_EFENCED);
	kaas_group_offsets_free(&za);
	kaas_group_offsets_free(&nb);
	kaas_substrate_close(host_b);
	kaas_substrate_close(host_a);
	kaas_testdir_remove(dir);
}

/* Issue 13, defect 1 (groups): a takeover at an epoch another coordinator
 * already holds is refused — equal epochs never mean the same owner — so two
 * coordinators never write one group under one epoch.  The holder itself
 * may re-open its own epoch. */
static void two_coordinators_never_share_an_epoch(void **state)
{
	char *dir;
	struct kaas_substrate *host_a = unit_open_tmp(&dir), *host_b;
	assert_int_equal(kaas_substrate_open(dir, &host_b), 0);
	struct kaas_group_offsets a, b, a2;
	assert_int_equal(kaas_group_open(host_a, "g", 3, &a), 0);
	assert_int_equal(kaas_group_set(&a, "t", 0, 10, 0, NULL, 0), 0);
	assert_int_equal(kaas_group_commit(host_a, &a), 0);
	int rc = kaas_group_open(host_b, "g", 3, &b);
	if (rc == 0) {
		/* B would overwrite A's offsets-3.json with its own view. */
		assert_int_equal(kaas_group_set(&b, "t", 0, 5, 0, NULL, 0), 0);
		kaas_group_commit(host_b, &b);
		kaas_group_offsets_free(&b);
	}
	assert_int_equal(rc, KAAS_EFENCED);
	assert_int_equal(kaas_group_open(host_a, "g", 3, &a2), 0);
	assert_int_equal(kaas_group_get(&a2, "t", 0)->offset, 10);
	kaas_group_offsets_free(&a2);
	kaas_group_offsets_free(&a);
	kaas_substrate_close(host_b);
	kaas_substrate_close(host_a);
	kaas_testdir_remove(dir);
}

static void corrupt_group_document_is_an_error(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_group_offsets g;
	assert_int_equal(kaas_group_open(s, "g", 1, &g), 0);
	assert_int_equal(kaas_group_set(&g, "t", 0, 5, 0, NULL, 0), 0);
	assert_int_equal(kaas_group_commit(s, &g), 0);
	kaas_group_offsets_free(&g);
	unit_put(s, "groups/g/offsets-00000000000000000001.json", "{\"kaas\":\"group-offsets\"}\n{}");
	assert_int_equal(kaas_group_open(s, "g", 2, &g), -EBADMSG);
	assert_non_null(strstr(kaas_sub_errdetail(), "offsets-00000000000000000001.json"));
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile_group_names_map_to_distinct_safe_dirs),
		cmocka_unit_test(commits_survive_reopen),
		cmocka_unit_test(zombie_coordinator_is_fenced),
		cmocka_unit_test(corrupt_group_document_is_an_error),
		cmocka_unit_test(two_coordinators_never_share_an_epoch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
