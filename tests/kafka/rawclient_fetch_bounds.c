/*
 * rawclient_fetch_bounds.c — rawclient's fetch-bounds mode (issue 22):
 * Fetch requests with several max_bytes/partition_max_bytes pairs over a
 * whole topic, each answer checked against the KIP-74 size rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kafka/rawclient.h"

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
	raw_header(&w, 1, 4, ++corr);
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
int raw_fetch_bounds(int fd, const char *topic, int n)
{
	if (n < 1 || n > FB_MAXP)
		return raw_fail("fetch-bounds: bad partition count");
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
		uint64_t t0 = raw_now_ms();
		int rc = fb_fetch(fd, topic, n, parts, offs, 1000000, 1048576, out, NULL);
		long ms = (long)(raw_now_ms() - t0);
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
				return raw_fail("fetch-bounds: probe");
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
