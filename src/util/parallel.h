/*
 * parallel.h — a bounded parallel-for: run one function over the indices
 * [0, n) on at most `threads` threads, the caller's among them, and return
 * when every index is done.
 *
 * For batches of independent, mostly waiting work (opening thousands of
 * partition logs, each a few fsyncs on the volume) where one at a time
 * leaves the volume idle.  The helper threads live only for the call: an
 * idle process holds none.  Indices are handed out in increasing order
 * from a shared counter, so the lowest ones start first.
 *
 * fn runs on any of the threads, concurrently with itself for other
 * indices: it must be safe for that and take no lock the caller holds (the
 * caller waits for the helpers while still holding its own locks).
 * Thread safety: any thread may call it; calls are independent.
 */
#ifndef KAAS_UTIL_PARALLEL_H
#define KAAS_UTIL_PARALLEL_H

#include <stddef.h>

typedef void (*kaas_parallel_fn)(void *arg, size_t i);

/* Run fn(arg, i) once for every i in [0, n) on up to `threads` (>= 1)
 * threads, the calling one included; returns when all are done.  When a
 * helper thread cannot be started the others (at least the caller) do its
 * share.  Returns how many threads ran (1 when n <= 1 or threads == 1). */
unsigned kaas_parallel_for(size_t n, unsigned threads, kaas_parallel_fn fn, void *arg);

#endif
