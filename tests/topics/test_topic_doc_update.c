/* test_topic_doc_update.c — the topic document's read-modify-write (issue
 * 33, cluster/topic_doc_update.c), driven directly, on POSIX and with each
 * writer its own client of the fault model (fault+):
 *  - two writers, each on its own substrate handle, add 25 keys each to one
 *    document at the same time: every key is there at the end (a lost
 *    claim starts again from the document; KAAS_ECONTENDED is retried as a
 *    client would);
 *  - a revision claimed and never written (its writer died, or the reply to
 *    its exclusive create was lost) holds the next writer up for
 *    KAAS_TOPIC_REV_WAIT_MS, no longer: it writes past it, and the late
 *    writer's check refuses it;
 *  - an edit that refuses the re-read document (a grow to a count already
 *    reached) is answered as the edit says and nothing is changed;
 *  - a new incarnation's document refuses a writer of the old one. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cluster/membership.h"
#include "cluster/topic_store.h"
#include "util/status.h"

#define NKEYS 25

struct env {
	char *dir;
	char url[600];           /* the cluster directory's URL */
	struct kaas_substrate *c;
};

static struct kaas_substrate *view(const struct env *e, int host)
{
	struct kaas_substrate *s = NULL;
	char url[700];
	if (host)
		snprintf(url, sizeof url, "fault+%s?seed=%d&host=%d", e->url, host, host);
	else
		snprintf(url, sizeof url, "%s", e->url);
	assert_int_equal(kaas_substrate_open(url, &s), 0);
	return s;
}

static int fault_mode;

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	assert_non_null(e);
	struct kaas_substrate *root = unit_open_tmp(&e->dir);
	assert_int_equal(kaas_sub_mkdirs(root, "__cluster", 0755), 0);
	kaas_substrate_close(root);
	snprintf(e->url, sizeof e->url, "%s/__cluster", e->dir);
	e->c = view(e, fault_mode ? 1 : 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kaas_substrate_close(e->c);
	kaas_testdir_remove(e->dir);
	free(e);
	return 0;
}

static void create(struct env *e, const char *name, uint8_t idbyte, uint64_t inc, int64_t np)
{
	struct kaas_topic_doc d = { .np = np, .inc = inc, .rf = 1 };
	memset(d.id, idbyte, 16);
	assert_int_equal(kaas_topic_inc_claim(e->c, name, inc, d.id), 0);
	assert_int_equal(kaas_topic_doc_write(e->c, name, &d, NULL), 0);
}

/* Edits. */
struct set_key {
	const char *key, *value;
};

static int set_edit(void *arg, struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	(void)d;
	const struct set_key *k = arg;
	return kaas_kvlist_set(config, k->key, k->value);
}

static int grow_edit(void *arg, struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	(void)config;
	int64_t count = *(const int64_t *)arg;
	if (count <= d->np)
		return KAAS_EINVALCOUNT;
	d->np = count;
	return 0;
}

/* ---------------------------------------------------------------- racing */

struct writer {
	struct env *e;
	struct kaas_substrate *s; /* its own handle (opened on the test's thread) */
	char tag;
	int contended;
	int rc;                   /* the first failure (cmocka asserts on the test's thread) */
	char detail[256];
};

static void *write_keys(void *arg)
{
	struct writer *w = arg;
	uint8_t id[16];
	memset(id, 7, 16);
	for (int i = 0; i < NKEYS && w->rc == 0; i++) {
		char key[16];
		snprintf(key, sizeof key, "%c%d", w->tag, i);
		struct set_key k = { key, "v" };
		int rc;
		while ((rc = kaas_topic_doc_update(w->s, "race", id, set_edit, &k, NULL, NULL)) ==
		       KAAS_ECONTENDED)
			w->contended++;
		if (rc != 0) {
			w->rc = rc;
			snprintf(w->detail, sizeof w->detail, "%s", kaas_sub_errdetail());
		}
	}
	return NULL;
}

