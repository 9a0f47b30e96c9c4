/*
 * assert_held.h — check that the calling thread holds (or does not hold) a
 * pthread mutex: the `_locked` suffix and "caller holds mu" comments made
 * executable.
 *
 *   assert_held(&log->mu);       at the top of a function the caller must
 *                                call with log->mu locked
 *   assert_not_held(&log->mu);   before a call that takes the lock itself or
 *                                blocks on the volume
 *
 * Both are assert()s: active whenever NDEBUG is not defined (kaas's
 * configure never defines it, so the normal build, the debug build and the
 * sanitizer build all check), and nothing at all (the argument is not even
 * evaluated) when NDEBUG is defined.  A failed check aborts with the usual
 * assert message naming the file, line, function and mutex expression:
 *   "Assertion `kaas_mutex_held(&log->mu)' failed."
 *
 * How the owner is known: glibc records the kernel thread id of the owner
 * of every locked mutex (all types, including the default one and the
 * relock inside pthread_cond_wait) and clears it on unlock.  kaas_mutex_held
 * compares that with the caller's thread id (cached per thread, reset in a
 * forked child).  On a C library without that record the check cannot tell,
 * and both functions answer true (the asserts pass): a missed check, never a
 * false alarm.  The mutex is only read; callers need no other change.
 *
 * Thread safety: any thread; the read of another thread's lock word is racy
 * by design but can never match the caller's own id unless the caller holds
 * the lock.
 */
#ifndef KAAS_UTIL_ASSERT_HELD_H
#define KAAS_UTIL_ASSERT_HELD_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

/* True when the calling thread holds mu (or when the C library keeps no
 * owner, see above).  mu must be an initialized mutex. */
bool kaas_mutex_held(const pthread_mutex_t *mu);

/* True when the calling thread does not hold mu (or when the C library keeps
 * no owner).  Says nothing about other threads. */
bool kaas_mutex_not_held(const pthread_mutex_t *mu);

/* True when this build can tell who holds a mutex (glibc). */
bool kaas_mutex_owner_known(void);

#ifdef NDEBUG
#define assert_held(mu) ((void)0)
#define assert_not_held(mu) ((void)0)
#else
#define assert_held(mu) assert(kaas_mutex_held(mu))
#define assert_not_held(mu) assert(kaas_mutex_not_held(mu))
#endif

#endif
