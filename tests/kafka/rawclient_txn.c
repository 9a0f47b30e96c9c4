/*
 * rawclient_txn.c — rawclient's txn-lso mode (issue 16, the partition
 * side): an open transaction holds the last stable offset.
 *
 * Into an empty TOPIC/0: a plain batch of 2 records (offsets 0-1), a
 * transactional batch of 3 records of an idempotent producer id (2-4, never
 * ended: no coordinator here), a plain batch of 1 (5).  Then:
 *   Fetch v4 read_committed from 0: high watermark 6, last_stable_offset 2,
 *     records 0-1 only, no aborted transactions;
 *   Fetch v4 read_uncommitted from 0: records up to 6, last_stable_offset 2
 *     (answered for both levels, as Kafka does);
 *   Fetch v4 read_committed from 2: no records;
 *   ListOffsets v2 latest: 2 read_committed, 6 read_uncommitted;
 *   a control batch, and a transactional batch without a producer id, are
 *   refused INVALID_RECORD (87).
 * txn-lso-check TOPIC: the same answers without producing (after a
 * restart: the open transaction recovered by the log's open).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/kafka/rawclient.h"

/* InitProducerId v0 without a transactional id: 0 with *pid, *epoch. */
static int init_pid(int fd, int64_t *pid, int16_t *epoch)
{
	struct kaas_kw w;
	raw_header(&w, 22, 0, 300);
	kaas_kw_i16(&w, -1);       /* transactional id: null */
	kaas_kw_i32(&w, 60000);    /* transaction timeout */
	struct kaas_kr r;
	uint8_t *body = kwire_call(fd, &w, &r, 10000);
	if (!body)
		return -1;
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	*pid = kaas_kr_i64(&r);
	*epoch = kaas_kr_i16(&r);
	int ok = kaas_kr_ok(&r) && err == 0;
	free(body);
	return ok ? 0 : -1;
}

static int produce(int fd, const char *topic, int16_t attrs, int64_t pid, int16_t epoch,
		   int32_t seq, int n)
{
	static int32_t corr = 400;
	struct kaas_kw rec;
	kaas_kw_init(&rec);
	for (int i = 0; i < n; i++)
		kwire_record(&rec, 0, i, "txn-value", 9);
	int64_t now = (int64_t)time(NULL) * 1000;
	struct kwire_batch h = { .attributes = attrs, .last_offset_delta = n - 1, .first_ts = now,
				 .max_ts = now, .producer_id = pid, .producer_epoch = epoch,
				 .base_sequence = seq, .count = n };
	int e = raw_produce_batch(fd, topic, ++corr, &h, rec.buf, rec.len);
	kaas_kw_free(&rec);
	return e;
}

struct tf {
	int16_t err;
	int64_t hw, lso, next;
	int32_t naborted;
	int nbatches;
};

/* Fetch v4 of topic/0 from offset at the isolation level: 0 and *out. */
static int fetch(int fd, const char *topic, int64_t offset, int8_t isolation, struct tf *out)
{
	static int32_t corr = 600;
	struct kaas_kw w;
	raw_header(&w, 1, 4, ++corr);
	kaas_kw_i32(&w, -1);
	kaas_kw_i32(&w, 100);         /* max wait */
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 1 << 20);
	kaas_kw_i8(&w, isolation);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 0);
	kaas_kw_i64(&w, offset);
	kaas_kw_i32(&w, 1 << 20);
	struct kaas_kr r;
	uint8_t *body = kwire_call(fd, &w, &r, 10000);
	if (!body)
		return -1;
	memset(out, 0, sizeof *out);
	(void)kaas_kr_i32(&r);
	int ok = kaas_kr_array(&r, 0, 1) == 1;
	(void)kaas_kr_str(&r, 0);
	ok = ok && kaas_kr_array(&r, 0, 1) == 1;
	(void)kaas_kr_i32(&r);
	out->err = kaas_kr_i16(&r);
	out->hw = kaas_kr_i64(&r);
	out->lso = kaas_kr_i64(&r);
	out->naborted = kaas_kr_array(&r, 0, 16);
	for (int32_t a = 0; a < out->naborted; a++)
		(void)kaas_kr_raw(&r, 16);
	struct kaas_kslice rec = kaas_kr_nbytes(&r, 0);
	ok = ok && kaas_kr_ok(&r);
	out->next = offset;
	size_t pos = 0, n = ok && rec.len > 0 ? (size_t)rec.len : 0;
	while (pos + 27 <= n) {
		struct kaas_kr b;
		kaas_kr_init(&b, rec.p + pos, n - pos);
		int64_t base = kaas_kr_i64(&b);
		int32_t blen = kaas_kr_i32(&b);
		(void)kaas_kr_raw(&b, 11);
		int32_t last = kaas_kr_i32(&b);
		if (!kaas_kr_ok(&b) || blen < 49 || (size_t)blen + 12 > n - pos)
			break;
		out->nbatches++;
		out->next = base + last + 1;
		pos += (size_t)blen + 12;
	}
	free(body);
	return ok ? 0 : -1;
}

