/* logtest.c — helpers shared by the partition log tests. */
#include "tests/log/logtest.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"
#include "tests/support/testdir.h"
#include "util/crc32c.h"

int lt_env_init(struct lt_env *e, const char *tag)
{
	memset(e, 0, sizeof *e);
	const char *u = getenv("KAAS_TEST_URL");
	if (u && *u) {
		e->url = strdup(u);
	} else {
		e->tmpdir = kaas_testdir_make(tag);
		if (!e->tmpdir)
			return -errno;
		e->url = strdup(e->tmpdir);
	}
	snprintf(e->top, sizeof e->top, "logtest-%s-%ld", tag, (long)getpid());
	snprintf(e->dir, sizeof e->dir, "%s/0", e->top);
	return e->url ? 0 : -ENOMEM;
}

void lt_env_fini(struct lt_env *e)
{
	struct kaas_substrate *s = NULL;
	if (e->url && kaas_substrate_open(e->url, &s) == 0) {
		kaas_remove_tree(s, e->top, NULL);
		kaas_substrate_close(s);
	}
	if (e->tmpdir)
		kaas_testdir_remove(e->tmpdir);
	free(e->url);
	memset(e, 0, sizeof *e);
}

struct kaas_substrate *lt_sub(struct lt_env *e)
{
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open(e->url, &s);
	if (rc < 0) {
		fprintf(stderr, "cannot open substrate %s: %s\n", e->url, kaas_sub_errdetail());
		abort();
	}
	return s;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

unsigned char *lt_batch(size_t payload, uint32_t records, int64_t ts, int64_t pid, int16_t pep,
			int32_t seq, uint32_t seed, size_t *len)
{
	size_t n = KAAS_BATCH_HEADER_LEN + payload;
	unsigned char *b = calloc(1, n);
	if (!b)
		abort();
	put64(b, 0);
	put32(b + 8, (uint32_t)(n - 12));
	put32(b + 12, 0);
	b[16] = 2;
	b[21] = 0;
	b[22] = 0; /* attributes */
	put32(b + 23, records - 1);
	put64(b + 27, (uint64_t)ts);
	put64(b + 35, (uint64_t)ts);
	put64(b + 43, (uint64_t)pid);
	b[51] = (unsigned char)((uint16_t)pep >> 8);
	b[52] = (unsigned char)pep;
	put32(b + 53, (uint32_t)seq);
	put32(b + 57, records);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < payload; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[KAAS_BATCH_HEADER_LEN + i] = (unsigned char)x;
	}
	put32(b + 17, kaas_crc32c(0, b + 21, n - 21));
	*len = n;
	return b;
}

struct kaas_log_batch lt_desc(const unsigned char *buf, size_t len)
{
	struct kaas_batch_header h;
	kaas_batch_parse_header(buf, len, &h);
	return (struct kaas_log_batch){ .data = buf, .len = len,
					.record_count = (uint32_t)h.last_offset_delta + 1,
					.max_timestamp = h.max_timestamp, .producer_id = h.producer_id,
					.producer_epoch = h.producer_epoch,
					.base_sequence = h.base_sequence };
}

void lt_patch(unsigned char *buf, int64_t base, uint32_t epoch)
{
	put64(buf, (uint64_t)base);
	put32(buf + 12, epoch);
}

/* A zigzag varint at p: its length. */
static size_t put_varint(unsigned char *p, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;
	while (u >= 0x80) {
		p[n++] = (unsigned char)(u | 0x80);
		u >>= 7;
	}
	p[n++] = (unsigned char)u;
	return n;
}

unsigned char *lt_keyed_batch(const struct lt_record *r, uint32_t n, int64_t base_ts, size_t *len)
{
	size_t cap = KAAS_BATCH_HEADER_LEN;
	for (uint32_t i = 0; i < n; i++)
		cap += 40 + (r[i].key ? strlen(r[i].key) : 0) + (r[i].value ? strlen(r[i].value) : 0);
	unsigned char *b = calloc(1, cap);
	if (!b)
		abort();
	size_t pos = KAAS_BATCH_HEADER_LEN;
	int64_t max_ts = base_ts;
	for (uint32_t i = 0; i < n; i++) {
		size_t bl = 0;
		int64_t kl = r[i].key ? (int64_t)strlen(r[i].key) : -1;
		int64_t vl = r[i].value ? (int64_t)strlen(r[i].value) : -1;
		unsigned char *body = malloc(40 + (size_t)(kl > 0 ? kl : 0) + (size_t)(vl > 0 ? vl : 0));
		if (!body)
			abort();
		body[bl++] = 0; /* attributes */
		bl += put_varint(body + bl, r[i].ts - base_ts);
		bl += put_varint(body + bl, i);
		bl += put_varint(body + bl, kl);
		if (kl > 0)
			memcpy(body + bl, r[i].key, (size_t)kl), bl += (size_t)kl;
		bl += put_varint(body + bl, vl);
		if (vl > 0)
			memcpy(body + bl, r[i].value, (size_t)vl), bl += (size_t)vl;
		bl += put_varint(body + bl, 0); /* headers */
		pos += put_varint(b + pos, (int64_t)bl);
		memcpy(b + pos, body, bl);
		free(body);
		pos += bl;
		if (r[i].ts > max_ts)
			max_ts = r[i].ts;
	}
	put64(b, 0);
	put32(b + 8, (uint32_t)(pos - 12));
	b[16] = 2;
	put32(b + 23, n - 1);
	put64(b + 27, (uint64_t)base_ts);
	put64(b + 35, (uint64_t)max_ts);
	put64(b + 43, (uint64_t)-1);
	b[51] = b[52] = 0xff;
	put32(b + 53, (uint32_t)-1);
	put32(b + 57, n);
	put32(b + 17, kaas_crc32c(0, b + 21, pos - 21));
	*len = pos;
	return b;
}

