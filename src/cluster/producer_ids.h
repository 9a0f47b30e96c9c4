/*
 * producer_ids.h — producer ids that are never reissued.
 *
 * Ids come from blocks claimed by exclusive create in the cluster directory:
 * <cluster>/producer-ids/block-<n:020> owns ids [n*B, (n+1)*B) with
 * B = KAAS_PID_BLOCK_SIZE.  A claim is durable the moment it succeeds, so a
 * broker that crashes with half a block unused simply loses those ids: no
 * later broker (or a restart of the same one) can win that block again, and
 * a fresh producer never lands on a dead producer's sequence history.
 *
 * Block 0 is never used (id 0 upward would collide with clients that treat
 * small ids specially); the first block claimed is 1.
 *
 * Thread-safe: one allocator may be shared by the broker's threads.
 */
#ifndef KAAS_PRODUCER_IDS_H
#define KAAS_PRODUCER_IDS_H

#include <pthread.h>
#include <stdint.h>

#include "substrate/substrate.h"

#define KAAS_PID_BLOCK_SIZE 1000u
#define KAAS_PID_DIR "producer-ids"

struct kaas_pid_alloc {
	struct kaas_substrate *sub; /* the cluster substrate (not owned) */
	pthread_mutex_t mu;
	uint64_t next;              /* next id to hand out */
	uint64_t end;               /* end of the current block (exclusive); next == end: none */
	uint64_t block;             /* the block owned, 0 if none yet */
};

/* Prepare an allocator over the cluster substrate; claims nothing yet.
 * Creates <cluster>/producer-ids if missing.  0 or -errno. */
int kaas_pid_alloc_init(struct kaas_pid_alloc *a, struct kaas_substrate *cluster);

/* Hand out a fresh producer id (>= KAAS_PID_BLOCK_SIZE), claiming a new
 * block when the current one is used up.  0 and *pid, or -errno (the
 * cluster volume failed: the caller answers with a retriable error). */
int kaas_pid_next(struct kaas_pid_alloc *a, int64_t *pid);

void kaas_pid_alloc_destroy(struct kaas_pid_alloc *a);

#endif
