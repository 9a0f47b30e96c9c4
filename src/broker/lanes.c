/* lanes.c — per-partition ordered produce lanes on a small pool (lanes.h). */
#include "broker/lanes.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/lock_rank.h"
#include "util/thread_name.h"

/* Items one run of a lane serves before the lane goes back to the tail. */
#define ITEMS_PER_RUN 8
#define MAX_THREADS 64

enum lane_state {
	LANE_IDLE,    /* no item, in no queue */
	LANE_QUEUED,  /* in the ready queue */
	LANE_RUNNING, /* on a pool thread */
	LANE_PARKED,  /* its current item waits for kaas_lane_resume */
};

struct kaas_lane {
	struct kaas_lanes *pool;
	struct kaas_fifo_link link;     /* ready queue */
	struct kaas_fifo items;         /* waiting, in order */
	struct kaas_lane_item *current; /* taken off `items`: running or parked */
	enum lane_state state;
	bool resumed;                   /* resumed while running: run again */
	bool released;                  /* free when idle */
};

struct kaas_lanes {
	pthread_mutex_t mu;           /* everything below and every lane's fields */
	pthread_cond_t work_cv;         /* a lane was queued, or stop */
	pthread_cond_t idle_cv;         /* busy dropped to 0 */
	struct kaas_fifo ready;
	unsigned busy;                  /* lanes not idle */
	unsigned nlanes;                /* lanes not released: the pool's memory
	                                   outlives kaas_lanes_stop until the last
	                                   is released */
	bool stop;
	unsigned nthreads;
	pthread_t threads[MAX_THREADS];
};

static unsigned default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 2)
		n = 2;
	if (n > 16)
		n = 16;
	return (unsigned)n;
}

/* mu held: a lane with work goes to the ready queue's tail. */
static void enqueue_locked(struct kaas_lanes *l, struct kaas_lane *lane)
{
	lane->state = LANE_QUEUED;
	kaas_fifo_push(&l->ready, &lane->link);
	pthread_cond_signal(&l->work_cv);
}

/* mu held: the lane has nothing left. */
static void go_idle_locked(struct kaas_lanes *l, struct kaas_lane *lane)
{
	lane->state = LANE_IDLE;
	assert(l->busy > 0);
	if (--l->busy == 0)
		pthread_cond_broadcast(&l->idle_cv);
	if (lane->released)
		free(lane);
}

static void *pool_main(void *arg)
{
	struct kaas_lanes *l = arg;
	kaas_thread_name("kaas-lane");
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	for (;;) {
		while (!l->ready.head && !l->stop)
			pthread_cond_wait(&l->work_cv, &l->mu);
		struct kaas_fifo_link *lk = kaas_fifo_pop(&l->ready);
		if (!lk)
			break; /* stop, and nothing queued */
		struct kaas_lane *lane = KAAS_FIFO_ENTRY(lk, struct kaas_lane, link);
		assert(lane->state == LANE_QUEUED);
		lane->state = LANE_RUNNING;
		bool parked = false;
		for (int n = 0; n < ITEMS_PER_RUN; n++) {
			if (!lane->current) {
				struct kaas_fifo_link *il = kaas_fifo_pop(&lane->items);
				if (!il)
					break;
				lane->current = KAAS_FIFO_ENTRY(il, struct kaas_lane_item, link);
			}
			struct kaas_lane_item *it = lane->current;
			lane->resumed = false;
			kaas_unlock(&l->mu);
			int r = it->run(it); /* after DONE, `it` is not ours */
			kaas_lock(&l->mu, KAAS_RANK_LANES);
			if (r == KAAS_LANE_DONE) {
				lane->current = NULL;
				continue;
			}
			assert(r == KAAS_LANE_PARK);
			if (lane->resumed)
				continue; /* resumed before we got here: run it again */
			lane->state = LANE_PARKED;
			parked = true;
			break;
		}
		if (parked)
			continue;
		if (lane->current || lane->items.head)
			enqueue_locked(l, lane); /* more: after the other lanes */
		else
			go_idle_locked(l, lane);
	}
	kaas_unlock(&l->mu);
	return NULL;
}

int kaas_lanes_start(unsigned threads, struct kaas_lanes **out)
{
	if (threads == 0)
		threads = default_threads();
	if (threads > MAX_THREADS)
		return -EINVAL;
	struct kaas_lanes *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->work_cv, NULL);
	pthread_cond_init(&l->idle_cv, NULL);
	for (unsigned i = 0; i < threads; i++) {
		int rc = pthread_create(&l->threads[i], NULL, pool_main, l);
		if (rc != 0) {
			l->nthreads = i;
			kaas_lanes_stop(l);
			return -rc;
		}
		l->nthreads = i + 1;
	}
	*out = l;
	return 0;
}

static void pool_free(struct kaas_lanes *l)
{
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->work_cv);
	pthread_cond_destroy(&l->idle_cv);
	free(l);
}

void kaas_lanes_stop(struct kaas_lanes *l)
{
	if (!l)
		return;
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	while (l->busy)
		pthread_cond_wait(&l->idle_cv, &l->mu);
	l->stop = true;
	pthread_cond_broadcast(&l->work_cv);
	kaas_unlock(&l->mu);
	for (unsigned i = 0; i < l->nthreads; i++)
		pthread_join(l->threads[i], NULL);
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	l->nthreads = 0;
	bool last = l->nlanes == 0;
	kaas_unlock(&l->mu);
	if (last)
		pool_free(l);
}

unsigned kaas_lanes_threads(const struct kaas_lanes *l)
{
	return l ? l->nthreads : 0;
}

struct kaas_lane *kaas_lane_new(struct kaas_lanes *l)
{
	struct kaas_lane *lane = calloc(1, sizeof(*lane));
	if (!lane)
		return NULL;
	lane->pool = l;
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	assert(!l->stop);
	l->nlanes++;
	kaas_unlock(&l->mu);
	return lane;
}

void kaas_lane_release(struct kaas_lane *lane)
{
	if (!lane)
		return;
	struct kaas_lanes *l = lane->pool;
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	assert(!lane->released);
	lane->released = true;
	bool now = lane->state == LANE_IDLE;
	assert(l->nlanes > 0);
	bool last = --l->nlanes == 0 && l->stop && l->nthreads == 0;
	kaas_unlock(&l->mu);
	if (now)
		free(lane);
	if (last)
		pool_free(l); /* stopped already: no lane and no thread uses it */
}

void kaas_lane_submit(struct kaas_lane *lane, struct kaas_lane_item *it)
{
	struct kaas_lanes *l = lane->pool;
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	assert(!lane->released && !l->stop);
	kaas_fifo_push(&lane->items, &it->link);
	if (lane->state == LANE_IDLE) {
		l->busy++;
		enqueue_locked(l, lane);
	}
	kaas_unlock(&l->mu);
}

void kaas_lane_resume(struct kaas_lane *lane)
{
	struct kaas_lanes *l = lane->pool;
	kaas_lock(&l->mu, KAAS_RANK_LANES);
	if (lane->state == LANE_PARKED)
		enqueue_locked(l, lane);
	else if (lane->state == LANE_RUNNING)
		lane->resumed = true;
	kaas_unlock(&l->mu);
}