static int get_varint(const unsigned char **p, const unsigned char *end, int64_t *v)
{
	uint64_t u = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char c = *(*p)++;
		u |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
			return 0;
		}
	}
	return -1;
}

int lt_walk_records(const unsigned char *buf, size_t len, lt_record_cb cb, void *arg)
{
	size_t pos = 0;
	while (pos + KAAS_BATCH_HEADER_LEN <= len) {
		struct kaas_batch_header h;
		if (kaas_batch_parse_header(buf + pos, len - pos, &h) < 0 ||
		    pos + (size_t)h.batch_length + 12 > len || !kaas_batch_crc_ok(buf + pos, (size_t)h.batch_length + 12))
			return -1;
		const unsigned char *p = buf + pos + KAAS_BATCH_HEADER_LEN;
		const unsigned char *end = buf + pos + h.batch_length + 12;
		int64_t last = -1;
		for (int32_t i = 0; i < h.record_count; i++) {
			int64_t rl, tsd, od, kl, vl;
			if (get_varint(&p, end, &rl) < 0)
				return -1;
			const unsigned char *rend = p + rl;
			p++;
			if (get_varint(&p, rend, &tsd) < 0 || get_varint(&p, rend, &od) < 0 ||
			    get_varint(&p, rend, &kl) < 0)
				return -1;
			const unsigned char *k = p;
			p += kl > 0 ? kl : 0;
			if (get_varint(&p, rend, &vl) < 0)
				return -1;
			last = od;
			if (cb(arg, h.base_offset + od, h.base_timestamp + tsd, (const char *)k, kl,
			       (const char *)p, vl) < 0)
				return -1;
			p = rend;
		}
		/* A cleaned producer's last batch keeps its last offset delta
		 * (its sequence numbers) past its last kept record. */
		if (last > h.last_offset_delta || (last < h.last_offset_delta && h.producer_id < 0))
			return -1;
		pos += (size_t)h.batch_length + 12;
	}
	return pos == len ? 0 : -1;
}

int lt_fx_setup(void **state, const char *tag)
{
	struct lt_fx *f = calloc(1, sizeof *f);
	if (!f || lt_env_init(&f->env, tag) < 0) {
		free(f);
		return -1;
	}
	f->sub = lt_sub(&f->env);
	*state = f;
	return 0;
}

int lt_fx_teardown(void **state)
{
	struct lt_fx *f = *state;
	kaas_substrate_close(f->sub);
	lt_env_fini(&f->env);
	free(f);
	return 0;
}

struct kaas_log_config lt_small_cfg(void)
{
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 4096;
	c.index_interval_bytes = 256;
	c.checkpoint_bytes = 2048;
	return c;
}

int lt_read_records(struct kaas_log *log, int64_t from, int64_t *last, lt_record_cb cb, void *arg)
{
	int64_t off = from, hwm = kaas_log_high_watermark(log);
	while (off < hwm) {
		void *buf;
		size_t len;
		int64_t first;
		int rc = kaas_log_read_copy(log, off, 1 << 16, &buf, &len, &first);
		if (rc < 0)
			return rc;
		if (!len)
			break;
		rc = lt_walk_records(buf, len, cb, arg);
		free(buf);
		if (rc < 0 || *last < off)
			return -EBADMSG;
		off = *last + 1;
	}
	return 0;
}

void lt_count_segments(struct kaas_substrate *sub, const char *dir, int *cleaned, int *plain)
{
	struct kaas_dirlist l;
	*cleaned = *plain = 0;
	if (kaas_sub_list(sub, dir, &l) < 0)
		abort();
	for (size_t i = 0; i < l.n; i++) {
		size_t n = strlen(l.names[i]);
		if (l.names[i][0] == '.' || n < 4 || strcmp(l.names[i] + n - 4, ".log") != 0)
			continue;
		if (n == 20 + 1 + 10 + 1 + 10 + 4)
			(*cleaned)++;
		else
			(*plain)++;
	}
	kaas_dirlist_free(&l);
}

struct elsewhere {
	struct lt_env *env;
	uint32_t epoch;
	const struct kaas_log_config *cfg;
	struct kaas_substrate *sub;
	struct kaas_log *log;
	int rc;
};

static void *open_elsewhere(void *arg)
{
	struct elsewhere *e = arg;
	e->sub = lt_sub(e->env);
	e->rc = kaas_log_open(e->sub, e->env->dir, e->epoch, e->cfg, &e->log);
	return NULL;
}

int lt_open_elsewhere(struct lt_env *env, uint32_t epoch, const struct kaas_log_config *cfg,
		      struct kaas_substrate **sub, struct kaas_log **log)
{
	struct elsewhere e = { .env = env, .epoch = epoch, .cfg = cfg, .rc = -EIO };
	pthread_t th;
	if (pthread_create(&th, NULL, open_elsewhere, &e) != 0)
		return -EAGAIN;
	pthread_join(th, NULL);
	*sub = e.sub;
	if (e.rc == 0)
		*log = e.log;
	return e.rc;
}

struct kaas_log_config lt_compact_cfg(uint64_t segment_bytes, size_t max_pending_bytes,
				      int64_t delete_retention_ms)
{
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = segment_bytes;
	c.max_pending_bytes = max_pending_bytes;
	c.retention_ms = -1;
	c.segment_ms = -1;
	c.compact = 1;
	c.delete_retention_ms = delete_retention_ms;
	return c;
}
