/*
 * wire_topics.h — the request shape most data APIs share:
 * topics[name, partitions[...]] (Produce, Fetch, ListOffsets, OffsetCommit,
 * OffsetFetch), read once for every version.
 *
 * The caller describes its own topic and partition structs by a shape (a
 * few offsets and sizes, a function that reads one partition's fields);
 * kaas_wire_read_topics allocates and fills the arrays, reading the compact
 * forms and the tagged-field sections of flexible versions itself.
 */
#ifndef KAAS_KAFKA_WIRE_TOPICS_H
#define KAAS_KAFKA_WIRE_TOPICS_H

#include <stddef.h>
#include <stdint.h>

#include "kafka/codec.h"

struct kaas_req;

struct kaas_wire_topics_shape {
	size_t topic_size;      /* the caller's topic element */
	size_t name_at;         /* offsetof its struct kaas_kslice name */
	size_t count_at;        /* offsetof its int32_t partition count */
	size_t parts_at;        /* offsetof its partition array pointer */
	size_t part_size;       /* the caller's partition element */
	size_t err_at;          /* offsetof its int16_t error code */
	size_t min_part;        /* fewest bytes one partition takes on the wire */
	/* Read one partition's fields of version v (not its tagged fields)
	 * into part (zeroed). */
	void (*read_part)(struct kaas_kr *r, int16_t v, int flex, void *part);
};

/* The shape of topic struct T (with fields `struct kaas_kslice name`,
 * `int32_t n` and `P *parts`) and partition struct P (with `int16_t err`). */
#define KAAS_WIRE_TOPICS_SHAPE(T, P, min, reader)                                          \
	{ .topic_size = sizeof(T), .name_at = offsetof(T, name), .count_at = offsetof(T, n),  \
	  .parts_at = offsetof(T, parts), .part_size = sizeof(P), .err_at = offsetof(P, err), \
	  .min_part = (min), .read_part = (reader) }

/* Read topics[name, partitions[...]] of version v (flex: its encoding is
 * flexible).  Returns the topic count and *out (calloc'ed, one spare
 * element; every topic's partition array calloc'ed likewise), or -1 for a
 * null topic array (*out NULL).  On malformed input or out of memory r is
 * failed: check kaas_kr_ok.  Whatever it returns, *out and the count are
 * for kaas_wire_topics_free (topics not read are zeroed: no partitions). */
int32_t kaas_wire_read_topics(struct kaas_kr *r, int16_t v, int flex,
			      const struct kaas_wire_topics_shape *s, void **out);

/* Write an answer's topics[name, partitions[...]] from n topics of the
 * same shape (their names as read): write_part(w, topic, part, arg) writes
 * one partition's fields (topic: its topic's name as read); the compact forms and the tagged-field sections of a
 * flexible answer (flex) are written here. */
void kaas_wire_write_topics(struct kaas_kw *w, int flex, const struct kaas_wire_topics_shape *s,
			    const void *topics, int32_t n,
			    void (*write_part)(struct kaas_kw *w, struct kaas_kslice topic,
					       const void *part, void *arg),
			    void *arg);

/* Is req's version one its API only refuses (kaas_api_refused: Produce
 * < 3, Fetch < 4)?  Then every partition of the n topics gets
 * UNSUPPORTED_VERSION, and 1. */
int kaas_wire_topics_refused(struct kaas_req *req, void *topics, int32_t n,
			     const struct kaas_wire_topics_shape *s);

/* Set the error code of every partition of n topics to err. */
void kaas_wire_topics_set_error(void *topics, int32_t n, const struct kaas_wire_topics_shape *s,
				int16_t err);

/* Free n topics read by kaas_wire_read_topics, their partition arrays
 * included (topics may be NULL). */
void kaas_wire_topics_free(void *topics, int32_t n, const struct kaas_wire_topics_shape *s);

#endif
