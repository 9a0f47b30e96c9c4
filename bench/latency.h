/*
 * latency.h — what the librdkafka benchmarks share: a monotonic clock and
 * a growable list of latencies read as percentiles.
 */
#ifndef KAAS_BENCH_LATENCY_H
#define KAAS_BENCH_LATENCY_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/* Latencies in microseconds (float keeps 100 M of them affordable). */
struct bench_lat {
	float *v;
	size_t n, cap;
};

/* Append one; out of memory ends the program (exit 1) with a message. */
void bench_lat_add(struct bench_lat *l, double us);
/* Sort, for bench_lat_ms. */
void bench_lat_sort(struct bench_lat *l);
/* Percentile p (0..1) of the sorted list, in milliseconds; -1 when empty. */
double bench_lat_ms(const struct bench_lat *l, double p);

#endif
