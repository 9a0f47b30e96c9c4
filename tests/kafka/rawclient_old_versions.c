/*
 * rawclient_old_versions.c — the oldest versions a pre-0.11 client speaks
 * (rawclient modes):
 *
 *   old-offsets TOPIC GROUP        ten one-record batches to TOPIC/0; the
 *                                  group (no members) commits 4 with
 *                                  OffsetCommit v0, reads it with OffsetFetch
 *                                  v0, commits 7 with v1 (generation -1),
 *                                  reads 7 with v0 and v1, and Fetch from
 *                                  there returns offset 7 first.
 *   old-offsets-check TOPIC GROUP  OffsetFetch v0 still answers 7 (after a
 *                                  restart), and Fetch resumes at 7.
 *   refused-old TOPIC              Produce v2 and Fetch v3 are answered
 *                                  UNSUPPORTED_VERSION (35) on the partition,
 *                                  the connection stays open; a version past
 *                                  the served range closes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/kafka/rawclient.h"

#define UNSUPPORTED_VERSION 35

/* An answer's topics[partitions] start: one topic named `topic`, one
 * partition, index 0?  (r is then at that partition's next field.) */
static int one_partition(struct kaas_kr *r, const char *topic)
{
	return kaas_kr_i32(r) == 1 && kaas_kslice_eq(kaas_kr_str(r, 0), topic) &&
	       kaas_kr_i32(r) == 1 && kaas_kr_i32(r) == 0;
}

/* Append a request's topics[partitions] start: topic, partition 0. */
static void partition_zero(struct kaas_kw *w, const char *topic)
{
	kaas_kw_i32(w, 1);
	kaas_kw_str(w, 0, topic);
	kaas_kw_i32(w, 1);
	kaas_kw_i32(w, 0);
}

/* An answer: its body (to free), a reader past the topic/partition start,
 * and whether that start was right. */
struct answer {
	uint8_t *body;
	struct kaas_kr r;
	int ok;
};

/* Send w and read the answer into *a: 1, or 0 when none came. */
static int call_partition_zero(int fd, struct kaas_kw *w, const char *topic, struct answer *a)
{
	a->body = kwire_call(fd, w, &a->r, 15000);
	a->ok = a->body && one_partition(&a->r, topic);
	return a->body != NULL;
}

/* OffsetCommit v0 or v1 of one offset for TOPIC/0: the partition error, or
 * -1000 on a malformed answer. */
static int commit_old(int fd, int16_t v, const char *group, const char *topic, int64_t off)
{
	struct kaas_kw w;
	raw_header(&w, 8, v, 80 + v);
	kaas_kw_str(&w, 0, group);
	if (v == 1) {
		kaas_kw_i32(&w, -1);    /* generation: not a member */
		kaas_kw_str(&w, 0, ""); /* member id */
	}
	partition_zero(&w, topic);
	kaas_kw_i64(&w, off);
	if (v == 1)
		kaas_kw_i64(&w, -1); /* commit timestamp */
	kaas_kw_str(&w, 0, "old");
	struct answer a;
	if (!call_partition_zero(fd, &w, topic, &a))
		return -1000;
	int16_t err = kaas_kr_i16(&a.r);
	a.ok = a.ok && kaas_kr_ok(&a.r) && kaas_kr_left(&a.r) == 0;
	free(a.body);
	return a.ok ? err : -1000;
}

/* OffsetFetch v0 or v1 of TOPIC/0: the committed offset (-1: none), or
 * -1000 on a malformed answer or a partition error. */
static int64_t fetch_committed(int fd, int16_t v, const char *group, const char *topic)
{
	struct kaas_kw w;
	raw_header(&w, 9, v, 90 + v);
	kaas_kw_str(&w, 0, group);
	partition_zero(&w, topic);
	struct answer a;
	if (!call_partition_zero(fd, &w, topic, &a))
		return -1000;
	int64_t off = kaas_kr_i64(&a.r);
	struct kaas_kslice meta = kaas_kr_nstr(&a.r, 0);
	int16_t err = kaas_kr_i16(&a.r);
	a.ok = a.ok && kaas_kr_ok(&a.r) && kaas_kr_left(&a.r) == 0 && err == 0;
	if (a.ok && off >= 0 && !kaas_kslice_eq(meta, "old"))
		a.ok = 0;
	free(a.body);
	return a.ok ? off : -1000;
}

