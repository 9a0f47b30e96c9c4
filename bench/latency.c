/* latency.c — see latency.h. */
#include "bench/latency.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_lat_add(struct bench_lat *l, double us)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 65536;
		float *v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
			exit(1);
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (float)us;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

void bench_lat_sort(struct bench_lat *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, cmp_float);
}

double bench_lat_ms(const struct bench_lat *l, double p)
{
	if (l->n == 0)
		return -1;
	size_t i = (size_t)(p * (double)l->n);
	return l->v[i < l->n ? i : l->n - 1] / 1e3;
}
