/* test_fetch_session.c — the fetch-session cache (kafka/fetch_session.h):
 * partitions added, updated, forgotten and compacted in order at scale;
 * slots, eviction of an idle session and of one with fewer partitions;
 * epochs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kafka/fetch_session.h"

static void partitions(void **state)
{
	(void)state;
	struct kaas_fetch_sessions *c = kaas_fetch_sessions_new(4, 1000);
	assert_non_null(c);
	struct kaas_fetch_session *s = kaas_fetch_session_create(c, 3000, 0);
	assert_non_null(s);
	assert_true(s->id > 0);
	assert_int_equal(s->epoch, 1);
	assert_ptr_equal(kaas_fetch_session_get(c, s->id), s);
	/* 3 topics x 1000 partitions */
	const char *t[] = { "alpha", "beta", "gamma" };
	for (int k = 0; k < 3; k++)
		for (int32_t i = 0; i < 1000; i++) {
			struct kaas_fs_part *p =
				kaas_fetch_session_upsert(s, t[k], (int32_t)strlen(t[k]), i, i, 100);
			assert_non_null(p);
			assert_int_equal(p->hw, -1);
		}
	assert_int_equal(s->n, 3000);
	/* An update keeps the entry and its answered state. */
	struct kaas_fs_part *p = kaas_fetch_session_find(s, "beta", 4, 7);
	assert_non_null(p);
	p->hw = 42;
	assert_ptr_equal(kaas_fetch_session_upsert(s, "beta", 4, 7, 8, 200), p);
	assert_int_equal(p->offset, 8);
	assert_int_equal(p->max_bytes, 200);
	assert_int_equal(p->hw, 42);
	assert_int_equal(s->n, 3000);
	assert_null(kaas_fetch_session_find(s, "beta", 4, 1000));
	assert_null(kaas_fetch_session_find(s, "bet", 3, 7));
	/* Forget every odd partition of beta, then one again (no-op). */
	for (int32_t i = 1; i < 1000; i += 2)
		kaas_fetch_session_forget(s, "beta", 4, i);
	kaas_fetch_session_forget(s, "beta", 4, 1);
	assert_null(kaas_fetch_session_find(s, "beta", 4, 1));
	/* Re-added before compaction: appended as new. */
	p = kaas_fetch_session_upsert(s, "beta", 4, 1, 5, 100);
	assert_non_null(p);
	assert_int_equal(p->hw, -1);
	assert_int_equal(kaas_fetch_session_compact(s), 0);
	assert_int_equal(s->n, 2501);
	/* Order kept: alpha 0..999, beta evens, gamma 0..999, then beta/1. */
	assert_string_equal(s->parts[0].topic, "alpha");
	assert_string_equal(s->parts[1000].topic, "beta");
	assert_int_equal(s->parts[1001].index, 2);
	assert_string_equal(s->parts[1500].topic, "gamma");
	assert_int_equal(s->parts[2500].index, 1);
	assert_string_equal(s->parts[2500].topic, "beta");
	for (int32_t i = 0; i < 1000; i++) {
		p = kaas_fetch_session_find(s, "beta", 4, i);
		if (i % 2 && i != 1)
			assert_null(p);
		else
			assert_non_null(p);
		assert_non_null(kaas_fetch_session_find(s, "gamma", 5, i));
	}
	assert_int_equal(kaas_fetch_session_find(s, "beta", 4, 7) ? 1 : 0, 0);
	int32_t id = s->id;
	kaas_fetch_session_remove(c, id);
	assert_null(kaas_fetch_session_get(c, id));
	kaas_fetch_sessions_free(c);
}

static struct kaas_fetch_session *with_parts(struct kaas_fetch_sessions *c, int32_t n,
					     uint64_t now)
{
	struct kaas_fetch_session *s = kaas_fetch_session_create(c, n, now);
	for (int32_t i = 0; s && i < n; i++)
		assert_non_null(kaas_fetch_session_upsert(s, "t", 1, i, 0, 1));
	return s;
}

static void eviction(void **state)
{
	(void)state;
	/* No slots: never a session. */
	struct kaas_fetch_sessions *none = kaas_fetch_sessions_new(0, 1000);
	assert_null(kaas_fetch_session_create(none, 5, 0));
	kaas_fetch_sessions_free(none);

	struct kaas_fetch_sessions *c = kaas_fetch_sessions_new(2, 1000);
	struct kaas_fetch_session *a = with_parts(c, 3, 0);
	struct kaas_fetch_session *b = with_parts(c, 5, 10);
	assert_non_null(a);
	assert_non_null(b);
	int32_t ida = a->id, idb = b->id;
	assert_int_not_equal(ida, idb);
	/* Full, nobody idle, nobody with fewer than 3: refused. */
	assert_null(kaas_fetch_session_create(c, 3, 500));
	/* 4 partitions: a (3) has fewer, and goes. */
	struct kaas_fetch_session *d = with_parts(c, 4, 600);
	assert_non_null(d);
	assert_null(kaas_fetch_session_get(c, ida));
	int32_t idd = d->id;
	/* b used at 700 (most recent): at 1700 d (used at 600) has been idle
	 * 1100 ms and goes first, even for a session of 1. */
	kaas_fetch_session_touch(c, b, 700);
	assert_null(kaas_fetch_session_create(c, 1, 1500));
	struct kaas_fetch_session *e = kaas_fetch_session_create(c, 1, 1700);
	assert_non_null(e);
	assert_null(kaas_fetch_session_get(c, idd));
	assert_ptr_equal(kaas_fetch_session_get(c, idb), b);
	kaas_fetch_sessions_free(c);
}

static void epochs(void **state)
{
	(void)state;
	assert_int_equal(kaas_fetch_next_epoch(0), 1);
	assert_int_equal(kaas_fetch_next_epoch(41), 42);
	assert_int_equal(kaas_fetch_next_epoch(INT32_MAX), 1);
	assert_int_equal(kaas_fetch_next_epoch(-1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(partitions),
		cmocka_unit_test(eviction),
		cmocka_unit_test(epochs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
