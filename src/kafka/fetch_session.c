/*
 * fetch_session.c — the fetch-session cache (fetch_session.h): a list in
 * least-recently-used order (at most `slots` long, looked up by id), each
 * session's partitions in an array with an open-addressing hash on
 * (topic, index) so an incremental fetch naming thousands of partitions
 * costs what it names.
 */
#include "kafka/fetch_session.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/grow.h"

struct kaas_fetch_sessions {
	int32_t slots;
	uint64_t evict_ms;
	int32_t n;
	struct kaas_fetch_session *head, *tail; /* head: least recently used */
	uint64_t rng;
};

struct kaas_fetch_sessions *kaas_fetch_sessions_new(int32_t slots, uint64_t evict_ms)
{
	assert(slots >= 0);
	struct kaas_fetch_sessions *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slots = slots;
	c->evict_ms = evict_ms;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->rng = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
		 ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15u;
	return c;
}

static void session_free(struct kaas_fetch_session *s)
{
	for (int32_t i = 0; i < s->n; i++)
		free(s->parts[i].topic);
	free(s->parts);
	free(s->slot);
	free(s);
}

static void unlink_session(struct kaas_fetch_sessions *c, struct kaas_fetch_session *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		c->tail = s->prev;
	s->prev = s->next = NULL;
}

static void append_session(struct kaas_fetch_sessions *c, struct kaas_fetch_session *s)
{
	s->prev = c->tail;
	s->next = NULL;
	if (c->tail)
		c->tail->next = s;
	else
		c->head = s;
	c->tail = s;
}

void kaas_fetch_sessions_free(struct kaas_fetch_sessions *c)
{
	if (!c)
		return;
	while (c->head) {
		struct kaas_fetch_session *s = c->head;
		unlink_session(c, s);
		session_free(s);
	}
	free(c);
}

