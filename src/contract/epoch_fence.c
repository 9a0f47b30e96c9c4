/* epoch_fence.c — epochs owned by exclusive create (see epoch_fence.h). */
#include "contract/epoch_fence.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"
#include "util/fnv.h"
#include "util/step.h"
#include "util/lock_rank.h"

/* ------------------------------------------------ this process's own claims */

/* Claims won by this process, by substrate handle: the only memory of
 * "I own epoch E" that is not a number compared with a number.  Entries are
 * never removed (a few bytes per leadership won).  The pid keeps a forked
 * child from inheriting its parent's claims.  Kept in a hash table on
 * (dir, epoch): a broker leading 10,000 partitions looks one up per log
 * open, and a list walk made those opens quadratic. */
struct held {
	struct held *next;      /* the next in its bucket */
	struct kaas_substrate *sub;
	pid_t pid;
	uint64_t epoch;
	char *url;      /* the handle's URL: with the address, its identity */
	char dir[];
};
#define HELD_BUCKETS_MIN 256u
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static struct held **held_tab;  /* held_cap buckets (a power of two), or NULL */
static size_t held_cap, held_n;

/* FNV-1a over dir, then the epoch. */
static size_t held_hash(const char *dir, uint64_t epoch)
{
	uint64_t h = kaas_fnv64(kaas_fnv64(KAAS_FNV64_INIT, dir, strlen(dir)), &epoch, sizeof epoch);
	return (size_t)(h ^ (h >> 29));
}

/* Double the table (held_mu held); on no memory keep the old one (longer
 * chains, still correct). */
static void held_grow(void)
{
	size_t cap = held_cap ? held_cap * 2 : HELD_BUCKETS_MIN;
	struct held **tab = calloc(cap, sizeof *tab);
	if (!tab)
		return;
	for (size_t b = 0; b < held_cap; b++)
		for (struct held *h = held_tab[b], *nx; h; h = nx) {
			nx = h->next;
			size_t k = held_hash(h->dir, h->epoch) & (cap - 1);
			h->next = tab[k];
			tab[k] = h;
		}
	free(held_tab);
	held_tab = tab;
	held_cap = cap;
}

int kaas_fence_held(struct kaas_substrate *sub, const char *dir, uint64_t epoch)
{
	int found = 0;
	pid_t me = getpid();
	kaas_lock(&held_mu, KAAS_RANK_LEAF);
	struct held *h = held_cap ? held_tab[held_hash(dir, epoch) & (held_cap - 1)] : NULL;
	for (; h && !found; h = h->next)
		found = h->sub == sub && h->pid == me && h->epoch == epoch &&
			strcmp(h->dir, dir) == 0 && strcmp(h->url, sub->url ? sub->url : "") == 0;
	kaas_unlock(&held_mu);
	return found;
}

static int remember(struct kaas_substrate *sub, const char *dir, uint64_t epoch)
{
	size_t n = strlen(dir) + 1;
	struct held *h = malloc(sizeof *h + n);
	if (!h)
		return -ENOMEM;
	h->url = strdup(sub->url ? sub->url : "");
	if (!h->url) {
		free(h);
		return -ENOMEM;
	}
	h->sub = sub;
	h->pid = getpid();
	h->epoch = epoch;
	memcpy(h->dir, dir, n);
	kaas_lock(&held_mu, KAAS_RANK_LEAF);
	if (held_n >= held_cap)
		held_grow();
	if (!held_cap) {
		kaas_unlock(&held_mu);
		free(h->url);
		free(h);
		return -ENOMEM;
	}
	size_t k = held_hash(dir, epoch) & (held_cap - 1);
	h->next = held_tab[k];
	held_tab[k] = h;
	held_n++;
	kaas_unlock(&held_mu);
	return 0;
}

/* ------------------------------------------------------------------ fence */

int kaas_fence_highest(struct kaas_substrate *sub, const char *dir, uint64_t *epoch)
{
	*epoch = 0;
	int rc = kaas_claim_latest(sub, dir, KAAS_FENCE_PREFIX, epoch);
	if (rc == -ENOENT) {
		*epoch = 0;
		return 0;
	}
	return rc;
}

