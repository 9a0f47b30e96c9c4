/* epoch_fence.c — epochs owned by exclusive create (see epoch_fence.h). */
#include "contract/epoch_fence.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
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

/* ------------------------------------------------------------ lost epochs */

/* A ring of the last KAAS_FENCE_LOST_MAX lost epochs (see the header). */
struct lost {
	struct kaas_substrate *sub;
	uint64_t epoch;
	int unowned;
	char *dir;
};
static pthread_mutex_t lost_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lost lost_ring[KAAS_FENCE_LOST_MAX];
static size_t lost_first, lost_n;
static pid_t lost_pid;  /* a forked child does not inherit its parent's */

static void lost_drop_inherited(void)
{
	if (lost_pid == getpid())
		return;
	for (size_t i = 0; i < lost_n; i++)
		free(lost_ring[(lost_first + i) % KAAS_FENCE_LOST_MAX].dir);
	lost_first = lost_n = 0;
	lost_pid = getpid();
}

/* Remember a lost epoch (on no memory it is not remembered: the claim
 * still fails, as before there was a memory). */
static void lost_note(struct kaas_substrate *sub, const char *dir, uint64_t epoch, int unowned)
{
	char *d = strdup(dir);
	if (!d)
		return;
	kaas_lock(&lost_mu, KAAS_RANK_LEAF);
	lost_drop_inherited();
	if (lost_n == KAAS_FENCE_LOST_MAX) {
		free(lost_ring[lost_first].dir);
		lost_first = (lost_first + 1) % KAAS_FENCE_LOST_MAX;
		lost_n--;
	}
	lost_ring[(lost_first + lost_n) % KAAS_FENCE_LOST_MAX] =
		(struct lost){ .sub = sub, .epoch = epoch, .unowned = unowned, .dir = d };
	lost_n++;
	assert(lost_n <= KAAS_FENCE_LOST_MAX);
	kaas_unlock(&lost_mu);
}

size_t kaas_fence_lost_take(kaas_fence_lost_cb cb, void *arg)
{
	struct lost v[KAAS_FENCE_LOST_MAX];
	kaas_lock(&lost_mu, KAAS_RANK_LEAF);
	lost_drop_inherited();
	size_t n = lost_n;
	for (size_t i = 0; i < n; i++)
		v[i] = lost_ring[(lost_first + i) % KAAS_FENCE_LOST_MAX];
	lost_first = lost_n = 0;
	kaas_unlock(&lost_mu);
	for (size_t i = 0; i < n; i++) {
		cb(arg, v[i].sub, v[i].dir, v[i].epoch, v[i].unowned);
		free(v[i].dir);
	}
	return n;
}

int kaas_fence_recorded(struct kaas_substrate *sub, const char *dir, uint64_t epoch)
{
	char name[64];
	kaas_claim_name(name, sizeof name, KAAS_FENCE_PREFIX, epoch);
	char *p = kaas_path_join(dir, name);
	if (!p)
		return -ENOMEM;
	struct kaas_file *f = NULL;
	int rc = kaas_sub_open(sub, p, KAAS_O_READ, 0, &f);
	free(p);
	if (rc < 0)
		return rc;
	char c;
	ssize_t n = kaas_sub_pread(f, &c, 1, 0);
	kaas_sub_close(f);
	return n < 0 ? (int)n : n > 0;
}

/* A claim of `epoch` refused because epoch-<epoch> exists and is not ours
 * (rc: -EEXIST or KAAS_FENCE_SUPERSEDED, the detail already set): remember
 * it, say in the detail whether an owner is recorded, return rc. */
static int lost_epoch(struct kaas_substrate *sub, const char *dir, uint64_t epoch, int rc)
{
	assert(rc == -EEXIST || rc == KAAS_FENCE_SUPERSEDED);
	char why[512];
	snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
	int rec = kaas_fence_recorded(sub, dir, epoch);
	lost_note(sub, dir, epoch, rec == 0);
	return kaas_sub_fail(rc, "%s; %s: a new epoch must be handed out", why,
			     rec == 0 ? "its claim records no owner (a create whose reply was lost "
					"answers EEXIST after it succeeded, and nobody can tell whose it is)"
				  : rec > 0 ? "its claim records another owner"
					    : "its claim could not be read");
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

/* kaas_fence_claim; `handed`: the epoch was handed to us (a refusal is a
 * lost epoch), not picked as the next free one (a refusal is a racer). */
static int claim(struct kaas_substrate *sub, const char *dir, uint64_t epoch, const char *note,
		 const char *step, int handed)
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
	if (high >= epoch) {
		rc = kaas_sub_fail(KAAS_FENCE_SUPERSEDED, "fence %s: claim of epoch %" PRIu64
				   " refused: epoch %" PRIu64 " is claimed", dir, epoch, high);
		/* Our own epoch is the highest: nobody superseded it, we lost it. */
		return handed && high == epoch ? lost_epoch(sub, dir, epoch, rc) : rc;
	}
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
	rc = kaas_claim_exact(sub, dir, KAAS_FENCE_PREFIX, epoch, note && *note ? note : "claimed");
	if (rc == -EEXIST) {
		rc = kaas_sub_fail(EEXIST, "fence %s: epoch %" PRIu64 " is not ours: its exclusive "
				   "create answered EEXIST", dir, epoch);
		return handed ? lost_epoch(sub, dir, epoch, rc) : rc;
	}
	if (rc < 0)
		return rc;
	rc = remember(sub, dir, epoch);
	if (rc < 0)
		return rc;
	return kaas_fence_check(sub, dir, epoch, NULL);
}

int kaas_fence_claim(struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     const char *note, const char *step)
{
	return claim(sub, dir, epoch, note, step, 1);
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
		rc = claim(sub, dir, high + 1, note, NULL, 0);
		if (rc == 0) {
			*won = high + 1;
			return 0;
		}
		if (rc != -EEXIST && rc != KAAS_FENCE_SUPERSEDED)
			return rc;
	}
	return kaas_sub_fail(EAGAIN, "fence %s: 1000 racers in a row claimed the next epoch", dir);
}