/* Fetch v4 of TOPIC/0 from `offset`: the base offset of the first batch
 * returned, or -1000. */
static int64_t first_fetched(int fd, const char *topic, int64_t offset)
{
	struct kaas_kw w;
	raw_fetch_request(&w, 44, topic, offset, 1000);
	struct kaas_kr r;
	uint8_t *b = kwire_call(fd, &w, &r, 15000);
	if (!b)
		return -1000;
	(void)kaas_kr_i32(&r); /* throttle */
	int ok = one_partition(&r, topic) && kaas_kr_i16(&r) == 0;
	(void)kaas_kr_i64(&r); /* hw */
	(void)kaas_kr_i64(&r); /* lso */
	(void)kaas_kr_array(&r, 0, 0);
	struct kaas_kslice recs = kaas_kr_nbytes(&r, 0);
	int64_t base = -1000;
	if (ok && kaas_kr_ok(&r) && recs.len >= 8) {
		struct kaas_kr rr;
		kaas_kr_init(&rr, recs.p, (size_t)recs.len);
		base = kaas_kr_i64(&rr);
	}
	free(b);
	return base;
}

static int produce_ten(int fd, const char *topic)
{
	struct kaas_kw w;
	raw_header(&w, 3, 1, 1); /* Metadata: auto-create */
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	struct kaas_kr r;
	free(kwire_call(fd, &w, &r, 15000));
	for (int i = 0; i < 10; i++) {
		struct kaas_kw rec;
		kaas_kw_init(&rec);
		kwire_record(&rec, 0, 0, "v", 1);
		int64_t now = (int64_t)time(NULL) * 1000;
		struct kwire_batch h = { .first_ts = now, .max_ts = now, .producer_id = -1,
					 .producer_epoch = -1, .base_sequence = -1, .count = 1 };
		int e = raw_produce_batch(fd, topic, 100 + i, &h, rec.buf, rec.len);
		kaas_kw_free(&rec);
		for (int tries = 0; e == 3 && tries < 50; tries++) { /* not yet created */
			usleep(100 * 1000);
			kaas_kw_init(&rec);
			kwire_record(&rec, 0, 0, "v", 1);
			e = raw_produce_batch(fd, topic, 100 + i, &h, rec.buf, rec.len);
			kaas_kw_free(&rec);
		}
		if (e != 0) {
			fprintf(stderr, "FAIL: produce %d answered %d\n", i, e);
			return 1;
		}
	}
	return 0;
}

static int old_offsets(int fd, const char *topic, const char *group, int check_only)
{
	int failures = 0;
	if (!check_only) {
		if (produce_ten(fd, topic))
			return 1;
		KWIRE_EXPECT(failures, fetch_committed(fd, 0, group, topic) == -1,
			     "OffsetFetch v0 before any commit: not -1");
		int e = commit_old(fd, 0, group, topic, 4);
		KWIRE_EXPECT(failures, e == 0, "OffsetCommit v0 answered %d", e);
		int64_t got = fetch_committed(fd, 0, group, topic);
		KWIRE_EXPECT(failures, got == 4, "OffsetFetch v0 after the v0 commit: %lld",
			     (long long)got);
		e = commit_old(fd, 1, group, topic, 7);
		KWIRE_EXPECT(failures, e == 0, "OffsetCommit v1 answered %d", e);
		got = fetch_committed(fd, 1, group, topic);
		KWIRE_EXPECT(failures, got == 7, "OffsetFetch v1 after the v1 commit: %lld",
			     (long long)got);
	}
	int64_t got = fetch_committed(fd, 0, group, topic);
	KWIRE_EXPECT(failures, got == 7, "OffsetFetch v0 after the v1 commit: %lld", (long long)got);
	int64_t first = got >= 0 ? first_fetched(fd, topic, got) : -1000;
	KWIRE_EXPECT(failures, first == 7, "Fetch from the committed offset starts at %lld",
		     (long long)first);
	return failures ? 1 : 0;
}

