/* log_files.c — the process-wide cache of open segment handles: an LRU with
 * a limit, so that thousands of partitions do not hold thousands of
 * descriptors.  Handles are reopened on demand by their owners. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "log/log_internal.h"
#include "util/assert_held.h"
#include "util/lock_rank.h"

#define DEFAULT_MAX_OPEN_FILES 1000u

static struct {
	pthread_mutex_t mu;               /* the list and count; a leaf but for trylocks */
	struct kaas_logi_fslot *mru, *lru;
	unsigned count;                   /* slots listed (= handles open) */
	atomic_uint limit;                /* 0: the default */
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

void kaas_logi_files_set_limit(unsigned max_open_files)
{
	atomic_store(&cache.limit, max_open_files);
}

unsigned kaas_logi_files_limit(void)
{
	unsigned l = atomic_load(&cache.limit);
	return l ? l : DEFAULT_MAX_OPEN_FILES;
}

unsigned kaas_logi_files_open(void)
{
	kaas_lock(&cache.mu, KAAS_RANK_FILE_CACHE);
	unsigned n = cache.count;
	kaas_unlock(&cache.mu);
	return n;
}

void kaas_logi_fslot_init(struct kaas_logi_fslot *s, pthread_mutex_t *guard, int guard_rank,
			  atomic_int *pins)
{
	s->f = NULL;
	s->guard = guard;
	s->guard_rank = guard_rank;
	s->pins = pins;
	s->prev = s->next = NULL;
	s->listed = false;
	s->evict_rc = 0;
}

/* cache.mu held. */
static void unlist(struct kaas_logi_fslot *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		cache.mru = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		cache.lru = s->prev;
	s->prev = s->next = NULL;
	s->listed = false;
	cache.count--;
}

/* cache.mu held. */
static void push_mru(struct kaas_logi_fslot *s)
{
	s->prev = NULL;
	s->next = cache.mru;
	if (cache.mru)
		cache.mru->prev = s;
	else
		cache.lru = s;
	cache.mru = s;
	s->listed = true;
	cache.count++;
}

/* Close least recently used handles until the count is within the limit.
 * A victim is a slot other than `self` whose owner lock is free (trylock:
 * this never waits, so it adds no lock-order edge) and that no reader has
 * pinned (a slice holds the file it names).  When every handle is busy the
 * count stays above the limit until the next open. */
static void evict_over_limit(struct kaas_logi_fslot *self)
{
	for (;;) {
		kaas_lock(&cache.mu, KAAS_RANK_FILE_CACHE);
		if (cache.count <= kaas_logi_files_limit()) {
			kaas_unlock(&cache.mu);
			return;
		}
		struct kaas_logi_fslot *v = cache.lru;
		for (; v; v = v->prev) {
			if (v == self || (v->pins && atomic_load(v->pins) > 1))
				continue;
			if (kaas_trylock(v->guard, v->guard_rank) == 0)
				break;
		}
		if (!v) {
			kaas_unlock(&cache.mu);
			return;
		}
		unlist(v);
		kaas_unlock(&cache.mu);
		/* The owner's lock is ours: nobody uses v->f now, and the owner
		 * cannot free the slot before we unlock (it closes under it). */
		struct kaas_file *f = v->f;
		v->f = NULL;
		assert_not_held(&cache.mu); /* no I/O under the cache's lock */
		int rc = kaas_sub_close(f);
		if (rc < 0 && !v->evict_rc)
			v->evict_rc = rc;
		kaas_unlock(v->guard);
	}
}

void kaas_logi_fslot_adopt(struct kaas_logi_fslot *s, struct kaas_file *f)
{
	assert_held(s->guard);
	assert(!s->f && !s->listed);
	s->f = f;
	kaas_lock(&cache.mu, KAAS_RANK_FILE_CACHE);
	push_mru(s);
	kaas_unlock(&cache.mu);
	evict_over_limit(s);
}

void kaas_logi_fslot_touch(struct kaas_logi_fslot *s)
{
	assert_held(s->guard);
	kaas_lock(&cache.mu, KAAS_RANK_FILE_CACHE);
	if (s->listed && cache.mru != s) {
		unlist(s);
		push_mru(s);
	}
	kaas_unlock(&cache.mu);
}

int kaas_logi_fslot_open(struct kaas_substrate *sub, struct kaas_logi_fslot *s, const char *path,
			 int flags)
{
	assert_held(s->guard);
	assert(!(flags & (KAAS_O_CREAT | KAAS_O_TRUNC))); /* a reopen never creates */
	if (s->f) {
		kaas_logi_fslot_touch(s);
		return 0;
	}
	struct kaas_file *f = NULL;
	int rc = kaas_sub_open(sub, path, flags, 0, &f);
	if (rc < 0)
		return rc;
	kaas_logi_fslot_adopt(s, f);
	return 0;
}

int kaas_logi_fslot_close(struct kaas_logi_fslot *s)
{
	assert_held(s->guard);
	if (!s->f)
		return 0;
	kaas_lock(&cache.mu, KAAS_RANK_FILE_CACHE);
	if (s->listed)
		unlist(s);
	kaas_unlock(&cache.mu);
	struct kaas_file *f = s->f;
	s->f = NULL;
	return kaas_sub_close(f);
}
