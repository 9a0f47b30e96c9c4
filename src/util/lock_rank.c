/* lock_rank.c — per-thread held-lock stacks checking the rank order
 * (lock_rank.h).  Empty unless KAAS_LOCK_RANK is defined. */
#include "util/lock_rank.h"

#ifdef KAAS_LOCK_RANK

#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>

/* Deeper nesting than any path of the broker takes; beyond it the check
 * gives up loudly rather than missing an entry. */
#define MAX_HELD 32

struct held {
	const void *m; /* a pthread_mutex_t or a pthread_rwlock_t */
	int rank;
	const char *what;
};

static _Thread_local struct held stack[MAX_HELD];
static _Thread_local int depth;

/* Print where the violation happened, then abort. */
static void die(void)
{
	void *frames[32];
	int n = backtrace(frames, 32);
	backtrace_symbols_fd(frames, n, 2);
	abort();
}

static void push(const void *m, int rank, const char *what)
{
	if (depth == MAX_HELD) {
		fprintf(stderr, "lock_rank: more than %d locks held, taking %s\n", MAX_HELD, what);
		abort();
	}
	stack[depth++] = (struct held){ m, rank, what };
}

/* Abort, naming both, unless rank is above every rank held. */
static void check_order(int rank, const char *what)
{
	for (int i = 0; i < depth; i++) {
		if (stack[i].rank >= rank) {
			fprintf(stderr,
				"lock_rank: lock order violated: taking %s (rank %d) while holding %s "
				"(rank %d)\n",
				what, rank, stack[i].what, stack[i].rank);
			die();
		}
	}
}

void kaas_lock_checked(pthread_mutex_t *m, int rank, const char *what)
{
	check_order(rank, what);
	pthread_mutex_lock(m);
	push(m, rank, what);
}

void kaas_rdlock_checked(pthread_rwlock_t *l, int rank, const char *what)
{
	check_order(rank, what);
	pthread_rwlock_rdlock(l);
	push(l, rank, what);
}

void kaas_wrlock_checked(pthread_rwlock_t *l, int rank, const char *what)
{
	check_order(rank, what);
	pthread_rwlock_wrlock(l);
	push(l, rank, what);
}

int kaas_trylock_checked(pthread_mutex_t *m, int rank, const char *what)
{
	int rc = pthread_mutex_trylock(m);
	if (rc == 0)
		push(m, rank, what);
	return rc;
}

/* Take m off this thread's stack (aborts if it is not there). */
static void pop(const void *m)
{
	for (int i = depth - 1; i >= 0; i--) {
		if (stack[i].m == m) {
			for (int j = i; j < depth - 1; j++)
				stack[j] = stack[j + 1];
			depth--;
			return;
		}
	}
	fprintf(stderr, "lock_rank: unlocking %p, which this thread did not take with kaas_lock\n",
		m);
	die();
}

void kaas_unlock_checked(pthread_mutex_t *m)
{
	pop(m);
	pthread_mutex_unlock(m);
}

void kaas_rwunlock_checked(pthread_rwlock_t *l)
{
	pop(l);
	pthread_rwlock_unlock(l);
}

int kaas_lock_rank_depth(void)
{
	return depth;
}

#else
/* ISO C wants a translation unit to declare something. */
typedef int kaas_lock_rank_unused;
#endif
