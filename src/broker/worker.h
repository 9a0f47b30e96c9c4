/*
 * worker.h — one thread running jobs strictly in submission order.
 *
 * Produce requests are validated (CRC, decompression) and appended to the
 * partition logs here rather than on the network loop: the CPU cost of
 * decompressing and the log's back-pressure (kaas_log_append blocks while
 * too many bytes wait for their fsync) then never stall other connections,
 * and FIFO order keeps the appends in the order the requests arrived.
 */
#ifndef KAAS_BROKER_WORKER_H
#define KAAS_BROKER_WORKER_H

#include "util/fifo.h"

struct kaas_worker;

struct kaas_job {
	struct kaas_fifo_link link;         /* in the worker's queue */
	void (*run)(struct kaas_job *job);  /* on the worker thread */
};

/* Start a worker thread: 0 and *out, or -errno. */
int kaas_worker_start(struct kaas_worker **out);
/* Queue a job (any thread).  With w == NULL the job runs at once on the
 * caller's thread. */
void kaas_worker_submit(struct kaas_worker *w, struct kaas_job *job);
/* Run every queued job, then stop and free the worker (NULL: no-op). */
void kaas_worker_stop(struct kaas_worker *w);

#endif
