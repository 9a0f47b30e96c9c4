/*
 * rawclient_time_offsets.c — rawclient's time-offsets modes (issue 22):
 * ListOffsets by timestamp (v1, v5, v7 flexible) against batches produced
 * with chosen timestamps, codecs and CreateTime/LogAppendTime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "tests/kafka/rawclient.h"

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
	int e = payload ? raw_produce_batch(fd, topic, 21, &h, payload, plen) : -1000;
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
	raw_header(&w, 2, v, ++corr);
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

int raw_time_offsets(int fd, const char *topic, int codec, int log_append, int check_only)
{
	raw_send_metadata(fd, 1, topic);
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