int kaas_fence_check(struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     uint64_t *dir_ino)
{
	/* 1. Open the directory: the close-to-open revalidation (see the header). */
	struct kaas_file *d = NULL;
	int rc = kaas_sub_open(sub, dir, KAAS_O_READ | KAAS_O_DIRECTORY, 0, &d);
	if (rc == -ENOENT)
		return kaas_sub_fail(ENOENT, "fence %s: missing: the state it fences was removed", dir);
	if (rc < 0)
		return rc;
	struct kaas_stat st;
	rc = kaas_sub_fstat(d, &st);
	kaas_sub_close(d);
	if (rc < 0)
		return rc;
	if (dir_ino && st.ino) {
		if (*dir_ino == 0)
			*dir_ino = st.ino;
		else if (*dir_ino != st.ino)
			return kaas_sub_fail(ENOENT, "fence %s: replaced by another directory: the state "
					     "it fences was removed and made again", dir);
	}
	/* 2. Look up the one name that exists iff a newer epoch was claimed. */
	char name[64];
	kaas_claim_name(name, sizeof name, KAAS_FENCE_PREFIX, epoch + 1);
	char *p = kaas_path_join(dir, name);
	if (!p)
		return -ENOMEM;
	struct kaas_file *f = NULL;
	rc = kaas_sub_open(sub, p, KAAS_O_READ, 0, &f);
	free(p);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	kaas_sub_close(f);
	return kaas_sub_fail(KAAS_FENCE_SUPERSEDED, "fence %s: epoch %" PRIu64 " is superseded (%s "
			     "exists)", dir, epoch, name);
}

int kaas_fence_claim(struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     const char *note, const char *step)
{
	if (epoch == 0)
		return kaas_sub_fail(EINVAL, "fence %s: epoch 0 cannot be claimed", dir);
	if (kaas_fence_held(sub, dir, epoch)) {
		int rc = kaas_fence_check(sub, dir, epoch, NULL);
		if (rc != -ENOENT)
			return rc;
		/* The fenced state was removed meanwhile: claim afresh. */
	}
	int rc = kaas_sub_mkdirs(sub, dir, 0755);
	if (rc < 0)
		return rc;
	uint64_t high = 0;
	rc = kaas_fence_highest(sub, dir, &high);
	if (rc < 0)
		return rc;
	if (high >= epoch)
		return kaas_sub_fail(KAAS_FENCE_SUPERSEDED, "fence %s: claim of epoch %" PRIu64
				     " refused: epoch %" PRIu64 " is claimed", dir, epoch, high);
	if (step)
		kaas_step(step);
	if (epoch - high - 1 > KAAS_FENCE_MAX_GAP)
		return kaas_sub_fail(EOVERFLOW, "fence %s: epoch %" PRIu64 " is more than %u above the "
				     "highest claimed (%" PRIu64 ")", dir, epoch, KAAS_FENCE_MAX_GAP, high);
	/* Skipped names first, lowest first: when epoch-E appears, every name
	 * below it exists (the contiguity kaas_fence_check relies on). */
	for (uint64_t n = high + 1; n < epoch; n++) {
		rc = kaas_claim_exact(sub, dir, KAAS_FENCE_PREFIX, n, "skipped");
		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	/* Fence epochs only grow: we claim above the highest seen, within the gap. */
	assert(epoch > high && epoch - high - 1 <= KAAS_FENCE_MAX_GAP);
	rc = kaas_claim_exact(sub, dir, KAAS_FENCE_PREFIX, epoch, note);
	if (rc == -EEXIST)
		return kaas_sub_fail(EEXIST, "fence %s: epoch %" PRIu64 " belongs to someone else", dir,
				     epoch);
	if (rc < 0)
		return rc;
	rc = remember(sub, dir, epoch);
	if (rc < 0)
		return rc;
	return kaas_fence_check(sub, dir, epoch, NULL);
}

int kaas_fence_claim_next(struct kaas_substrate *sub, const char *dir, const char *note,
			  uint64_t *won)
{
	for (int i = 0; i < 1000; i++) {
		uint64_t high = 0;
		int rc = kaas_sub_mkdirs(sub, dir, 0755);
		if (rc == 0)
			rc = kaas_fence_highest(sub, dir, &high);
		if (rc < 0)
			return rc;
		rc = kaas_fence_claim(sub, dir, high + 1, note, NULL);
		if (rc == 0) {
			*won = high + 1;
			return 0;
		}
		if (rc != -EEXIST && rc != KAAS_FENCE_SUPERSEDED)
			return rc;
	}
	return kaas_sub_fail(EAGAIN, "fence %s: 1000 racers in a row claimed the next epoch", dir);
}
