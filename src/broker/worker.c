/* worker.c — a FIFO job thread (see worker.h). */
#include "broker/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct kaas_worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct kaas_fifo jobs;
	int stop;
};

static void *worker_main(void *arg)
{
	struct kaas_worker *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->jobs.head && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		struct kaas_fifo_link *l = kaas_fifo_pop(&w->jobs);
		if (!l)
			break; /* stop requested and nothing left */
		struct kaas_job *j = KAAS_FIFO_ENTRY(l, struct kaas_job, link);
		pthread_mutex_unlock(&w->mu);
		j->run(j);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int kaas_worker_start(struct kaas_worker **out)
{
	struct kaas_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	int rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		free(w);
		return -rc;
	}
	*out = w;
	return 0;
}

void kaas_worker_submit(struct kaas_worker *w, struct kaas_job *job)
{
	if (!w) {
		job->run(job);
		return;
	}
	pthread_mutex_lock(&w->mu);
	kaas_fifo_push(&w->jobs, &job->link);
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void kaas_worker_stop(struct kaas_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}
