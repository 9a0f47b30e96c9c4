/*
 * lanes.h — produce lanes: one ordered queue of work items per partition,
 * served by a small pool of threads (issue 19).
 *
 * A partition's items run one at a time, in submission order; items of
 * different partitions run concurrently on the pool's threads.  An item
 * that cannot go on without blocking (its log has no room for the batch:
 * kaas_log_append_nowait answered KAAS_ENOROOM) returns KAAS_LANE_PARK: its
 * lane then holds no thread until kaas_lane_resume (the log's room
 * callback) queues it again, and the same item runs again.  So a slow
 * partition (a slow volume, back-pressure) delays only the items of its
 * own lane, and the pool's threads are never all waiting on one partition.
 *
 * Fairness: a run serves at most a few items of a lane, then puts the
 * lane back at the tail of the ready queue.
 *
 * Threads: kaas_lane_submit and kaas_lane_new on any thread (kaasd: the
 * loop); kaas_lane_resume on any thread, also from a log callback (it
 * takes only the pool's leaf lock); items run on the pool's threads.
 */
#ifndef KAAS_BROKER_LANES_H
#define KAAS_BROKER_LANES_H

#include "util/fifo.h"

struct kaas_lanes; /* the pool */
struct kaas_lane;  /* one partition's queue */

#define KAAS_LANE_DONE 0 /* the item is finished: the lane goes on with the next */
#define KAAS_LANE_PARK 1 /* not finished: run it again after kaas_lane_resume */

struct kaas_lane_item {
	struct kaas_fifo_link link; /* in its lane's queue */
	/* Runs on a pool thread.  After returning KAAS_LANE_DONE the item
	 * belongs to its owner again (the lane never touches it after: the
	 * owner may free it from a completion it queued in run). */
	int (*run)(struct kaas_lane_item *it);
};

/* Start the pool with `threads` threads (0: online CPUs, at least 2, at
 * most 16).  0 and *out, or -errno. */
int kaas_lanes_start(unsigned threads, struct kaas_lanes **out);
/* Wait until no lane has an item queued, running or parked, then stop and
 * join the threads (NULL: no-op).  No submit or kaas_lane_new after it.
 * The pool's memory is freed here when every lane was released, else by
 * the last kaas_lane_release (a topic freed after the server stopped). */
void kaas_lanes_stop(struct kaas_lanes *l);
unsigned kaas_lanes_threads(const struct kaas_lanes *l);

/* A new empty lane of pool l, or NULL (no memory). */
struct kaas_lane *kaas_lane_new(struct kaas_lanes *l);
/* Give the lane up (NULL: no-op): freed at once when idle, else by the
 * pool when its last item is done.  No submit after this. */
void kaas_lane_release(struct kaas_lane *lane);
/* Queue an item at the lane's tail. */
void kaas_lane_submit(struct kaas_lane *lane, struct kaas_lane_item *it);
/* The lane's parked item may go on: queue the lane again (called once per
 * KAAS_LANE_PARK, possibly before that item's run has returned). */
void kaas_lane_resume(struct kaas_lane *lane);

#endif
