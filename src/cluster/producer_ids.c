/* producer_ids.c — producer-id blocks claimed by exclusive create. */
#include "cluster/producer_ids.h"

#include <errno.h>

#include "contract/contract.h"
#include "util/lock_rank.h"

int kaas_pid_alloc_init(struct kaas_pid_alloc *a, struct kaas_substrate *cluster)
{
	a->sub = cluster;
	a->next = a->end = a->block = 0;
	int rc = kaas_sub_mkdirs(cluster, KAAS_PID_DIR, 0755);
	if (rc < 0)
		return rc;
	return -pthread_mutex_init(&a->mu, NULL);
}

static int claim_block(struct kaas_pid_alloc *a)
{
	uint64_t latest = 0;
	int rc = kaas_claim_latest(a->sub, KAAS_PID_DIR, "block", &latest);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	/* Start past the newest claim anyone made: blocks only go up.  Racers
	 * that lose a number move on to the next. */
	uint64_t won;
	rc = kaas_claim(a->sub, KAAS_PID_DIR, "block", latest + 1, 1000, NULL, &won);
	if (rc < 0)
		return rc;
	if (won >= (uint64_t)INT64_MAX / KAAS_PID_BLOCK_SIZE)
		return kaas_sub_fail(EOVERFLOW, "producer id blocks exhausted");
	a->block = won;
	a->next = won * KAAS_PID_BLOCK_SIZE;
	a->end = a->next + KAAS_PID_BLOCK_SIZE;
	return 0;
}

int kaas_pid_next(struct kaas_pid_alloc *a, int64_t *pid)
{
	kaas_lock(&a->mu, KAAS_RANK_PID_ALLOC);
	int rc = 0;
	if (a->next == a->end)
		rc = claim_block(a);
	if (rc == 0)
		*pid = (int64_t)a->next++;
	kaas_unlock(&a->mu);
	return rc;
}

void kaas_pid_alloc_destroy(struct kaas_pid_alloc *a)
{
	pthread_mutex_destroy(&a->mu);
}
