/* log_clean_map.c — what the log cleaner (log_clean.c) needs to know about
 * records: walking the records of a RecordBatch v2 (decompressed through the
 * process's decompressor when the batch is compressed), the map from key to
 * the offset of its latest record, and rebuilding a batch from a subset of
 * its records (offsets, timestamps and the records' own bytes kept). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log/log_clean.h"
#include "util/crc32c.h"

static _Atomic(kaas_log_decompress_fn) decompressor;

void kaas_log_set_decompressor(kaas_log_decompress_fn fn)
{
	atomic_store(&decompressor, fn);
}

/* ------------------------------------------------------------ records */

int kaas_clean_batch_kind(const struct kaas_batch_header *h)
{
	if (h->attributes & KAAS_CLEAN_ATTR_CONTROL)
		return KAAS_CLEAN_MARKER;
	if ((h->attributes & KAAS_CLEAN_ATTR_CODEC) && !atomic_load(&decompressor))
		return KAAS_CLEAN_OPAQUE;
	return KAAS_CLEAN_KEYED;
}

int kaas_clean_records(const unsigned char *batch, size_t len, const struct kaas_batch_header *h,
		       kaas_clean_record_cb cb, void *arg)
{
	const unsigned char *p = batch + KAAS_BATCH_HEADER_LEN, *end = batch + len;
	uint8_t *inflated = NULL;
	int codec = h->attributes & KAAS_CLEAN_ATTR_CODEC;
	if (codec) {
		kaas_log_decompress_fn fn = atomic_load(&decompressor);
		size_t olen = 0;
		int rc = fn ? fn(codec, p, (size_t)(end - p), 256u << 20, &inflated, &olen) : -ENOTSUP;
		if (rc < 0)
			return rc;
		p = inflated;
		end = inflated + olen;
	}
	int rc = 0;
	for (int32_t i = 0; i < h->record_count && rc == 0; i++) {
		struct kaas_clean_record r;
		int64_t rlen, attr_ts, delta, klen, vlen;
		const unsigned char *start = p;
		if (kaas_batch_varint(&p, end, &rlen) < 0 || rlen < 0 || rlen > end - p) {
			rc = -EBADMSG;
			break;
		}
		const unsigned char *rend = p + rlen;
		p++; /* attributes */
		if (p > rend || kaas_batch_varint(&p, rend, &attr_ts) < 0 ||
		    kaas_batch_varint(&p, rend, &delta) < 0 || kaas_batch_varint(&p, rend, &klen) < 0 ||
		    klen < -1 || klen > rend - p) {
			rc = -EBADMSG;
			break;
		}
		r.key = klen >= 0 ? p : NULL;
		r.key_len = klen;
		p += klen > 0 ? klen : 0;
		if (kaas_batch_varint(&p, rend, &vlen) < 0 || vlen < -1 || vlen > rend - p) {
			rc = -EBADMSG;
			break;
		}
		r.tombstone = vlen < 0;
		r.offset = h->base_offset + delta;
		r.timestamp = (h->attributes & 0x08) ? h->max_timestamp : h->base_timestamp + attr_ts;
		r.offset_delta = (int32_t)delta;
		r.raw = start;
		r.raw_len = (size_t)(rend - start);
		p = rend;
		rc = cb(arg, &r);
	}
	if (rc == 0)
		rc = cb(arg, NULL); /* the end of the batch: raw bytes still valid */
	free(inflated);
	return rc < 0 ? rc : 0;
}

size_t kaas_clean_rebuild(const unsigned char *batch, const struct kaas_clean_record *keep,
			  size_t n, int keep_last, unsigned char *out)
{
	assert(n > 0 || keep_last);
	memcpy(out, batch, KAAS_BATCH_HEADER_LEN);
	size_t pos = KAAS_BATCH_HEADER_LEN;
	for (size_t i = 0; i < n; i++) {
		memcpy(out + pos, keep[i].raw, keep[i].raw_len);
		pos += keep[i].raw_len;
	}
	/* Uncompressed now; base offset, timestamps, producer fields kept. */
	uint16_t attr = (uint16_t)(rd16(out + 21) & ~KAAS_CLEAN_ATTR_CODEC);
	out[21] = (unsigned char)(attr >> 8);
	out[22] = (unsigned char)attr;
	wr32(out + 8, (uint32_t)(pos - 12));
	if (!keep_last)
		wr32(out + 23, (uint32_t)keep[n - 1].offset_delta);
	wr32(out + 57, (uint32_t)n);
	wr32(out + 17, kaas_crc32c(0, out + 21, pos - 21));
	return pos;
}

