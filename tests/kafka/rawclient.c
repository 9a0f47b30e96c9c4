/*
 * rawclient.c — speaks the Kafka protocol by hand to a running kaasd, to
 * send what no real client sends: random bytes, truncated frames,
 * negative and huge sizes, unknown API keys, corrupt record batches; and to
 * time a Fetch long poll and check pipelined answers come back in order.
 *
 *   rawclient HOST:PORT MODE     MODE: garbage truncated negative huge
 *                                unknown-api corrupt-crc corrupt-payload
 *                                good-batch longpoll out-of-range pipeline
 *   rawclient HOST:PORT fetch-answer TOPIC OFFSET MAXWAIT
 *                                one Fetch of TOPIC/0: prints "sent" once
 *                                it is out, then "error E high_watermark H
 *                                after MS ms"
 *   rawclient HOST:PORT fetch-bounds TOPIC NPART
 *                                read TOPIC to the end with Fetch requests
 *                                of several max_bytes/partition_max_bytes
 *                                pairs, checking each answer's bounds
 *   rawclient HOST:PORT time-offsets TOPIC CODEC [append]
 *                                ListOffsets by timestamp inside a batch
 *                                (see time_offsets); time-offsets-check:
 *                                the same queries, without producing
 * Exit 0 when the broker behaved as it must, 1 otherwise (with a message).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "tests/support/kwire.h"

static int fail(const char *msg)
{
	fprintf(stderr, "FAIL: %s\n", msg);
	return 1;
}

/* Does the broker close the connection within timeout? 1 yes, 0 no. */
static int closed_by_peer(int fd, int timeout_ms)
{
	char buf[4096];
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, timeout_ms) <= 0)
			return 0;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			return 1;
	}
}

/* Start a request in w (initialised here): size field and header v1. */
static void header(struct kaas_kw *w, int16_t key, int16_t ver, int32_t corr)
{
	kwire_begin(w, key, ver, corr, "rawclient");
}

/* Produce v3 acks=-1 to topic/0 of the batch (h, payload): the partition
 * error, or -1000 when no well-formed answer with this correlation id came. */
static int produce_batch(int fd, const char *topic, int32_t corr, const struct kwire_batch *h,
			 const void *payload, size_t len)
{
	struct kaas_kw w;
	kwire_produce_begin(&w, corr, "rawclient", topic);
	kwire_batch(&w, h, payload, len);
	if (kwire_send(fd, &w) < 0)
		return -1000;
	int32_t c = 0;
	size_t blen = 0;
	uint8_t *body = kwire_recv(fd, &c, &blen, 10000);
	if (!body)
		return -1000;
	struct kaas_kr r;
	kaas_kr_init(&r, body, blen);
	int16_t err = 0;
	int ok = kwire_produce_answer(&r, &err, NULL) == 0 && c == corr;
	free(body);
	return ok ? err : -1000;
}

/* Produce one record "value" to topic/0; corrupt: 1 bad CRC, 2 gzip codec
 * with a payload that is not gzip (CRC right).  The partition error. */
static int produce(int fd, const char *topic, int corrupt)
{
	struct kaas_kw rec;
	kaas_kw_init(&rec);
	kwire_record(&rec, 0, 0, "value", 5);
	int64_t now = (int64_t)time(NULL) * 1000;
	struct kwire_batch h = { .attributes = corrupt == 2 ? 1 : 0, .first_ts = now, .max_ts = now,
				 .producer_id = -1, .producer_epoch = -1, .base_sequence = -1,
				 .count = 1, .crc_flip = corrupt == 1 ? 0x5a5a : 0 };
	int e = corrupt == 2 ? produce_batch(fd, topic, 7, &h, "definitely not gzip data", 24)
			     : produce_batch(fd, topic, 7, &h, rec.buf, rec.len);
	kaas_kw_free(&rec);
	return e;
}

static int send_metadata(int fd, int32_t corr, const char *topic)
{
	struct kaas_kw w;
	header(&w, 3, 1, corr);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	int rc = kwire_send(fd, &w);
	return rc;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Fetch v4 of topic/0 at `offset` with max_wait; returns ms taken or -1.
 * *err (may be NULL) receives the partition's error code, *hw (may be
 * NULL) its high watermark. */