/* ListOffsets v2 latest of topic/0 at the isolation level: the offset or -1. */
static int64_t latest(int fd, const char *topic, int8_t isolation)
{
	static int32_t corr = 700;
	struct kaas_kw w;
	raw_header(&w, 2, 2, ++corr);
	kaas_kw_i32(&w, -1);
	kaas_kw_i8(&w, isolation);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 0);
	kaas_kw_i64(&w, -1);
	struct kaas_kr r;
	uint8_t *body = kwire_call(fd, &w, &r, 10000);
	if (!body)
		return -1;
	(void)kaas_kr_i32(&r);
	int ok = kaas_kr_array(&r, 0, 1) == 1;
	(void)kaas_kr_str(&r, 0);
	ok = ok && kaas_kr_array(&r, 0, 1) == 1;
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	(void)kaas_kr_i64(&r);
	int64_t off = kaas_kr_i64(&r);
	ok = ok && kaas_kr_ok(&r) && err == 0;
	free(body);
	return ok ? off : -1;
}

#define EXPECT(cond, ...)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "FAIL: txn-lso: " __VA_ARGS__);     \
			fputc('\n', stderr);                                \
			return 1;                                           \
		}                                                           \
	} while (0)

int raw_txn_lso(int fd, const char *topic, int check_only)
{
	raw_send_metadata(fd, 1, topic);
	int32_t corr;
	size_t len;
	free(kwire_recv(fd, &corr, &len, 10000));
	int64_t pid;
	int16_t ep;
	EXPECT(init_pid(fd, &pid, &ep) == 0, "InitProducerId failed");
	int e = check_only ? 0 : -1;
	for (int i = 0; i < 50 && e != 0; i++) { /* the topic is being created */
		e = produce(fd, topic, 0, -1, -1, -1, 2);
		if (e != 0) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	EXPECT(e == 0, "plain produce answered %d", e);
	if (!check_only) {
		e = produce(fd, topic, 0x10, pid, ep, 0, 3);
		EXPECT(e == 0, "transactional produce answered %d", e);
		e = produce(fd, topic, 0, -1, -1, -1, 1);
		EXPECT(e == 0, "plain produce answered %d", e);
	}

	struct tf f;
	EXPECT(fetch(fd, topic, 0, 1, &f) == 0 && f.err == 0, "read_committed fetch");
	EXPECT(f.hw == 6 && f.lso == 2, "read_committed: hw %lld lso %lld, want 6 and 2",
	       (long long)f.hw, (long long)f.lso);
	EXPECT(f.next == 2 && f.nbatches == 1 && f.naborted == 0,
	       "read_committed from 0: %d batches up to %lld, %d aborted; want 1 up to 2, 0",
	       f.nbatches, (long long)f.next, f.naborted);
	EXPECT(fetch(fd, topic, 0, 0, &f) == 0 && f.err == 0, "read_uncommitted fetch");
	EXPECT(f.hw == 6 && f.lso == 2 && f.next == 6 && f.nbatches == 3,
	       "read_uncommitted: hw %lld lso %lld, %d batches up to %lld",
	       (long long)f.hw, (long long)f.lso, f.nbatches, (long long)f.next);
	EXPECT(fetch(fd, topic, 2, 1, &f) == 0 && f.err == 0 && f.nbatches == 0 && f.lso == 2,
	       "read_committed from the LSO: %d batches, lso %lld", f.nbatches, (long long)f.lso);
	int64_t lc = latest(fd, topic, 1), lu = latest(fd, topic, 0);
	EXPECT(lc == 2 && lu == 6, "ListOffsets latest: %lld committed, %lld uncommitted",
	       (long long)lc, (long long)lu);
	e = produce(fd, topic, 0x30, pid, ep, -1, 1);
	EXPECT(e == 87, "a control batch from a client answered %d, want 87", e);
	e = produce(fd, topic, 0x10, -1, -1, -1, 1);
	EXPECT(e == 87, "a transactional batch without producer id answered %d, want 87", e);
	return 0;
}
