/*
 * kwire.h — the raw Kafka wire for test clients that talk to kaasd by hand
 * (tests/kafka/rawclient; idem_raw, offsets_raw, group_raw and static_raw
 * in tests/groups): connecting, framing a request (size prefix, request
 * header v1), sending it, reading one response frame, and the record batch
 * and Produce request they build.  Primitive
 * encoders and decoders are kafka/codec.h's (struct kaas_kw, struct kaas_kr).
 *
 * Test code: failures are reported as return values, never by exiting; no
 * retries; every wait is bounded by the caller's timeout.
 */
#ifndef KAAS_TEST_KWIRE_H
#define KAAS_TEST_KWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kafka/codec.h"

/* CHECK-style assertion of the raw clients: on a false `cond`, print
 * "FAIL: " and the message and count it in `failures` (an int lvalue). */
#define KWIRE_EXPECT(failures, cond, ...)                                                   \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                              \
			fprintf(stderr, "\n");                                              \
			(failures)++;                                                       \
		}                                                                           \
	} while (0)

/* Connect to "IPv4:PORT" (e.g. "127.0.0.1:9092") within timeout_ms.  Returns
 * a blocking socket, or -1 (malformed address, refused, or timed out). */
int kwire_connect(const char *hostport, int timeout_ms);

/* Initialise w and write a request's start into it: the size field (patched
 * by kwire_finish) and request header v1: api key, version, correlation id
 * and client id.  A flexible version's header tags are the caller's. */
void kwire_begin(struct kaas_kw *w, int16_t key, int16_t version, int32_t corr,
		 const char *client);

/* Patch w's size field: the number of bytes after it. */
void kwire_finish(struct kaas_kw *w);

/* Send all n bytes at p.  0, or -1 (the connection failed). */
int kwire_send_all(int fd, const void *p, size_t n);

/* kwire_finish(w), send it whole and free w (in every case).  0 or -1. */
int kwire_send(int fd, struct kaas_kw *w);

/* Read exactly n bytes into p, each wait for data at most timeout_ms.
 * 0, -1 (closed or failed) or -2 (timed out). */
int kwire_recv_all(int fd, void *p, size_t n, int timeout_ms);

/* Has anything arrived to read within timeout_ms?  1 yes, 0 no. */
int kwire_readable(int fd, int timeout_ms);

/* Read one response frame.  Returns its body after the correlation id
 * (malloc'd, *len bytes and one spare; the caller frees it) and the
 * correlation id in *corr (may be NULL); NULL when the connection closed or
 * failed, a wait exceeded timeout_ms, or the size is below 4 or over 64 MiB. */
uint8_t *kwire_recv(int fd, int32_t *corr, size_t *len, int timeout_ms);

/* kwire_recv, with r set to read the body.  Returns the body to free, or NULL. */
uint8_t *kwire_answer(int fd, struct kaas_kr *r, int timeout_ms);

/* kwire_send(fd, w) (which frees w), then kwire_answer.  The body, or NULL. */
uint8_t *kwire_call(int fd, struct kaas_kw *w, struct kaas_kr *r, int timeout_ms);

/* Append one record to recs (the records of a batch, uncompressed): no key,
 * no headers, the given timestamp and offset deltas and value. */
void kwire_record(struct kaas_kw *recs, int64_t ts_delta, int32_t offset_delta,
		  const void *value, int32_t len);

/* The header fields of a RecordBatch v2 that the test clients choose. */
struct kwire_batch {
	int16_t attributes;        /* codec in bits 0-2, 0x08 LogAppendTime */
	int32_t last_offset_delta;
	int64_t first_ts, max_ts;
	int64_t producer_id;       /* -1: not idempotent */
	int16_t producer_epoch;    /* -1 */
	int32_t base_sequence;     /* -1 */
	int32_t count;             /* records */
	uint32_t crc_flip;         /* XORed into the CRC: 0, or a corrupt batch on purpose */
};

/* Append to w, as BYTES, a RecordBatch v2 (base offset 0, leader epoch -1)
 * with header h and the records `payload` (len bytes, already compressed
 * as h->attributes says); its length and CRC32C are computed here. */
void kwire_batch(struct kaas_kw *w, const struct kwire_batch *h, const void *payload, size_t len);

/* Initialise w as a Produce v3 request (no transactional id, acks -1,
 * timeout 10 s) for partition 0 of topic; append the batch with kwire_batch
 * next, then send it. */
void kwire_produce_begin(struct kaas_kw *w, int32_t corr, const char *client, const char *topic);

/* Read the answer of such a Produce request (r on the body after the
 * correlation id).  0 with the partition's *err and *base_offset (may be
 * NULL), or -1 when the answer is malformed. */
int kwire_produce_answer(struct kaas_kr *r, int16_t *err, int64_t *base_offset);

#endif
