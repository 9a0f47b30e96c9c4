/* codec.c — the Kafka wire primitives (see codec.h). */
#include "kafka/codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void kaas_kr_init(struct kaas_kr *r, const void *buf, size_t len)
{
	r->p = buf;
	r->end = r->p + len;
	r->err = 0;
}

void kaas_kr_fail(struct kaas_kr *r)
{
	r->err = -EBADMSG;
	r->p = r->end;
}

static int need(struct kaas_kr *r, size_t n)
{
	if (r->err)
		return 0;
	if ((size_t)(r->end - r->p) < n) {
		kaas_kr_fail(r);
		return 0;
	}
	return 1;
}

int8_t kaas_kr_i8(struct kaas_kr *r)
{
	if (!need(r, 1))
		return 0;
	return (int8_t)*r->p++;
}

int16_t kaas_kr_i16(struct kaas_kr *r)
{
	if (!need(r, 2))
		return 0;
	uint16_t v = (uint16_t)((r->p[0] << 8) | r->p[1]);
	r->p += 2;
	return (int16_t)v;
}

uint32_t kaas_kr_u32(struct kaas_kr *r)
{
	if (!need(r, 4))
		return 0;
	uint32_t v = ((uint32_t)r->p[0] << 24) | ((uint32_t)r->p[1] << 16) |
		     ((uint32_t)r->p[2] << 8) | r->p[3];
	r->p += 4;
	return v;
}

int32_t kaas_kr_i32(struct kaas_kr *r)
{
	return (int32_t)kaas_kr_u32(r);
}

int64_t kaas_kr_i64(struct kaas_kr *r)
{
	uint64_t hi = kaas_kr_u32(r);
	uint64_t lo = kaas_kr_u32(r);
	return (int64_t)((hi << 32) | lo);
}

static uint64_t read_uvar(struct kaas_kr *r, unsigned maxbytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < maxbytes; i++) {
		if (!need(r, 1))
			return 0;
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	kaas_kr_fail(r);
	return 0;
}

uint32_t kaas_kr_uvarint(struct kaas_kr *r)
{
	uint64_t v = read_uvar(r, 5);
	if (v > UINT32_MAX) {
		kaas_kr_fail(r);
		return 0;
	}
	return (uint32_t)v;
}

int32_t kaas_kr_varint(struct kaas_kr *r)
{
	uint32_t u = kaas_kr_uvarint(r);
	return (int32_t)((u >> 1) ^ (~(u & 1) + 1));
}

int64_t kaas_kr_varlong(struct kaas_kr *r)
{
	uint64_t u = read_uvar(r, 10);
	return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

struct kaas_kslice kaas_kr_raw(struct kaas_kr *r, size_t n)
{
	struct kaas_kslice s = { NULL, -1 };
	if (n > INT32_MAX) {
		kaas_kr_fail(r); /* no frame is that long: malformed */
		return s;
	}
	if (!need(r, n))
		return s;
	s.p = r->p;
	s.len = (int32_t)n;
	r->p += n;
	return s;
}

static struct kaas_kslice read_len_prefixed(struct kaas_kr *r, int flex, int wide, int nullable)
{
	struct kaas_kslice s = { NULL, -1 };
	int64_t len;
	if (flex) {
		len = (int64_t)kaas_kr_uvarint(r) - 1;
	} else if (wide) {
		len = kaas_kr_i32(r);
	} else {
		len = kaas_kr_i16(r);
	}
	if (r->err)
		return s;
	if (len < 0) {
		if (len != -1 || !nullable)
			kaas_kr_fail(r);
		return s;
	}
	return kaas_kr_raw(r, (size_t)len);
}

struct kaas_kslice kaas_kr_str(struct kaas_kr *r, int flex)
{
	return read_len_prefixed(r, flex, 0, 0);
}

struct kaas_kslice kaas_kr_nstr(struct kaas_kr *r, int flex)
{
	return read_len_prefixed(r, flex, 0, 1);
}

struct kaas_kslice kaas_kr_nbytes(struct kaas_kr *r, int flex)
{
	return read_len_prefixed(r, flex, 1, 1);
}

int32_t kaas_kr_array(struct kaas_kr *r, int flex, size_t min_elem)
{
	int64_t n = flex ? (int64_t)kaas_kr_uvarint(r) - 1 : kaas_kr_i32(r);
	if (r->err)
		return 0;
	if (n < 0) {
		if (n != -1)
			kaas_kr_fail(r);
		return r->err ? 0 : -1;
	}
	if (min_elem && (uint64_t)n > kaas_kr_left(r) / min_elem) {
		kaas_kr_fail(r);
		return 0;
	}
	if (n > INT32_MAX) {
		kaas_kr_fail(r);
		return 0;
	}
	return (int32_t)n;
}

int32_t kaas_kr_array_alloc(struct kaas_kr *r, int flex, size_t min_elem, size_t elem_size,
			    void **out)
{
	*out = NULL;
	int32_t n = kaas_kr_array(r, flex, min_elem);
	if (n > 0 && !r->err && !(*out = calloc((size_t)n, elem_size)))
		kaas_kr_fail(r);
	return n;
}

void kaas_kr_tags(struct kaas_kr *r, int flex)
{
	if (!flex)
		return;
	uint32_t n = kaas_kr_uvarint(r);
	for (uint32_t i = 0; i < n && !r->err; i++) {
		(void)kaas_kr_uvarint(r); /* tag */
		uint32_t sz = kaas_kr_uvarint(r);
		(void)kaas_kr_raw(r, sz);
	}
}

char *kaas_kslice_dup(struct kaas_kslice s)
{
	if (s.len < 0)
		return NULL;
	char *c = malloc((size_t)s.len + 1);
	if (!c)
		return NULL;
	if (s.len)
		memcpy(c, s.p, (size_t)s.len);
	c[s.len] = '\0';
	return c;
}

int kaas_kslice_eq(struct kaas_kslice s, const char *c)
{
	size_t n = strlen(c);
	return s.len >= 0 && (size_t)s.len == n && memcmp(s.p, c, n) == 0;
}

/* ------------------------------------------------------------ writer */

void kaas_kw_init(struct kaas_kw *w)
{
	memset(w, 0, sizeof(*w));
}

void kaas_kw_free(struct kaas_kw *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

uint8_t *kaas_kw_reserve(struct kaas_kw *w, size_t n)
{
	if (w->err)
		return NULL;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->len + n)
			cap *= 2;
		uint8_t *b = realloc(w->buf, cap);
		if (!b) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->buf = b;
		w->cap = cap;
	}
	uint8_t *p = w->buf + w->len;
	w->len += n;
	return p;
}

