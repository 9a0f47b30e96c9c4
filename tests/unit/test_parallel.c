/* test_parallel.c — util/parallel.h: every index runs exactly once, the
 * work really overlaps (index 0 waits, bounded, for index 1 to start: only
 * a second thread can start it), one thread means the caller alone in
 * order, and nothing runs for n == 0. */
#include "util/parallel.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#define N 1000

static atomic_int counts[N];

static void count(void *arg, size_t i)
{
	(void)arg;
	atomic_fetch_add(&counts[i], 1);
}

static void t_each_once(void **st)
{
	(void)st;
	for (size_t i = 0; i < N; i++)
		atomic_init(&counts[i], 0);
	unsigned ran = kaas_parallel_for(N, 8, count, NULL);
	assert_true(ran >= 1 && ran <= 8);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(atomic_load(&counts[i]), 1);
}

static atomic_int started1;
static atomic_int overlapped;

static void wait_for_one(void *arg, size_t i)
{
	(void)arg;
	if (i == 1) {
		atomic_store(&started1, 1);
		return;
	}
	/* Index 0: up to 10 s for index 1 to start elsewhere. */
	for (int k = 0; k < 10000 && !atomic_load(&started1); k++) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	atomic_store(&overlapped, atomic_load(&started1));
}

static void t_overlaps(void **st)
{
	(void)st;
	atomic_init(&started1, 0);
	atomic_init(&overlapped, 0);
	assert_int_equal(kaas_parallel_for(2, 4, wait_for_one, NULL), 2);
	assert_int_equal(atomic_load(&overlapped), 1);
}

static pthread_t caller;
static size_t order[16], norder;

static void on_caller(void *arg, size_t i)
{
	(void)arg;
	assert_true(pthread_equal(pthread_self(), caller));
	order[norder++] = i;
}

static void t_one_thread_is_the_caller(void **st)
{
	(void)st;
	caller = pthread_self();
	norder = 0;
	assert_int_equal(kaas_parallel_for(16, 1, on_caller, NULL), 1);
	assert_int_equal(norder, 16);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(order[i], i);
	norder = 0;
	assert_int_equal(kaas_parallel_for(0, 8, on_caller, NULL), 1);
	assert_int_equal(norder, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_each_once),
		cmocka_unit_test(t_overlaps),
		cmocka_unit_test(t_one_thread_is_the_caller),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