static void test_two_writers(void **state)
{
	struct env *e = *state;
	create(e, "race", 7, 1, 3);
	struct writer w[2] = { { .e = e, .tag = 'a' }, { .e = e, .tag = 'b' } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		w[i].s = view(e, fault_mode ? 2 + i : 0);
		assert_int_equal(pthread_create(&th[i], NULL, write_keys, &w[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		kaas_substrate_close(w[i].s);
	}
	for (int i = 0; i < 2; i++)
		if (w[i].rc)
			fail_msg("writer %c: %d (%s)", w[i].tag, w[i].rc, w[i].detail);
	struct kaas_topic_doc d;
	struct kaas_kvlist cfg = { 0 };
	assert_int_equal(kaas_topic_doc_read_config(e->c, "race", &d, &cfg), 0);
	assert_int_equal(cfg.n, 2 * NKEYS);
	assert_int_equal(d.np, 3);
	assert_int_equal(d.rev, 1 + 2 * NKEYS); /* one revision per change */
	kaas_kvlist_clear(&cfg);
	printf("# two writers: %d + %d contended answers retried\n", w[0].contended,
	       w[1].contended);
}

/* ------------------------------------------------ a claim without document */

static void test_claim_without_document(void **state)
{
	struct env *e = *state;
	create(e, "stuck", 9, 1, 2);
	struct kaas_topic_doc d;
	assert_int_equal(kaas_topic_doc_read(e->c, "stuck", &d), 0);
	assert_int_equal(d.rev, 1);
	/* A writer claims revision 2 and is never heard of again. */
	assert_int_equal(kaas_topic_rev_claim(e->c, "stuck", 2), 0);
	uint8_t id[16];
	memset(id, 9, 16);
	struct set_key k = { "retention.ms", "1000" };
	uint64_t t0 = kaas_mono_ms();
	assert_int_equal(kaas_topic_doc_update(e->c, "stuck", id, set_edit, &k, &d, NULL), 0);
	uint64_t waited = kaas_mono_ms() - t0;
	assert_true(waited >= KAAS_TOPIC_REV_WAIT_MS && waited < 3 * KAAS_TOPIC_REV_WAIT_MS);
	assert_int_equal(d.rev, 3);
	/* The late writer of revision 2 is refused at its check. */
	assert_int_equal(kaas_topic_rev_check(e->c, "stuck", 2), KAAS_EFENCED);
	assert_int_equal(kaas_topic_rev_check(e->c, "stuck", 3), 0);
	/* The next change does not wait. */
	t0 = kaas_mono_ms();
	int64_t count = 4;
	assert_int_equal(kaas_topic_doc_update(e->c, "stuck", id, grow_edit, &count, &d, NULL), 0);
	assert_true(kaas_mono_ms() - t0 < KAAS_TOPIC_REV_WAIT_MS);
	assert_int_equal(d.rev, 4);
	assert_int_equal(d.np, 4);
	/* A grow to a count reached is refused, nothing written. */
	count = 3;
	assert_int_equal(kaas_topic_doc_update(e->c, "stuck", id, grow_edit, &count, NULL, NULL),
			 KAAS_EINVALCOUNT);
	struct kaas_kvlist cfg = { 0 };
	assert_int_equal(kaas_topic_doc_read_config(e->c, "stuck", &d, &cfg), 0);
	assert_int_equal(d.rev, 4);
	assert_int_equal(d.np, 4);
	assert_string_equal(kaas_kvlist_get(&cfg, "retention.ms"), "1000");
	kaas_kvlist_clear(&cfg);
	printf("# a claim without its document held the next writer %llu ms\n",
	       (unsigned long long)waited);
}

/* ------------------------------------------------------ a new incarnation */

static void test_new_incarnation(void **state)
{
	struct env *e = *state;
	create(e, "re", 1, 1, 1);
	assert_int_equal(kaas_topic_inc_mark_over(e->c, "re", 1), 0);
	assert_int_equal(kaas_topic_doc_remove(e->c, "re"), 0);
	create(e, "re", 2, 2, 1);
	uint8_t old[16];
	memset(old, 1, 16);
	struct set_key k = { "retention.ms", "1" };
	assert_int_equal(kaas_topic_doc_update(e->c, "re", old, set_edit, &k, NULL, NULL),
			 KAAS_EFENCED);
	assert_int_equal(kaas_topic_doc_rewrite(e->c, "re", old, 5, 1, NULL), KAAS_EFENCED);
	struct kaas_topic_doc d;
	assert_int_equal(kaas_topic_doc_read(e->c, "re", &d), 0);
	assert_int_equal(d.id[0], 2);
	assert_int_equal(d.inc, 2);
	assert_int_equal(d.rev, 2); /* the revisions span incarnations */
	assert_int_equal(d.np, 1);
	assert_int_equal(d.deleting, 0);
}

static int posix(void **state)
{
	(void)state;
	fault_mode = 0;
	return 0;
}

static int fault(void **state)
{
	(void)state;
	fault_mode = 1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_without_document, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_incarnation, setup, teardown),
	};
	int rc = cmocka_run_group_tests_name("posix", tests, posix, NULL);
	rc |= cmocka_run_group_tests_name("fault+", tests, fault, NULL);
	return rc;
}
