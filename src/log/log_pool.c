/* log_pool.c — the process-wide log I/O pool: a few threads that run the
 * work of every open log (a log's sync task: group commit and fsync; its
 * ack task: fence check, publication, completions), taking from a ready
 * queue only the tasks that have work.  An idle log is in no queue and
 * costs no thread. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/lock_rank.h"
#include "util/thread_name.h"

#define MAX_THREADS 1024u
#define DEFAULT_THREADS_CAP 32u

enum { TASK_IDLE, TASK_QUEUED, TASK_RUNNING, TASK_AGAIN };

static struct {
	pthread_mutex_t mu;          /* queue, task states, stop: a leaf */
	pthread_cond_t work_cv;      /* pool threads: a task queued, or stop */
	pthread_cond_t idle_cv;      /* kaas_logi_task_wait_idle: a task went idle */
	struct kaas_fifo ready;      /* tasks with work, oldest first */
	bool stop;

	pthread_mutex_t life_mu;     /* users, threads: start and stop */
	unsigned users;              /* open logs (kaas_logi_pool_acquire) */
	pthread_t *threads;
	unsigned nthreads;           /* running */
	atomic_uint want;            /* configured size, 0: the default */
} pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.work_cv = PTHREAD_COND_INITIALIZER,
	.idle_cv = PTHREAD_COND_INITIALIZER,
	.life_mu = PTHREAD_MUTEX_INITIALIZER,
};

static _Thread_local bool on_pool_thread;

static unsigned default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned t = n > 0 ? 2u * (unsigned)n : 2u;
	if (t > DEFAULT_THREADS_CAP)
		t = DEFAULT_THREADS_CAP;
	return t < 2 ? 2 : t;
}

int kaas_log_io_configure(unsigned threads, unsigned max_open_files)
{
	if (threads > MAX_THREADS)
		return kaas_sub_fail(EINVAL, "log I/O threads: %u is above %u", threads, MAX_THREADS);
	atomic_store(&pool.want, threads);
	kaas_logi_files_set_limit(max_open_files);
	return 0;
}

unsigned kaas_log_io_threads(void)
{
	kaas_lock(&pool.life_mu, KAAS_RANK_LOGPOOL_LIFE);
	unsigned n = pool.nthreads;
	kaas_unlock(&pool.life_mu);
	if (n)
		return n;
	unsigned w = atomic_load(&pool.want);
	return w ? w : default_threads();
}

unsigned kaas_log_io_max_open_files(void)
{
	return kaas_logi_files_limit();
}

void kaas_logi_task_init(struct kaas_logi_task *t, void (*run)(struct kaas_logi_task *))
{
	t->link.next = NULL;
	t->state = TASK_IDLE;
	t->run = run;
}

/* pool.mu held. */
static void push(struct kaas_logi_task *t)
{
	kaas_fifo_push(&pool.ready, &t->link);
	t->state = TASK_QUEUED;
}

void kaas_logi_task_schedule(struct kaas_logi_task *t)
{
	kaas_lock(&pool.mu, KAAS_RANK_LOGPOOL);
	assert(!pool.stop); /* a task belongs to an open log, which holds the pool */
	switch (t->state) {
	case TASK_IDLE:
		push(t);
		pthread_cond_signal(&pool.work_cv);
		break;
	case TASK_RUNNING:
		t->state = TASK_AGAIN; /* requeued when the run ends: never twice at once */
		break;
	default:
		break; /* queued already, or will be */
	}
	kaas_unlock(&pool.mu);
}

void kaas_logi_task_wait_idle(struct kaas_logi_task *t)
{
	assert(!on_pool_thread); /* a pool thread waiting for the pool could wait forever */
	kaas_lock(&pool.mu, KAAS_RANK_LOGPOOL);
	while (t->state != TASK_IDLE)
		pthread_cond_wait(&pool.idle_cv, &pool.mu);
	kaas_unlock(&pool.mu);
}

bool kaas_logi_on_pool_thread(void)
{
	return on_pool_thread;
}

static void *pool_main(void *arg)
{
	(void)arg;
	kaas_thread_name("kaas-logio");
	on_pool_thread = true;
	kaas_lock(&pool.mu, KAAS_RANK_LOGPOOL);
	for (;;) {
		while (!pool.ready.head && !pool.stop)
			pthread_cond_wait(&pool.work_cv, &pool.mu);
		struct kaas_fifo_link *l = kaas_fifo_pop(&pool.ready);
		if (!l)
			break; /* stop, and nothing queued (every log is closed) */
		struct kaas_logi_task *t = KAAS_FIFO_ENTRY(l, struct kaas_logi_task, link);
		t->state = TASK_RUNNING;
		kaas_unlock(&pool.mu);
		assert_not_held(&pool.mu);
		t->run(t);
		kaas_lock(&pool.mu, KAAS_RANK_LOGPOOL);
		if (t->state == TASK_AGAIN) {
			push(t); /* at the tail: other logs' tasks go first */
		} else {
			t->state = TASK_IDLE;
			pthread_cond_broadcast(&pool.idle_cv);
		}
	}
	kaas_unlock(&pool.mu);
	return NULL;
}

/* life_mu held: stop and join the running threads. */
static void stop_threads(void)
{
	kaas_lock(&pool.mu, KAAS_RANK_LOGPOOL);
	pool.stop = true;
	pthread_cond_broadcast(&pool.work_cv);
	kaas_unlock(&pool.mu);
	for (unsigned i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);
	free(pool.threads);
	pool.threads = NULL;
	pool.nthreads = 0;
	assert(!pool.ready.head);
}

int kaas_logi_pool_acquire(void)
{
	assert(!on_pool_thread);
	kaas_lock(&pool.life_mu, KAAS_RANK_LOGPOOL_LIFE);
	if (pool.users == 0) {
		unsigned want = atomic_load(&pool.want);
		unsigned n = want ? want : default_threads();
		pool.threads = calloc(n, sizeof *pool.threads);
		if (!pool.threads) {
			kaas_unlock(&pool.life_mu);
			return -ENOMEM;
		}
		kaas_lock(&pool.mu, KAAS_RANK_LOGPOOL);
		pool.stop = false;
		kaas_unlock(&pool.mu);
		for (unsigned i = 0; i < n; i++) {
			int rc = pthread_create(&pool.threads[i], NULL, pool_main, NULL);
			if (rc != 0) {
				stop_threads();
				kaas_unlock(&pool.life_mu);
				return kaas_sub_fail(rc, "log I/O pool: cannot start thread %u of %u", i + 1, n);
			}
			pool.nthreads = i + 1;
		}
	}
	pool.users++;
	kaas_unlock(&pool.life_mu);
	return 0;
}

void kaas_logi_pool_release(void)
{
	assert(!on_pool_thread); /* it may join the pool's threads */
	kaas_lock(&pool.life_mu, KAAS_RANK_LOGPOOL_LIFE);
	assert(pool.users > 0);
	if (--pool.users == 0)
		stop_threads();
	kaas_unlock(&pool.life_mu);
}
