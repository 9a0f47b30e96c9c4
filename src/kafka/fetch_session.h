/*
 * fetch_session.h — the broker's fetch sessions (KIP-227, Fetch v7+): a
 * consumer of many partitions names them once, in a full fetch, and then
 * sends only what changed (incremental fetches); the broker remembers, per
 * session, every partition's fetch position and what it last answered
 * (high watermark, last stable offset, log start), and leaves out of an
 * incremental answer every partition with nothing new.
 *
 * The wire rules (api_fetch.c applies them): session id 0 and epoch -1 is a
 * sessionless fetch; epoch 0 is a full fetch that asks for a new session
 * (any session named is closed first); epoch -1 with an id closes that
 * session; epoch > 0 is an incremental fetch of session id at exactly that
 * epoch (else FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH).
 *
 * A cache of at most `slots` sessions (max.incremental.fetch.session.cache
 * .slots, 1000 by default; 0: no sessions).  When it is full a new session
 * takes the slot of the least recently used one if that has been idle for
 * the eviction time, else of the one with the fewest partitions if it has
 * fewer than the new one; otherwise the new session is not created (the
 * client gets session id 0 and keeps sending full fetches).
 *
 * Memory only, loop thread only (no locks): sessions are not shared with
 * other brokers and do not survive a restart (a client whose session is
 * gone gets FETCH_SESSION_ID_NOT_FOUND and starts a new one).
 */
#ifndef KAAS_KAFKA_FETCH_SESSION_H
#define KAAS_KAFKA_FETCH_SESSION_H

#include <stddef.h>
#include <stdint.h>

#define KAAS_FETCH_INITIAL_EPOCH 0
#define KAAS_FETCH_FINAL_EPOCH (-1)
#define KAAS_FETCH_SESSION_EVICT_MS 120000 /* Kafka's min.incremental.fetch.session.eviction.ms */

/* One partition of a session. */
struct kaas_fs_part {
	char *topic;            /* owned, NUL-terminated; NULL: forgotten (until compacted) */
	int32_t tlen;
	int32_t index;
	int64_t offset;         /* the fetch position the client last sent */
	int32_t max_bytes;
	int64_t hw, lso, log_start; /* as last answered (-1: not yet) */
};

struct kaas_fetch_session {
	int32_t id;             /* > 0 */
	int32_t epoch;          /* the epoch the next incremental fetch must carry */
	uint64_t used_ms;       /* last request (kaas_now_ms) */
	struct kaas_fs_part *parts; /* in the order they were added */
	int32_t n;
	size_t cap;
	int32_t *slot;          /* private: hash of (topic, index) -> parts index */
	uint32_t nslot;
	struct kaas_fetch_session *prev, *next; /* private: LRU list (head: oldest) */
};

struct kaas_fetch_sessions;

/* A cache of at most slots sessions (0: sessions are never created),
 * evicting idle ones after evict_ms.  NULL when out of memory. */
struct kaas_fetch_sessions *kaas_fetch_sessions_new(int32_t slots, uint64_t evict_ms);
void kaas_fetch_sessions_free(struct kaas_fetch_sessions *c); /* NULL-safe */

/* The session with id, or NULL. */
struct kaas_fetch_session *kaas_fetch_session_get(struct kaas_fetch_sessions *c, int32_t id);

/* Close the session with id (no-op when there is none). */
void kaas_fetch_session_remove(struct kaas_fetch_sessions *c, int32_t id);

/* A new, empty session with epoch 1 for a client that will name nparts
 * partitions, or NULL when no slot could be had (cache full and nothing
 * evictable, or out of memory).  Its id is random, positive and unused. */
struct kaas_fetch_session *kaas_fetch_session_create(struct kaas_fetch_sessions *c,
						     int32_t nparts, uint64_t now_ms);

/* Mark s used at now_ms (the most recently used). */
void kaas_fetch_session_touch(struct kaas_fetch_sessions *c, struct kaas_fetch_session *s,
			      uint64_t now_ms);

/* The partition (topic, index) of s, or NULL. */
struct kaas_fs_part *kaas_fetch_session_find(struct kaas_fetch_session *s, const void *topic,
					     int32_t tlen, int32_t index);

/* Add (topic, index) to s with the client's position, or update its
 * position and max_bytes; a new one has hw, lso, log_start -1 (so its
 * first answer includes it).  Returns it, or NULL when out of memory. */
struct kaas_fs_part *kaas_fetch_session_upsert(struct kaas_fetch_session *s, const void *topic,
					       int32_t tlen, int32_t index, int64_t offset,
					       int32_t max_bytes);

/* Forget (topic, index) (no-op when not in s).  Call
 * kaas_fetch_session_compact after the last forget of a request. */
void kaas_fetch_session_forget(struct kaas_fetch_session *s, const void *topic, int32_t tlen,
			       int32_t index);

/* Drop forgotten partitions, keeping the others' order.  0 or -ENOMEM. */
int kaas_fetch_session_compact(struct kaas_fetch_session *s);

/* The epoch after e (Kafka's nextEpoch: wraps to 1, stays final). */
static inline int32_t kaas_fetch_next_epoch(int32_t e)
{
	if (e < 0)
		return KAAS_FETCH_FINAL_EPOCH;
	return e == INT32_MAX ? 1 : e + 1;
}

#endif
