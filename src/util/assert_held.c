/*
 * assert_held.c — who holds a pthread mutex, for assert_held (see
 * assert_held.h for the contract).  glibc only; elsewhere "cannot tell".
 */
#include "util/assert_held.h"

#include <sys/types.h>
#include <unistd.h>

#if defined(__GLIBC__)
#define KAAS_OWNER_KNOWN 1

/* The caller's kernel thread id, cached: gettid() is a system call and these
 * checks sit on hot paths.  A forked child's only thread has a new id, so
 * the child handler clears the cache. */
static _Thread_local pid_t cached_tid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_tid(void)
{
	cached_tid = 0;
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

static pid_t self_tid(void)
{
	if (cached_tid == 0) {
		pthread_once(&atfork_once, install_atfork);
		cached_tid = gettid();
	}
	return cached_tid;
}

static pid_t owner_of(const pthread_mutex_t *mu)
{
	/* glibc's owner record: the kernel tid of the locker, 0 when unlocked. */
	return __atomic_load_n(&mu->__data.__owner, __ATOMIC_RELAXED);
}
#else
#define KAAS_OWNER_KNOWN 0
#endif

bool kaas_mutex_owner_known(void)
{
	return KAAS_OWNER_KNOWN;
}

bool kaas_mutex_held(const pthread_mutex_t *mu)
{
#if KAAS_OWNER_KNOWN
	return owner_of(mu) == self_tid();
#else
	(void)mu;
	return true;
#endif
}

bool kaas_mutex_not_held(const pthread_mutex_t *mu)
{
#if KAAS_OWNER_KNOWN
	return owner_of(mu) != self_tid();
#else
	(void)mu;
	return true;
#endif
}
