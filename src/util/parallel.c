/* parallel.c — a bounded parallel-for (see parallel.h). */
#include "util/parallel.h"
#include "util/thread_name.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define MAX_HELPERS 64u

struct job {
	size_t n;
	atomic_size_t next;     /* the next index to hand out */
	kaas_parallel_fn fn;
	void *arg;
};

static void work(struct job *j)
{
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
		if (i >= j->n)
			return;
		j->fn(j->arg, i);
	}
}

static void *helper_main(void *arg)
{
	kaas_thread_name("kaas-helper");
	work(arg);
	return NULL;
}

unsigned kaas_parallel_for(size_t n, unsigned threads, kaas_parallel_fn fn, void *arg)
{
	assert(threads >= 1 && fn);
	struct job j = { .n = n, .fn = fn, .arg = arg };
	atomic_init(&j.next, 0);
	size_t want = threads - 1u;
	if (want > MAX_HELPERS)
		want = MAX_HELPERS;
	if (n <= 1)
		want = 0;
	else if (want > n - 1)
		want = n - 1;
	pthread_t helpers[MAX_HELPERS];
	unsigned started = 0;
	for (size_t k = 0; k < want; k++)
		if (pthread_create(&helpers[started], NULL, helper_main, &j) == 0)
			started++;
	work(&j);
	for (unsigned k = 0; k < started; k++)
		pthread_join(helpers[k], NULL);
	assert(atomic_load(&j.next) >= n);
	return started + 1;
}