void kaas_kw_i8(struct kaas_kw *w, int8_t v)
{
	uint8_t *p = kaas_kw_reserve(w, 1);
	if (p)
		p[0] = (uint8_t)v;
}

void kaas_kw_i16(struct kaas_kw *w, int16_t v)
{
	uint8_t *p = kaas_kw_reserve(w, 2);
	if (p) {
		p[0] = (uint8_t)((uint16_t)v >> 8);
		p[1] = (uint8_t)v;
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void kaas_kw_i32(struct kaas_kw *w, int32_t v)
{
	uint8_t *p = kaas_kw_reserve(w, 4);
	if (p)
		put32(p, (uint32_t)v);
}

void kaas_kw_put_i32_at(struct kaas_kw *w, size_t at, int32_t v)
{
	if (!w->err && at + 4 <= w->len)
		put32(w->buf + at, (uint32_t)v);
}

void kaas_kw_i64(struct kaas_kw *w, int64_t v)
{
	kaas_kw_i32(w, (int32_t)((uint64_t)v >> 32));
	kaas_kw_i32(w, (int32_t)(uint32_t)v);
}

static void put_uvar(struct kaas_kw *w, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		tmp[n++] = b | (v ? 0x80 : 0);
	} while (v);
	kaas_kw_raw(w, tmp, n);
}

void kaas_kw_uvarint(struct kaas_kw *w, uint32_t v)
{
	put_uvar(w, v);
}

void kaas_kw_varint(struct kaas_kw *w, int32_t v)
{
	put_uvar(w, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

void kaas_kw_varlong(struct kaas_kw *w, int64_t v)
{
	put_uvar(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void kaas_kw_raw(struct kaas_kw *w, const void *p, size_t n)
{
	uint8_t *d = kaas_kw_reserve(w, n);
	if (d && n)
		memcpy(d, p, n);
}

/* The length of a nullable string (wide 0: INT16) or byte array (wide 1:
 * INT32), or its compact form; len < 0: null. */
static void kw_len(struct kaas_kw *w, int flex, int32_t len, int wide)
{
	if (flex)
		kaas_kw_uvarint(w, len < 0 ? 0 : (uint32_t)len + 1);
	else if (wide)
		kaas_kw_i32(w, len < 0 ? -1 : len);
	else
		kaas_kw_i16(w, len < 0 ? -1 : (int16_t)len);
}

void kaas_kw_strn(struct kaas_kw *w, int flex, const void *s, int32_t len)
{
	if (!s)
		len = -1;
	kw_len(w, flex, len, 0);
	if (len >= 0)
		kaas_kw_raw(w, s, (size_t)len);
}

void kaas_kw_str(struct kaas_kw *w, int flex, const char *s)
{
	kaas_kw_strn(w, flex, s, s ? (int32_t)strlen(s) : -1);
}

void kaas_kw_bytes(struct kaas_kw *w, int flex, const void *p, int32_t len)
{
	kw_len(w, flex, len, 1);
	if (len >= 0)
		kaas_kw_raw(w, p, (size_t)len);
}

void kaas_kw_array(struct kaas_kw *w, int flex, int32_t n)
{
	if (flex)
		kaas_kw_uvarint(w, n < 0 ? 0 : (uint32_t)n + 1);
	else
		kaas_kw_i32(w, n);
}

void kaas_kw_tags(struct kaas_kw *w, int flex)
{
	if (flex)
		kaas_kw_uvarint(w, 0);
}