static long fetch_wait_hw(int fd, const char *topic, int64_t offset, int32_t max_wait,
			  size_t *got, int *err, int64_t *hw);

static long fetch_wait(int fd, const char *topic, int64_t offset, int32_t max_wait, size_t *got,
		       int *err)
{
	return fetch_wait_hw(fd, topic, offset, max_wait, got, err, NULL);
}

static long fetch_wait_hw(int fd, const char *topic, int64_t offset, int32_t max_wait,
			  size_t *got, int *err, int64_t *hw)
{
	struct kaas_kw w;
	header(&w, 1, 4, 9);
	kaas_kw_i32(&w, -1);
	kaas_kw_i32(&w, max_wait);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 1 << 20);
	kaas_kw_i8(&w, 0);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 0);
	kaas_kw_i64(&w, offset);
	kaas_kw_i32(&w, 1 << 20);
	uint64_t t0 = now_ms();
	int rc = kwire_send(fd, &w);
	if (rc < 0)
		return -1;
	if (hw) { /* fetch-answer: say when the request is out */
		printf("sent\n");
		fflush(stdout);
	}
	int32_t corr;
	size_t len;
	uint8_t *body = kwire_recv(fd, &corr, &len, 30000);
	if (!body)
		return -1;
	*got = len;
	if (err || hw) {
		struct kaas_kr r;
		kaas_kr_init(&r, body, len);
		(void)kaas_kr_i32(&r);   /* throttle */
		(void)kaas_kr_i32(&r);   /* topics: 1 */
		(void)kaas_kr_str(&r, 0);
		(void)kaas_kr_i32(&r);   /* partitions: 1 */
		(void)kaas_kr_i32(&r);
		int e = kaas_kr_i16(&r);
		int64_t h = kaas_kr_i64(&r);
		if (!kaas_kr_ok(&r))
			e = -1000;
		if (err)
			*err = e;
		if (hw)
			*hw = h;
	}
	free(body);
	return (long)(now_ms() - t0);
}

/* ------------------------------------------------ fetch-bounds (issue 22) */

#define FB_MAXP 16

/* One partition of a Fetch answer. */
struct fb_part {
	int32_t index;
	int16_t err;
	int64_t hw;
	size_t bytes;            /* record bytes */
	int nbatches;            /* whole batches in them (-1: not whole batches) */
	size_t first_batch;      /* bytes of the first batch */
	int64_t next;            /* offset after the last batch */
};

/* Fetch v4 of parts[0..n) of topic at offs[], with the given limits; fills
 * out[] in answer order.  0, or -1 (no or malformed answer). */
static int32_t fb_min_bytes = 1, fb_max_wait = 100; /* of the next fb_fetch */