/* Produce v2 / Fetch v3 of TOPIC/0: the partition's error, or -1000. */
static int refused_produce(int fd, const char *topic)
{
	struct kaas_kw w;
	raw_header(&w, 0, 2, 20);
	kaas_kw_i16(&w, -1);   /* acks */
	kaas_kw_i32(&w, 1000); /* timeout */
	partition_zero(&w, topic);
	kaas_kw_bytes(&w, 0, "0123456789abcdef0123456789", 26); /* a v1 message set, say */
	struct answer a;
	if (!call_partition_zero(fd, &w, topic, &a))
		return -1000;
	int16_t err = kaas_kr_i16(&a.r);
	(void)kaas_kr_i64(&a.r); /* base offset */
	(void)kaas_kr_i64(&a.r); /* log append time (v2) */
	(void)kaas_kr_i32(&a.r); /* throttle (v1+) */
	a.ok = a.ok && kaas_kr_ok(&a.r) && kaas_kr_left(&a.r) == 0;
	free(a.body);
	return a.ok ? err : -1000;
}

static int refused_fetch(int fd, const char *topic)
{
	struct kaas_kw w;
	raw_header(&w, 1, 3, 30);
	kaas_kw_i32(&w, -1);
	kaas_kw_i32(&w, 100);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 1 << 20); /* max_bytes (v3) */
	partition_zero(&w, topic);
	kaas_kw_i64(&w, 0);
	kaas_kw_i32(&w, 1 << 20);
	struct kaas_kr r;
	uint8_t *b = kwire_call(fd, &w, &r, 15000);
	if (!b)
		return -1000;
	(void)kaas_kr_i32(&r); /* throttle (v1+) */
	int ok = one_partition(&r, topic);
	int16_t err = kaas_kr_i16(&r);
	(void)kaas_kr_i64(&r); /* hw */
	struct kaas_kslice recs = kaas_kr_nbytes(&r, 0);
	ok = ok && kaas_kr_ok(&r) && kaas_kr_left(&r) == 0 && recs.len <= 0;
	free(b);
	return ok ? err : -1000;
}

static int refused_old(int fd, const char *topic)
{
	int failures = 0;
	int e = refused_produce(fd, topic);
	KWIRE_EXPECT(failures, e == UNSUPPORTED_VERSION, "Produce v2 answered %d", e);
	e = refused_fetch(fd, topic);
	KWIRE_EXPECT(failures, e == UNSUPPORTED_VERSION, "Fetch v3 answered %d", e);
	/* Still open: ApiVersions v0 is answered. */
	struct kaas_kw w;
	raw_header(&w, 18, 0, 40);
	struct kaas_kr r;
	uint8_t *b = kwire_call(fd, &w, &r, 15000);
	KWIRE_EXPECT(failures, b && kaas_kr_i16(&r) == 0, "ApiVersions after the refusals");
	free(b);
	/* A version no one serves (Metadata v99) closes the connection. */
	raw_header(&w, 3, 99, 41);
	kaas_kw_i32(&w, -1);
	b = kwire_call(fd, &w, &r, 15000);
	KWIRE_EXPECT(failures, !b, "Metadata v99 was answered");
	free(b);
	return failures ? 1 : 0;
}

int raw_old_versions(int fd, const char *mode, const char *topic, const char *group)
{
	if (strcmp(mode, "old-offsets") == 0 && group)
		return old_offsets(fd, topic, group, 0);
	if (strcmp(mode, "old-offsets-check") == 0 && group)
		return old_offsets(fd, topic, group, 1);
	if (strcmp(mode, "refused-old") == 0)
		return refused_old(fd, topic);
	return raw_fail("unknown mode");
}