void kaas_clean_set_horizon(const unsigned char *batch, size_t len, int64_t horizon,
			    unsigned char *out)
{
	assert(len >= KAAS_BATCH_HEADER_LEN && (rd16(batch + 21) & KAAS_CLEAN_ATTR_CONTROL));
	memcpy(out, batch, len);
	uint16_t attr = (uint16_t)(rd16(out + 21) | KAAS_CLEAN_ATTR_HORIZON);
	out[21] = (unsigned char)(attr >> 8);
	out[22] = (unsigned char)attr;
	wr64(out + 27, (uint64_t)horizon);
	wr32(out + 17, kaas_crc32c(0, out + 21, len - 21));
}

/* ------------------------------------------------------------ key map */

struct kmap_entry {
	uint64_t hash;        /* 0: free */
	int64_t offset;       /* of the latest record with this key */
	const unsigned char *key;
	size_t len;
};

struct kaas_clean_map {
	struct kmap_entry *tab;
	size_t cap, n;        /* cap: a power of two */
	unsigned char **chunks; /* the keys' bytes */
	size_t nchunks, chunk_used, chunk_cap;
	size_t bytes;         /* memory held */
};

static uint64_t key_hash(const unsigned char *k, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
	for (size_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h | 1; /* never 0 */
}

struct kaas_clean_map *kaas_clean_map_new(void)
{
	struct kaas_clean_map *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->cap = 1024;
	m->tab = calloc(m->cap, sizeof *m->tab);
	if (!m->tab) {
		free(m);
		return NULL;
	}
	return m;
}

void kaas_clean_map_free(struct kaas_clean_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nchunks; i++)
		free(m->chunks[i]);
	free(m->chunks);
	free(m->tab);
	free(m);
}

static struct kmap_entry *slot_for(struct kmap_entry *tab, size_t cap, uint64_t h,
				   const unsigned char *k, size_t len)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct kmap_entry *e = &tab[i];
		if (!e->hash || (e->hash == h && e->len == len && memcmp(e->key, k, len) == 0))
			return e;
	}
}

static int grow(struct kaas_clean_map *m)
{
	size_t nc = m->cap * 2;
	struct kmap_entry *nt = calloc(nc, sizeof *nt);
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->tab[i].hash)
			*slot_for(nt, nc, m->tab[i].hash, m->tab[i].key, m->tab[i].len) = m->tab[i];
	free(m->tab);
	m->tab = nt;
	m->cap = nc;
	return 0;
}

/* A copy of the key in the map's chunks: the copy, or NULL. */
static const unsigned char *keep_key(struct kaas_clean_map *m, const unsigned char *k, size_t len)
{
	if (m->chunk_used + len > m->chunk_cap || !m->nchunks) {
		size_t cap = len > (1u << 20) ? len : (1u << 20);
		unsigned char **nc = realloc(m->chunks, (m->nchunks + 1) * sizeof *nc);
		if (!nc)
			return NULL;
		m->chunks = nc;
		if (!(m->chunks[m->nchunks] = malloc(cap)))
			return NULL;
		m->nchunks++;
		m->chunk_used = 0;
		m->chunk_cap = cap;
		m->bytes += cap;
	}
	unsigned char *dst = m->chunks[m->nchunks - 1] + m->chunk_used;
	memcpy(dst, k, len);
	m->chunk_used += len;
	return dst;
}

int kaas_clean_map_put(struct kaas_clean_map *m, const unsigned char *k, size_t len, int64_t offset)
{
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return -ENOMEM;
	uint64_t h = key_hash(k, len);
	struct kmap_entry *e = slot_for(m->tab, m->cap, h, k, len);
	if (e->hash) {
		if (offset > e->offset)
			e->offset = offset;
		return 0;
	}
	const unsigned char *copy = keep_key(m, k, len);
	if (!copy && len)
		return -ENOMEM;
	*e = (struct kmap_entry){ .hash = h, .offset = offset, .key = copy, .len = len };
	m->n++;
	return 0;
}

int64_t kaas_clean_map_get(const struct kaas_clean_map *m, const unsigned char *k, size_t len)
{
	uint64_t h = key_hash(k, len);
	const struct kmap_entry *e = slot_for(m->tab, m->cap, h, k, len);
	return e->hash ? e->offset : -1;
}

size_t kaas_clean_map_keys(const struct kaas_clean_map *m)
{
	return m->n;
}