static int fb_fetch(int fd, const char *topic, int n, const int32_t *parts, const int64_t *offs,
		    int32_t max_bytes, int32_t part_max, struct fb_part *out, size_t *resp_len)
{
	static int32_t corr = 100;
	struct kaas_kw w;
	header(&w, 1, 4, ++corr);
	kaas_kw_i32(&w, -1);
	kaas_kw_i32(&w, fb_max_wait);
	kaas_kw_i32(&w, fb_min_bytes);
	kaas_kw_i32(&w, max_bytes);
	kaas_kw_i8(&w, 0);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_i32(&w, n);
	for (int i = 0; i < n; i++) {
		kaas_kw_i32(&w, parts[i]);
		kaas_kw_i64(&w, offs[i]);
		kaas_kw_i32(&w, part_max);
	}
	int rc = kwire_send(fd, &w);
	if (rc < 0)
		return -1;
	int32_t c;
	size_t len;
	uint8_t *body = kwire_recv(fd, &c, &len, 30000);
	if (!body || c != corr) {
		free(body);
		return -1;
	}
	if (resp_len)
		*resp_len = len + 4; /* the size field counts the correlation id */
	struct kaas_kr r;
	kaas_kr_init(&r, body, len);
	(void)kaas_kr_i32(&r);
	int ok = kaas_kr_array(&r, 0, 1) == 1;
	(void)kaas_kr_str(&r, 0);
	ok = ok && kaas_kr_array(&r, 0, 1) == n;
	for (int i = 0; ok && i < n && kaas_kr_ok(&r); i++) {
		struct fb_part *p = &out[i];
		memset(p, 0, sizeof(*p));
		p->index = kaas_kr_i32(&r);
		p->err = kaas_kr_i16(&r);
		p->hw = kaas_kr_i64(&r);
		(void)kaas_kr_i64(&r); /* last stable offset */
		int32_t na = kaas_kr_array(&r, 0, 16);
		for (int32_t a = 0; a < na; a++)
			(void)kaas_kr_raw(&r, 16);
		struct kaas_kslice rec = kaas_kr_nbytes(&r, 0);
		if (!kaas_kr_ok(&r))
			break;
		p->bytes = rec.len > 0 ? (size_t)rec.len : 0;
		p->next = offs[i];
		/* Walk the batches: base offset, length, last offset delta. */
		size_t pos = 0;
		while (pos < p->bytes) {
			struct kaas_kr b;
			kaas_kr_init(&b, rec.p + pos, p->bytes - pos);
			int64_t base = kaas_kr_i64(&b);
			int32_t blen = kaas_kr_i32(&b);
			(void)kaas_kr_raw(&b, 11);
			int32_t last = kaas_kr_i32(&b);
			if (!kaas_kr_ok(&b) || blen < 49 || (size_t)blen + 12 > p->bytes - pos) {
				p->nbatches = -1;
				break;
			}
			if (p->nbatches == 0)
				p->first_batch = (size_t)blen + 12;
			p->nbatches++;
			p->next = base + last + 1;
			pos += (size_t)blen + 12;
		}
	}
	ok = ok && kaas_kr_ok(&r);
	free(body);
	return ok ? 0 : -1;
}

/* Size of the batch at `offset` of topic/part (0: none there), -1 on error. */
static long fb_batch_at(int fd, const char *topic, int32_t part, int64_t offset)
{
	struct fb_part p;
	if (fb_fetch(fd, topic, 1, &part, &offset, 1, 1, &p, NULL) < 0 || p.err)
		return -1;
	return p.nbatches > 0 ? (long)p.first_batch : 0;
}

/* One Fetch with these limits, and the KIP-74 rules checked on its answer:
 * only whole batches; the records of all partitions within max_bytes and
 * each partition's within part_max, except that the first batch of the
 * first non-empty partition is sent whole when it alone is larger (and is
 * then the only batch of the answer if larger than max_bytes); at least one
 * batch when data is there; and no partition stopped early: the next batch
 * of each partition did not fit what was left.  Advances offs[]. */
