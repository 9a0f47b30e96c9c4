/*
 * lock_rank.h — the broker's lock order (docs/THREADS.md) made executable.
 *
 * Every converted mutex is taken with a rank, its place in the documented
 * order (outer locks have lower ranks):
 *
 *   kaas_lock(&log->mu, KAAS_RANK_LOG_MU);  ...  kaas_unlock(&log->mu);
 *
 * With KAAS_LOCK_RANK defined (configure --enable-sanitizers defines it;
 * any build may add -DKAAS_LOCK_RANK=1 to CPPFLAGS) each thread keeps the
 * stack of the converted locks it holds, and kaas_lock aborts, naming both
 * locks, when the rank it takes is not above every rank the thread holds
 * (taking a lock out of order, or a second lock of the same rank, which is
 * how a deadlock starts).  kaas_trylock is never out of order (it does not
 * wait) and is only recorded.  kaas_unlock may release in any order.
 * pthread_cond_wait on a converted mutex needs no change: the thread
 * sleeps while the lock is released, and holds it again when it returns.
 * Without KAAS_LOCK_RANK the calls are the plain pthread calls (inline):
 * no cost.
 *
 * A mutex must be converted at ALL its lock and unlock sites: a lock taken
 * by pthread_mutex_lock is unknown to the check (a missed order), and one
 * released by pthread_mutex_unlock stays on the stack (a false alarm).
 */
#ifndef KAAS_UTIL_LOCK_RANK_H
#define KAAS_UTIL_LOCK_RANK_H

#include <pthread.h>

/* The ranks, outer first (docs/THREADS.md, "Lock order"). */
enum kaas_lock_rank {
	KAAS_RANK_TOPICS_ADMIN = 10, /* broker/topics admin_mu */
	KAAS_RANK_TXN_ENTRY = 12,    /* a transactional id's txn_entry mu (held
	                                across its volume writes and its direct
	                                marker appends) */
	KAAS_RANK_SASL = 14,         /* a SASL exchange's mu (held across the
	                                credential lookup) */
	KAAS_RANK_PID_ALLOC = 15,    /* the producer-id allocator's mu (held
	                                across a block claim) */
	KAAS_RANK_AUTHZ_REFRESH = 16,/* the authorizer's refresh_mu (held across
	                                the listing and reads of acls/, and the
	                                swap of its cache) */
	KAAS_RANK_QUOTA_REFRESH = 17,/* the client quotas' refresh_mu (held across
	                                the reads of quotas/ and the swap of
	                                their cache) */
	KAAS_RANK_TOPICS = 20,       /* broker/topics mu */
	KAAS_RANK_LOG_TXN = 30,      /* a log's txn_mu (marker appends) */
	KAAS_RANK_LOG_CLEAN = 35,    /* a log's clean_mu (one cleaning pass; trylock) */
	KAAS_RANK_LOG_WLOCK = 40,    /* a log's wlock */
	KAAS_RANK_SEG_INDEX = 50,    /* a segment's ilock */
	KAAS_RANK_SEG_READ = 55,     /* a segment's rlock (its read handle) */
	KAAS_RANK_LOG_MU = 60,       /* a log's mu */
	KAAS_RANK_LOG_FENCE = 65,    /* a log's mf_lock (fence checks) */
	KAAS_RANK_LOGPOOL_LIFE = 70, /* the log I/O pool's life_mu */
	KAAS_RANK_LOGPOOL = 80,      /* the log I/O pool's mu (leaf) */
	KAAS_RANK_LANES = 80,        /* the produce lanes' mu (leaf) */
	KAAS_RANK_AGENT = 85,        /* the cluster agent's mu (leaf: its view
	                                in memory, nothing taken under it) */
	KAAS_RANK_FILE_CACHE = 90,   /* log_files.c's cache mu (it only trylocks
	                                the slots' guards) */
	KAAS_RANK_QUOTA_CACHE = 93,  /* the client quotas' cache lock (a rwlock:
	                                every quota lookup reads, the swap
	                                writes; nothing inside) */
	KAAS_RANK_QUOTA_RATES = 94,  /* the client quotas' rates_mu (a record
	                                and its measure; nothing inside) */
	KAAS_RANK_LEAF = 95,         /* leaves: nothing ranked is taken under
	                                them (the server's cq_mu, the fence
	                                table's held_mu, the transaction id
	                                list's mu, the credential cache's mu,
	                                the HTTP endpoint's mu, a log wait's mu,
	                                SASL's failure-log mu, the authorizer
	                                thread's mu) */
	KAAS_RANK_AUTHZ_CACHE = 96,  /* the authorizer's cache lock (a rwlock:
	                                every ACL check reads under it, the swap
	                                writes; nothing inside) */
	KAAS_RANK_METRICS = 97,      /* the metrics registry's reg_mu, a family's
	                                mu, slot_mu (innermost: a series may be
	                                made under any lock) */
};

#ifdef KAAS_LOCK_RANK
/* Checked versions (lock_rank.c).  `what` names the mutex in a report. */
void kaas_lock_checked(pthread_mutex_t *m, int rank, const char *what);
int kaas_trylock_checked(pthread_mutex_t *m, int rank, const char *what);
void kaas_unlock_checked(pthread_mutex_t *m);
/* A pthread_rwlock_t, read or write side, at a rank (either side counts
 * as holding it: the order is the same). */
void kaas_rdlock_checked(pthread_rwlock_t *l, int rank, const char *what);
void kaas_wrlock_checked(pthread_rwlock_t *l, int rank, const char *what);
void kaas_rwunlock_checked(pthread_rwlock_t *l);
/* Converted locks the calling thread holds now. */
int kaas_lock_rank_depth(void);
#define kaas_lock(m, rank) kaas_lock_checked((m), (rank), #m)
#define kaas_trylock(m, rank) kaas_trylock_checked((m), (rank), #m)
#define kaas_unlock(m) kaas_unlock_checked(m)
#define kaas_rdlock(l, rank) kaas_rdlock_checked((l), (rank), #l)
#define kaas_wrlock(l, rank) kaas_wrlock_checked((l), (rank), #l)
#define kaas_rwunlock(l) kaas_rwunlock_checked(l)
#else
static inline void kaas_lock(pthread_mutex_t *m, int rank)
{
	(void)rank;
	pthread_mutex_lock(m);
}
static inline int kaas_trylock(pthread_mutex_t *m, int rank)
{
	(void)rank;
	return pthread_mutex_trylock(m);
}
static inline void kaas_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}
static inline void kaas_rdlock(pthread_rwlock_t *l, int rank)
{
	(void)rank;
	pthread_rwlock_rdlock(l);
}
static inline void kaas_wrlock(pthread_rwlock_t *l, int rank)
{
	(void)rank;
	pthread_rwlock_wrlock(l);
}
static inline void kaas_rwunlock(pthread_rwlock_t *l)
{
	pthread_rwlock_unlock(l);
}
static inline int kaas_lock_rank_depth(void)
{
	return 0;
}
#endif

#endif
