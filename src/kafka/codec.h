/*
 * codec.h — bounded reader and growable writer for the Kafka wire format.
 *
 * Big-endian fixed-width integers, zig-zag varints, classic (int16/int32
 * length) and compact (unsigned-varint length + 1) strings, bytes and arrays,
 * and tagged-field sections of flexible versions.
 *
 * Reader: every get checks bounds first.  On any malformed input the reader
 * goes into a sticky error state (r->err = -EBADMSG) and every later get
 * returns zero values; callers check kaas_kr_ok() once at the end.  Nothing
 * ever reads outside [buf, buf+len).
 *
 * Writer: appends to a malloc'd buffer; an allocation failure makes the
 * writer sticky-failed (w->err = -ENOMEM).  Integers are patched in place
 * with the kaas_kw_put_*_at helpers (lengths and counts known afterwards).
 */
#ifndef KAAS_KAFKA_CODEC_H
#define KAAS_KAFKA_CODEC_H

#include <stddef.h>
#include <stdint.h>

struct kaas_kr {
	const uint8_t *p;       /* next byte */
	const uint8_t *end;     /* one past the last byte */
	int err;                /* 0 or -EBADMSG (sticky) */
};

/* A borrowed slice of the input (not NUL-terminated). len < 0 means null. */
struct kaas_kslice {
	const uint8_t *p;
	int32_t len;
};

void kaas_kr_init(struct kaas_kr *r, const void *buf, size_t len);
static inline int kaas_kr_ok(const struct kaas_kr *r) { return r->err == 0; }
static inline size_t kaas_kr_left(const struct kaas_kr *r) { return (size_t)(r->end - r->p); }
/* Mark the reader failed (a semantic problem the caller found). */
void kaas_kr_fail(struct kaas_kr *r);

int8_t kaas_kr_i8(struct kaas_kr *r);
int16_t kaas_kr_i16(struct kaas_kr *r);
int32_t kaas_kr_i32(struct kaas_kr *r);
int64_t kaas_kr_i64(struct kaas_kr *r);
uint32_t kaas_kr_u32(struct kaas_kr *r);
/* Unsigned varint (at most 5 bytes / 32 bits). */
uint32_t kaas_kr_uvarint(struct kaas_kr *r);
/* Zig-zag signed varint (32 bits) and varlong (64 bits). */
int32_t kaas_kr_varint(struct kaas_kr *r);
int64_t kaas_kr_varlong(struct kaas_kr *r);
/* Raw n bytes (slice into the input). */
struct kaas_kslice kaas_kr_raw(struct kaas_kr *r, size_t n);

/* Strings: `flex` selects the compact form.  Non-nullable readers fail on a
 * null.  Returned slices point into the input. */
struct kaas_kslice kaas_kr_str(struct kaas_kr *r, int flex);
struct kaas_kslice kaas_kr_nstr(struct kaas_kr *r, int flex);
/* Bytes with int32 (or compact) length; null allowed (len -1). */
struct kaas_kslice kaas_kr_nbytes(struct kaas_kr *r, int flex);
/* Array length: returns the element count, or -1 for a null array.  Fails
 * (returning 0) when the count is impossible for the bytes left, given
 * each element takes at least min_elem bytes. */
int32_t kaas_kr_array(struct kaas_kr *r, int flex, size_t min_elem);
/* kaas_kr_array, then room for that many zeroed elements of elem_size:
 * returns the count as kaas_kr_array does and *out (calloc'ed; NULL when
 * the count is <= 0 or the reader failed).  Out of memory fails the
 * reader. */
int32_t kaas_kr_array_alloc(struct kaas_kr *r, int flex, size_t min_elem, size_t elem_size,
			    void **out);
/* Skip a tagged-field section (no-op when !flex). */
void kaas_kr_tags(struct kaas_kr *r, int flex);

/* Copy a slice into a NUL-terminated malloc'd string (NULL for null or on
 * allocation failure). */
char *kaas_kslice_dup(struct kaas_kslice s);
/* Does the slice equal the C string? */
int kaas_kslice_eq(struct kaas_kslice s, const char *c);

struct kaas_kw {
	uint8_t *buf;
	size_t len;
	size_t cap;
	int err;                /* 0 or -ENOMEM (sticky) */
};

void kaas_kw_init(struct kaas_kw *w);
void kaas_kw_free(struct kaas_kw *w);
/* Reserve n bytes at the end and return a pointer to them (NULL on failure). */
uint8_t *kaas_kw_reserve(struct kaas_kw *w, size_t n);
void kaas_kw_i8(struct kaas_kw *w, int8_t v);
void kaas_kw_i16(struct kaas_kw *w, int16_t v);
void kaas_kw_i32(struct kaas_kw *w, int32_t v);
void kaas_kw_i64(struct kaas_kw *w, int64_t v);
void kaas_kw_uvarint(struct kaas_kw *w, uint32_t v);
void kaas_kw_varint(struct kaas_kw *w, int32_t v);
void kaas_kw_varlong(struct kaas_kw *w, int64_t v);
void kaas_kw_raw(struct kaas_kw *w, const void *p, size_t n);
/* String from a C string (NULL => null, only for nullable fields). */
void kaas_kw_str(struct kaas_kw *w, int flex, const char *s);
void kaas_kw_strn(struct kaas_kw *w, int flex, const void *s, int32_t len);
/* Bytes (NULL/len<0 => null). */
void kaas_kw_bytes(struct kaas_kw *w, int flex, const void *p, int32_t len);
/* Array header for n elements (n < 0 => null). */
void kaas_kw_array(struct kaas_kw *w, int flex, int32_t n);
/* Empty tagged-field section (no-op when !flex). */
void kaas_kw_tags(struct kaas_kw *w, int flex);
void kaas_kw_put_i32_at(struct kaas_kw *w, size_t at, int32_t v);

#endif
