/* test_lock_rank.c — util/lock_rank.h: locks taken in increasing rank pass,
 * an out-of-order or same-rank acquisition aborts (in a forked child),
 * trylock is recorded but never refused, unlock may go in any order.
 * The checker is compiled in here whatever the build (the broker's normal
 * build leaves it out; the sanitizer build turns it on everywhere). */
#ifndef KAAS_LOCK_RANK
#define KAAS_LOCK_RANK 1
#endif
#include "util/lock_rank.c"
#include "tests/support/inchild.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER; /* rank 10 */
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER; /* rank 60 */
static pthread_mutex_t leaf = PTHREAD_MUTEX_INITIALIZER;  /* rank 80 */
static pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER; /* rank 60 too */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;  /* rank 70 */

static int in_child(void (*fn)(void), char *err, size_t errlen)
{
	int status = ts_in_child(fn, err, errlen);
	assert_int_not_equal(status, -1);
	return status;
}

static void t_in_order(void **st)
{
	(void)st;
	kaas_lock(&outer, 10);
	kaas_lock(&inner, 60);
	kaas_lock(&leaf, 80);
	assert_int_equal(kaas_lock_rank_depth(), 3);
	kaas_unlock(&inner); /* not in LIFO order: fine */
	assert_int_equal(kaas_lock_rank_depth(), 2);
	kaas_unlock(&leaf);
	kaas_lock(&inner, 60); /* above outer again */
	kaas_unlock(&inner);
	kaas_unlock(&outer);
	assert_int_equal(kaas_lock_rank_depth(), 0);
}

/* A condition wait keeps the lock on the thread's stack. */
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void t_cond_wait(void **st)
{
	(void)st;
	kaas_lock(&inner, 60);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	(void)pthread_cond_timedwait(&cv, &inner, &ts);
	assert_int_equal(kaas_lock_rank_depth(), 1);
	kaas_lock(&leaf, 80);
	kaas_unlock(&leaf);
	kaas_unlock(&inner);
	assert_int_equal(kaas_lock_rank_depth(), 0);
}

/* trylock never waits: recorded, never refused. */
static void t_trylock(void **st)
{
	(void)st;
	kaas_lock(&leaf, 80);
	assert_int_equal(kaas_trylock(&outer, 10), 0);
	assert_int_equal(kaas_lock_rank_depth(), 2);
	kaas_unlock(&outer);
	kaas_unlock(&leaf);
	assert_int_equal(kaas_lock_rank_depth(), 0);
}

/* A rwlock's either side is held at its rank, and released in any order. */
static void t_rwlock(void **st)
{
	(void)st;
	kaas_lock(&inner, 60);
	kaas_rdlock(&rw, 70);
	kaas_lock(&leaf, 80);
	assert_int_equal(kaas_lock_rank_depth(), 3);
	kaas_rwunlock(&rw);
	kaas_unlock(&leaf);
	kaas_unlock(&inner);
	kaas_wrlock(&rw, 70);
	assert_int_equal(kaas_lock_rank_depth(), 1);
	kaas_rwunlock(&rw);
	assert_int_equal(kaas_lock_rank_depth(), 0);
}

static void rwlock_out_of_order(void)
{
	kaas_rdlock(&rw, 70);
	kaas_lock(&inner, 60); /* aborts */
}

static void under_rwlock_write_side(void)
{
	kaas_lock(&leaf, 80);
	kaas_wrlock(&rw, 70); /* aborts */
}

static void out_of_order(void)
{
	kaas_lock(&inner, 60);
	kaas_lock(&outer, 10); /* aborts */
}

static void same_rank(void)
{
	kaas_lock(&inner, 60);
	kaas_lock(&other, 60); /* two of one rank: aborts */
}

static void unlock_unknown(void)
{
	pthread_mutex_lock(&leaf);
	kaas_unlock(&leaf); /* taken without kaas_lock: aborts */
}

static void expect_abort(void (*fn)(void), const char *says)
{
	char err[1024];
	int status = in_child(fn, err, sizeof err);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("the child did not abort (status %d): %s", status, err);
	if (!strstr(err, says))
		fail_msg("the report does not say \"%s\": %s", says, err);
}

static void t_out_of_order_aborts(void **st)
{
	(void)st;
	expect_abort(out_of_order, "taking &outer (rank 10) while holding &inner (rank 60)");
}

static void t_same_rank_aborts(void **st)
{
	(void)st;
	expect_abort(same_rank, "lock order violated");
}

static void t_rwlock_out_of_order_aborts(void **st)
{
	(void)st;
	expect_abort(rwlock_out_of_order, "taking &inner (rank 60) while holding &rw (rank 70)");
	expect_abort(under_rwlock_write_side, "taking &rw (rank 70) while holding &leaf (rank 80)");
}

static void t_unknown_unlock_aborts(void **st)
{
	(void)st;
	expect_abort(unlock_unknown, "did not take with kaas_lock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_in_order),
		cmocka_unit_test(t_cond_wait),
		cmocka_unit_test(t_trylock),
		cmocka_unit_test(t_out_of_order_aborts),
		cmocka_unit_test(t_same_rank_aborts),
		cmocka_unit_test(t_unknown_unlock_aborts),
		cmocka_unit_test(t_rwlock),
		cmocka_unit_test(t_rwlock_out_of_order_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