static int fb_check(int fd, const char *topic, int n, const int32_t *parts, int64_t *offs,
		    int32_t max_bytes, int32_t part_max, size_t *records)
{
	struct fb_part out[FB_MAXP];
	size_t resp_len = 0;
	char what[160];
	snprintf(what, sizeof(what), "fetch-bounds: max_bytes %d partition_max_bytes %d",
		 max_bytes, part_max);
	if (fb_fetch(fd, topic, n, parts, offs, max_bytes, part_max, out, &resp_len) < 0) {
		fprintf(stderr, "FAIL: %s: no or malformed answer\n", what);
		return 1;
	}
	size_t total = 0;
	int first_nonempty = -1, batches = 0, data_left = 0;
	for (int i = 0; i < n; i++) {
		struct fb_part *p = &out[i];
		if (p->err || p->index != parts[i] || p->nbatches < 0) {
			fprintf(stderr, "FAIL: %s: partition %d: error %d, %d batches\n", what,
				parts[i], p->err, p->nbatches);
			return 1;
		}
		data_left |= offs[i] < p->hw;
		if (p->bytes && first_nonempty < 0)
			first_nonempty = i;
		size_t plim = (size_t)part_max;
		if (p->bytes > plim && !(i == first_nonempty && p->nbatches == 1)) {
			fprintf(stderr, "FAIL: %s: partition %d answered %zu bytes in %d batches "
				"over its limit\n", what, parts[i], p->bytes, p->nbatches);
			return 1;
		}
		total += p->bytes;
		batches += p->nbatches;
	}
	if (total > (size_t)max_bytes && batches != 1) {
		fprintf(stderr, "FAIL: %s: %zu record bytes in %d batches (response %zu bytes) "
			"over max_bytes\n", what, total, batches, resp_len);
		return 1;
	}
	if (data_left && batches == 0) {
		fprintf(stderr, "FAIL: %s: no batch although data is there\n", what);
		return 1;
	}
	/* Maximal: each partition's next batch did not fit what was left. */
	size_t before = 0;
	for (int i = 0; i < n; i++) {
		struct fb_part *p = &out[i];
		if (p->bytes == 0 && p->next < p->hw && (first_nonempty < 0 || i < first_nonempty)) {
			fprintf(stderr, "FAIL: %s: partition %d, the first with data, answered "
				"nothing\n", what, parts[i]);
			return 1;
		}
		if (p->next < p->hw) {
			long next = fb_batch_at(fd, topic, parts[i], p->next);
			size_t room_p = (size_t)part_max > p->bytes ? (size_t)part_max - p->bytes : 0;
			size_t used = before + p->bytes;
			size_t room_r = (size_t)max_bytes > used ? (size_t)max_bytes - used : 0;
			size_t room = room_p < room_r ? room_p : room_r;
			if (next < 0 || (next > 0 && (size_t)next <= room)) {
				fprintf(stderr, "FAIL: %s: partition %d stopped at %lld although its "
					"next batch (%ld bytes) fits the %zu bytes left\n", what,
					parts[i], (long long)p->next, next, room);
				return 1;
			}
		}
		before += p->bytes;
		offs[i] = p->next;
	}
	printf("%s: %zu record bytes in %d batches, response %zu bytes\n", what, total, batches,
	       resp_len);
	if (records)
		*records += total;
	return 0;
}

/* fetch-bounds TOPIC NPART: fetch rounds with several limit pairs over the
 * whole topic, each answer checked by fb_check. */
static int fetch_bounds(int fd, const char *topic, int n)
{
	if (n < 1 || n > FB_MAXP)
		return fail("fetch-bounds: bad partition count");
	/* A min_bytes the bounds never let the answer reach: waiting cannot
	 * make it fuller, so it comes at once, not after max_wait. */
	{
		int32_t parts[FB_MAXP];
		int64_t offs[FB_MAXP];
		struct fb_part out[FB_MAXP];
		for (int i = 0; i < n; i++) {
			parts[i] = i;
			offs[i] = 0;
		}
		fb_min_bytes = 50000000;
		fb_max_wait = 4000;
		uint64_t t0 = now_ms();
		int rc = fb_fetch(fd, topic, n, parts, offs, 1000000, 1048576, out, NULL);
		long ms = (long)(now_ms() - t0);
		fb_min_bytes = 1;
		fb_max_wait = 100;
		printf("fetch-bounds: min_bytes 50000000 max_wait 4000 answered after %ld ms\n", ms);
		if (rc < 0 || ms > 2000) {
			fprintf(stderr, "FAIL: fetch-bounds: a full answer below min_bytes came after %ld "
				"ms (max_wait 4000)\n", ms);
			return 1;
		}
	}
	static const int32_t lims[][2] = {
		{ 1000000, 1048576 },   /* librdkafka fetch.max.bytes 1e6 */
		{ 150000, 1048576 },    /* smaller than a batch */
		{ 10000000, 150000 },   /* the partition limit smaller than a batch */
		{ 3000000, 1048576 },
		{ 2500000, 2000000 },
	};
	for (size_t k = 0; k < sizeof(lims) / sizeof(lims[0]); k++) {
		int32_t parts[FB_MAXP];
		int64_t offs[FB_MAXP];
		/* Reverse order: the rules follow the request's order. */
		for (int i = 0; i < n; i++) {
			parts[i] = n - 1 - i;
			offs[i] = 0;
		}
		size_t records = 0;
		for (int round = 0; round < 1000; round++) {
			struct fb_part probe[FB_MAXP];
			if (fb_fetch(fd, topic, n, parts, offs, 1, 1, probe, NULL) < 0)
				return fail("fetch-bounds: probe");
			int left = 0;
			for (int i = 0; i < n; i++)
				left |= offs[i] < probe[i].hw;
			if (!left)
				break;
			if (fb_check(fd, topic, n, parts, offs, lims[k][0], lims[k][1], &records))
				return 1;
		}
		printf("fetch-bounds: limits %d/%d read %zu record bytes to the end\n", lims[k][0],
		       lims[k][1], records);
	}
	return 0;
}

