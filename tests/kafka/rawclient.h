/*
 * rawclient.h — what rawclient's source files share (internal to the
 * rawclient test program): the helpers every mode uses and the entry point
 * of each mode that has a file of its own.
 */
#ifndef KAAS_TESTS_KAFKA_RAWCLIENT_H
#define KAAS_TESTS_KAFKA_RAWCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "tests/support/kwire.h"

/* Print "FAIL: msg" to stderr; returns 1 (the exit status of a failure). */
int raw_fail(const char *msg);
/* Start a request in w (initialised here): size field and header v1. */
void raw_header(struct kaas_kw *w, int16_t key, int16_t ver, int32_t corr);
/* Produce v3 acks=-1 to topic/0 of the batch (h, payload): the partition
 * error, or -1000 when no well-formed answer with this correlation id came. */
int raw_produce_batch(int fd, const char *topic, int32_t corr, const struct kwire_batch *h,
		      const void *payload, size_t len);
/* Send Metadata v1 for topic (auto-creates it); kwire_send's result.  The
 * answer is left for the caller to read. */
int raw_send_metadata(int fd, int32_t corr, const char *topic);
/* Start w (initialised here) as a Fetch v4 of topic/0 from offset, waiting
 * at most max_wait ms for 1 byte, at most 1 MiB. */
void raw_fetch_request(struct kaas_kw *w, int32_t corr, const char *topic, int64_t offset,
		       int32_t max_wait);
/* The monotonic clock in milliseconds. */
uint64_t raw_now_ms(void);

/* fetch-bounds TOPIC NPART (rawclient_fetch_bounds.c): exit status. */
int raw_fetch_bounds(int fd, const char *topic, int n);
/* time-offsets TOPIC CODEC [append] and time-offsets-check
 * (rawclient_time_offsets.c): exit status. */
int raw_time_offsets(int fd, const char *topic, int codec, int log_append, int check_only);
/* old-offsets, old-offsets-check TOPIC GROUP and refused-old TOPIC
 * (rawclient_old_versions.c): exit status. */
int raw_old_versions(int fd, const char *mode, const char *topic, const char *group);
/* isolation SLOW_TOPIC FAST_TOPIC NFAST SECONDS BURST_MIB
 * (rawclient_isolation.c): exit status. */
int raw_isolation(const char *hostport, int fd, const char *slow_topic, const char *fast_topic,
		  int nfast, int seconds, int burst);
/* txn-lso TOPIC (rawclient_txn.c): exit status. */
int raw_txn_lso(int fd, const char *topic, int check_only);

#endif