struct kaas_fetch_session *kaas_fetch_session_get(struct kaas_fetch_sessions *c, int32_t id)
{
	if (!c || id <= 0)
		return NULL;
	for (struct kaas_fetch_session *s = c->head; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static void drop(struct kaas_fetch_sessions *c, struct kaas_fetch_session *s)
{
	unlink_session(c, s);
	c->n--;
	assert(c->n >= 0);
	session_free(s);
}

void kaas_fetch_session_remove(struct kaas_fetch_sessions *c, int32_t id)
{
	struct kaas_fetch_session *s = kaas_fetch_session_get(c, id);
	if (s)
		drop(c, s);
}

/* Make room for a session of nparts partitions: 1 when there is a slot. */
static int make_room(struct kaas_fetch_sessions *c, int32_t nparts, uint64_t now_ms)
{
	if (c->n < c->slots)
		return 1;
	if (!c->head)
		return 0;
	if (now_ms >= c->head->used_ms + c->evict_ms) {
		drop(c, c->head); /* idle long enough */
		return 1;
	}
	struct kaas_fetch_session *least = NULL;
	for (struct kaas_fetch_session *s = c->head; s; s = s->next)
		if (!least || s->n < least->n)
			least = s;
	if (least && least->n < nparts) {
		drop(c, least);
		return 1;
	}
	return 0;
}

static int32_t new_id(struct kaas_fetch_sessions *c)
{
	for (;;) {
		/* xorshift64* */
		c->rng ^= c->rng >> 12;
		c->rng ^= c->rng << 25;
		c->rng ^= c->rng >> 27;
		int32_t id = (int32_t)((c->rng * 2685821657736338717u) >> 33);
		if (id > 0 && !kaas_fetch_session_get(c, id))
			return id;
	}
}

struct kaas_fetch_session *kaas_fetch_session_create(struct kaas_fetch_sessions *c,
						     int32_t nparts, uint64_t now_ms)
{
	if (!c || !make_room(c, nparts, now_ms))
		return NULL;
	struct kaas_fetch_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = new_id(c);
	s->epoch = kaas_fetch_next_epoch(KAAS_FETCH_INITIAL_EPOCH);
	s->used_ms = now_ms;
	append_session(c, s);
	c->n++;
	assert(c->n <= c->slots);
	return s;
}

void kaas_fetch_session_touch(struct kaas_fetch_sessions *c, struct kaas_fetch_session *s,
			      uint64_t now_ms)
{
	s->used_ms = now_ms;
	unlink_session(c, s);
	append_session(c, s);
}

/* ---- a session's partitions ---- */

static uint32_t hash(const void *topic, int32_t tlen, int32_t index)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (int32_t i = 0; i < tlen; i++)
		h = (h ^ ((const uint8_t *)topic)[i]) * 16777619u;
	return (h ^ (uint32_t)index) * 16777619u;
}

static int same(const struct kaas_fs_part *p, const void *topic, int32_t tlen, int32_t index)
{
	return p->topic && p->index == index && p->tlen == tlen &&
	       memcmp(p->topic, topic, (size_t)tlen) == 0;
}

/* The hash slot of (topic, index): its part, or the empty slot for it. */
static uint32_t probe(const struct kaas_fetch_session *s, const void *topic, int32_t tlen,
		      int32_t index)
{
	uint32_t m = s->nslot - 1;
	uint32_t i = hash(topic, tlen, index) & m;
	while (s->slot[i] >= 0 && !same(&s->parts[s->slot[i]], topic, tlen, index))
		i = (i + 1) & m;
	return i;
}

/* Rebuild the hash for n parts with room for at least `want` of them. */
static int rehash(struct kaas_fetch_session *s, int32_t want)
{
	uint32_t ns = 16;
	while (ns < 2u * (uint32_t)want)
		ns *= 2;
	int32_t *slot = malloc(ns * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	free(s->slot);
	s->slot = slot;
	s->nslot = ns;
	memset(slot, 0xff, ns * sizeof(*slot)); /* -1: empty */
	for (int32_t i = 0; i < s->n; i++) {
		struct kaas_fs_part *p = &s->parts[i];
		assert(p->topic);
		s->slot[probe(s, p->topic, p->tlen, p->index)] = i;
	}
	return 0;
}

struct kaas_fs_part *kaas_fetch_session_find(struct kaas_fetch_session *s, const void *topic,
					     int32_t tlen, int32_t index)
{
	if (!s->nslot)
		return NULL;
	int32_t k = s->slot[probe(s, topic, tlen, index)];
	return k >= 0 ? &s->parts[k] : NULL;
}

struct kaas_fs_part *kaas_fetch_session_upsert(struct kaas_fetch_session *s, const void *topic,
					       int32_t tlen, int32_t index, int64_t offset,
					       int32_t max_bytes)
{
	struct kaas_fs_part *p = kaas_fetch_session_find(s, topic, tlen, index);
	if (p) {
		p->offset = offset;
		p->max_bytes = max_bytes;
		return p;
	}
	if ((uint32_t)(s->n + 1) * 2 > s->nslot && rehash(s, s->n + 1) < 0)
		return NULL;
	struct kaas_fs_part *parts =
		kaas_grow(s->parts, &s->cap, (size_t)s->n, sizeof(*parts), 8);
	if (!parts)
		return NULL;
	s->parts = parts;
	char *name = malloc((size_t)tlen + 1);
	if (!name)
		return NULL;
	memcpy(name, topic, (size_t)tlen);
	name[tlen] = 0;
	p = &s->parts[s->n];
	*p = (struct kaas_fs_part){ .topic = name, .tlen = tlen, .index = index, .offset = offset,
				    .max_bytes = max_bytes, .hw = -1, .lso = -1, .log_start = -1 };
	s->slot[probe(s, topic, tlen, index)] = s->n;
	s->n++;
	return p;
}

void kaas_fetch_session_forget(struct kaas_fetch_session *s, const void *topic, int32_t tlen,
			       int32_t index)
{
	struct kaas_fs_part *p = kaas_fetch_session_find(s, topic, tlen, index);
	if (!p)
		return;
	/* Its hash slot stays until compaction; a forgotten part matches no
	 * lookup (same() wants a topic), so an upsert before then appends a
	 * fresh one. */
	free(p->topic);
	p->topic = NULL;
}

int kaas_fetch_session_compact(struct kaas_fetch_session *s)
{
	int32_t k = 0;
	for (int32_t i = 0; i < s->n; i++)
		if (s->parts[i].topic)
			s->parts[k++] = s->parts[i];
	if (k == s->n)
		return 0;
	s->n = k;
	return rehash(s, k > 0 ? k : 1);
}