/* ------------------------------------------------ time-offsets (issue 22) */

/* Compress payload[0..len) with codec (1 gzip, 4 zstd) into a malloc'd
 * buffer; *out_len its size.  NULL on failure. */
static uint8_t *compress_payload(int codec, const uint8_t *payload, size_t len, size_t *out_len)
{
	if (codec == 1) {
		z_stream zs;
		memset(&zs, 0, sizeof(zs));
		size_t cap = len + 1024;
		uint8_t *z = malloc(cap);
		if (!z || deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(z);
			return NULL;
		}
		zs.next_in = (uint8_t *)payload;
		zs.avail_in = (uInt)len;
		zs.next_out = z;
		zs.avail_out = (uInt)cap;
		int zr = deflate(&zs, Z_FINISH);
		*out_len = cap - zs.avail_out;
		deflateEnd(&zs);
		if (zr != Z_STREAM_END) {
			free(z);
			return NULL;
		}
		return z;
	}
	size_t cap = ZSTD_compressBound(len);
	uint8_t *z = malloc(cap);
	size_t zr = z ? ZSTD_compress(z, cap, payload, len, 3) : 0;
	if (!z || ZSTD_isError(zr)) {
		free(z);
		return NULL;
	}
	*out_len = zr;
	return z;
}

/* Produce v3 acks=-1 to topic/0 of a RecordBatch v2 of `n` records with
 * timestamps ts[] (values "r0", "r1", ...), its payload compressed with
 * codec (0 none, 1 gzip, 4 zstd); log_append: the LogAppendTime attribute,
 * max timestamp `append_ts`.  The partition error, or -1000 on a transport
 * failure. */
static int produce_time_batch(int fd, const char *topic, int n, const int64_t *ts, int codec,
			      int log_append, int64_t append_ts)
{
	struct kaas_kw recs;
	kaas_kw_init(&recs);
	int64_t max = ts[0];
	for (int i = 0; i < n; i++) {
		char val[16];
		int vl = snprintf(val, sizeof(val), "r%d", i);
		kwire_record(&recs, ts[i] - ts[0], i, val, vl);
		if (ts[i] > max)
			max = ts[i];
	}
	const uint8_t *payload = recs.buf;
	size_t plen = recs.len;
	uint8_t *z = NULL;
	if (codec != 0) {
		z = compress_payload(codec, recs.buf, recs.len, &plen);
		payload = z;
	}
	struct kwire_batch h = { .attributes = (int16_t)(codec | (log_append ? 0x08 : 0)),
				 .last_offset_delta = n - 1, .first_ts = ts[0],
				 .max_ts = log_append ? append_ts : max, .producer_id = -1,
				 .producer_epoch = -1, .base_sequence = -1, .count = n };
	int e = payload ? produce_batch(fd, topic, 21, &h, payload, plen) : -1000;
	kaas_kw_free(&recs);
	free(z);
	return e;
}

/* A hand-rolled reader of the flexible encoding (independent of codec.c's
 * compact helpers): unsigned varints, compact strings and arrays, tags. */
struct flexr {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t fx_uvarint(struct flexr *f)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 35; shift += 7) {
		if (f->p >= f->end) {
			f->bad = 1;
			return 0;
		}
		uint8_t c = *f->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	f->bad = 1;
	return 0;
}

static uint64_t fx_be(struct flexr *f, int n)
{
	uint64_t v = 0;
	if (f->end - f->p < n) {
		f->bad = 1;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v = v << 8 | *f->p++;
	return v;
}

static void fx_skip(struct flexr *f, uint64_t n)
{
	if ((uint64_t)(f->end - f->p) < n)
		f->bad = 1;
	else
		f->p += n;
}

static void fx_tags(struct flexr *f)
{
	uint64_t n = fx_uvarint(f);
	for (uint64_t i = 0; i < n && !f->bad; i++) {
		(void)fx_uvarint(f);
		fx_skip(f, fx_uvarint(f));
	}
}

/* ListOffsets of topic/0 at `ts` with version v (5: classic, 7: flexible);
 * 0 with *err, *off, *ots, *epoch; -1 on a transport or decoding failure. */
static int list_offset(int fd, const char *topic, int16_t v, int64_t ts, int *err, int64_t *off,
		       int64_t *ots, int32_t *epoch)
{
	static int32_t corr = 500;
	int flex = v >= 6;
	struct kaas_kw w;
	header(&w, 2, v, ++corr);
	if (flex)
		kaas_kw_uvarint(&w, 0);       /* header tags */
	kaas_kw_i32(&w, -1);                  /* replica id */
	if (v >= 2)
		kaas_kw_i8(&w, 0);            /* isolation level */
	kaas_kw_array(&w, flex, 1);
	kaas_kw_str(&w, flex, topic);
	kaas_kw_array(&w, flex, 1);
	kaas_kw_i32(&w, 0);
	if (v >= 4)
		kaas_kw_i32(&w, -1);          /* current leader epoch */
	kaas_kw_i64(&w, ts);
	kaas_kw_tags(&w, flex);               /* partition */
	kaas_kw_tags(&w, flex);               /* topic */
	kaas_kw_tags(&w, flex);               /* request */
	int rc = kwire_send(fd, &w);
	int32_t c;
	size_t len;
	uint8_t *body = rc < 0 ? NULL : kwire_recv(fd, &c, &len, 10000);
	if (!body)
		return -1;
	struct flexr f = { body, body + len, c != corr };
	if (flex)
		fx_tags(&f);                  /* response header tags */
	if (v >= 2)
		(void)fx_be(&f, 4);           /* throttle */
	uint64_t nt = flex ? fx_uvarint(&f) - 1 : fx_be(&f, 4);
	if (nt != 1)
		f.bad = 1;
	fx_skip(&f, flex ? fx_uvarint(&f) - 1 : fx_be(&f, 2));  /* topic name */
	uint64_t np = flex ? fx_uvarint(&f) - 1 : fx_be(&f, 4);
	if (np != 1)
		f.bad = 1;
	int32_t idx = (int32_t)fx_be(&f, 4);
	*err = (int16_t)fx_be(&f, 2);
	*ots = (int64_t)fx_be(&f, 8);
	*off = (int64_t)fx_be(&f, 8);
	*epoch = v >= 4 ? (int32_t)fx_be(&f, 4) : -1;
	if (flex) {
		fx_tags(&f);
		fx_tags(&f);
		fx_tags(&f);
	}
	int ok = !f.bad && idx == 0 && f.p == f.end;
	free(body);
	return ok ? 0 : -1;
}

/* time-offsets TOPIC CODEC [append]: into an empty TOPIC/0, one batch of
 * two records with timestamps 1234 and 999999999999 (offsets 0, 1), then
 * one of 2000 and 3000 (offsets 2, 3), payloads compressed with CODEC (0
 * none, 1 gzip, 4 zstd).  ListOffsets v1, v5 and v7 (flexible) by timestamp
 * must answer the earliest record whose timestamp is >= the target, with
 * that record's timestamp, and -3 (v7) the record with the largest
 * timestamp.  "append": one batch only, LogAppendTime with append time 5000
 * (every record's timestamp is 5000). */
struct to_query {
	int64_t target, off, ts;
	int16_t min_v;
};

static int time_offsets(int fd, const char *topic, int codec, int log_append, int check_only)
{
	send_metadata(fd, 1, topic);
	int32_t corr;
	size_t len;
	free(kwire_recv(fd, &corr, &len, 10000));
	const int64_t big = 999999999999LL;
	int64_t a[2] = { 1234, big }, b[2] = { 2000, 3000 };
	int e = check_only ? 0 : produce_time_batch(fd, topic, 2, a, codec, log_append, 5000);
	if (e == 0 && !log_append && !check_only)
		e = produce_time_batch(fd, topic, 2, b, codec, 0, 0);
	if (e != 0) {
		fprintf(stderr, "FAIL: time-offsets: produce answered %d\n", e);
		return 1;
	}
	static const struct to_query create[] = {
		{ 999999999999LL, 1, 999999999999LL, 1 },    /* the query */
		{ 1234, 0, 1234, 1 },
		{ 0, 0, 1234, 1 },
		{ 1235, 1, 999999999999LL, 1 },              /* offset 1 comes before 2 */
		{ 1000000000000LL, -1, -1, 1 },              /* nothing that late */
		{ -2, 0, -1, 1 },
		{ -1, 4, -1, 1 },
		{ -3, 1, 999999999999LL, 7 },                /* the largest timestamp */
	};
	static const struct to_query append[] = {
		{ 4000, 0, 5000, 1 },
		{ 5000, 0, 5000, 1 },
		{ 5001, -1, -1, 1 },
		{ 999999999999LL, -1, -1, 1 },
		{ -1, 2, -1, 1 },
		{ -3, 0, 5000, 7 },
	};
	const struct to_query *q = log_append ? append : create;
	size_t nq = log_append ? sizeof(append) / sizeof(append[0])
			       : sizeof(create) / sizeof(create[0]);
	static const int16_t versions[] = { 1, 5, 7 };
	for (size_t k = 0; k < 3; k++) {
		int16_t v = versions[k];
		for (size_t i = 0; i < nq; i++) {
			if (v < q[i].min_v)
				continue;
			int err = -1;
			int64_t off = -9, ots = -9;
			int32_t epoch = -9;
			if (list_offset(fd, topic, v, q[i].target, &err, &off, &ots, &epoch) < 0) {
				fprintf(stderr, "FAIL: time-offsets: ListOffsets v%d of %lld: no or "
					"malformed answer\n", v, (long long)q[i].target);
				return 1;
			}
			printf("ListOffsets v%d timestamp %lld: error %d offset %lld timestamp %lld "
			       "epoch %d\n", v, (long long)q[i].target, err, (long long)off,
			       (long long)ots, epoch);
			if (err != 0 || off != q[i].off || ots != q[i].ts) {
				fprintf(stderr, "FAIL: time-offsets (codec %d%s): ListOffsets v%d of "
					"%lld answered error %d offset %lld timestamp %lld, want "
					"offset %lld timestamp %lld\n", codec,
					log_append ? ", LogAppendTime" : "", v,
					(long long)q[i].target, err, (long long)off, (long long)ots,
					(long long)q[i].off, (long long)q[i].ts);
				return 1;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rawclient HOST:PORT MODE\n");
		return 2;
	}
	const char *mode = argv[2];
	int fd = kwire_connect(argv[1], 5000);
	if (fd < 0)
		return fail("cannot connect");
	srand((unsigned)time(NULL));
	if (strcmp(mode, "garbage") == 0) {
		/* Random bytes with a plausible small size prefix, then more. */
		uint8_t buf[4096];
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rand();
		buf[0] = 0; buf[1] = 0; buf[2] = 0; buf[3] = 64;
		if (kwire_send_all(fd, buf, sizeof(buf)) < 0 && errno != ECONNRESET && errno != EPIPE)
			return fail("send garbage");
		return closed_by_peer(fd, 5000) ? 0 : fail("garbage: connection not closed");
	}
	if (strcmp(mode, "truncated") == 0) {
		/* A frame announcing 200 bytes, 30 sent, then our side shut. */
		struct kaas_kw w;
		header(&w, 3, 1, 1);
		kaas_kw_put_i32_at(&w, 0, 200);
		kwire_send_all(fd, w.buf, w.len);
		shutdown(fd, SHUT_WR);
		kaas_kw_free(&w);
		return closed_by_peer(fd, 5000) ? 0 : fail("truncated: connection not closed");
	}
	if (strcmp(mode, "negative") == 0 || strcmp(mode, "huge") == 0) {
		uint8_t sz[4] = { 0xff, 0xff, 0xff, 0xf0 };
		if (mode[0] == 'h')
			sz[0] = 0x7f;
		kwire_send_all(fd, sz, 4);
		return closed_by_peer(fd, 5000) ? 0 : fail("bad size: connection not closed");
	}
	if (strcmp(mode, "unknown-api") == 0) {
		struct kaas_kw w;
		header(&w, 999, 0, 1);
		kwire_send(fd, &w);
		return closed_by_peer(fd, 5000) ? 0 : fail("unknown API: connection not closed");
	}
	if (strcmp(mode, "corrupt-crc") == 0 || strcmp(mode, "corrupt-payload") == 0 ||
	    strcmp(mode, "good-batch") == 0) {
		const char *topic = argc > 3 ? argv[3] : "raw";
		/* Make sure the topic exists (auto-create through Metadata). */
		send_metadata(fd, 1, topic);
		int32_t corr;
		size_t len;
		free(kwire_recv(fd, &corr, &len, 10000));
		int want = mode[0] == 'g' ? 0 : 2;
		int e = produce(fd, topic, mode[0] == 'g' ? 0 : mode[8] == 'c' ? 1 : 2);
		if (e != want) {
			fprintf(stderr, "FAIL: %s: produce answered error %d, want %d\n", mode, e, want);
			return 1;
		}
		return 0;
	}
	if (strcmp(mode, "longpoll") == 0) {
		const char *topic = argc > 3 ? argv[3] : "raw";
		int64_t offset = argc > 4 ? atoll(argv[4]) : 0;
		size_t got = 0;
		long ms = fetch_wait(fd, topic, offset, 700, &got, NULL);
		printf("long poll at the end answered after %ld ms\n", ms);
		if (ms < 0)
			return fail("longpoll: no answer");
		if (ms < 600 || ms > 5000)
			return fail("longpoll: answered outside [600, 5000] ms for max_wait 700");
		return 0;
	}
	if (strcmp(mode, "fetch-answer") == 0 && argc > 5) {
		/* One Fetch of TOPIC/0 at OFFSET with max_wait MAXWAIT ms:
		 * prints its error code and high watermark. */
		size_t got = 0;
		int err = 0;
		int64_t hw = -1;
		long ms = fetch_wait_hw(fd, argv[3], atoll(argv[4]), atoi(argv[5]), &got, &err, &hw);
		if (ms < 0)
			return fail("fetch-answer: no answer");
		printf("error %d high_watermark %lld after %ld ms\n", err, (long long)hw, ms);
		return 0;
	}
	if (strcmp(mode, "out-of-range") == 0) {
		/* Past the end: OFFSET_OUT_OF_RANGE (1) at once, not a long poll. */
		const char *topic = argc > 3 ? argv[3] : "raw";
		size_t got = 0;
		int err = 0;
		long ms = fetch_wait(fd, topic, 1000000, 5000, &got, &err);
		if (ms < 0 || err != 1 || ms > 2000) {
			fprintf(stderr, "FAIL: fetch past the end: error %d after %ld ms\n", err, ms);
			return 1;
		}
		return 0;
	}
	if (strcmp(mode, "pipeline") == 0) {
		/* 3000 requests in one go (past the per-connection queue limit, so
		 * reading pauses and resumes): answers must come back in order. */
		for (int32_t i = 0; i < 3000; i++)
			if (send_metadata(fd, 1000 + i, "raw") < 0)
				return fail("pipeline send");
		for (int32_t i = 0; i < 3000; i++) {
			int32_t corr;
			size_t len;
			uint8_t *b = kwire_recv(fd, &corr, &len, 10000);
			if (!b)
				return fail("pipeline: missing answer");
			free(b);
			if (corr != 1000 + i)
				return fail("pipeline: answers out of order");
		}
		return 0;
	}
	if (strcmp(mode, "fetch-bounds") == 0 && argc > 4)
		return fetch_bounds(fd, argv[3], atoi(argv[4]));
	if (strncmp(mode, "time-offsets", 12) == 0 && argc > 4)
		return time_offsets(fd, argv[3], atoi(argv[4]),
				    argc > 5 && strcmp(argv[5], "append") == 0,
				    strcmp(mode, "time-offsets-check") == 0);
	return fail("unknown mode");
}
