/*
 * metrics.h — kaas's metrics registry: counters, gauges and fixed-bucket
 * histograms with labels, rendered in the Prometheus text exposition
 * format (version 0.0.4).
 *
 * A metric family is a static `struct kaas_metric` made with one of the
 * KAAS_COUNTER / KAAS_GAUGE / KAAS_HISTOGRAM initialisers; it joins the
 * registry the first time a series of it is asked for (families nobody
 * touched are not rendered).  A series is one set of label values:
 * kaas_metric_series(m, values) finds or makes it (under the family's
 * mutex: cache the pointer where the labels are fixed), and the updates on
 * it are single atomic operations, safe from any thread:
 *
 *     static struct kaas_metric fsync_s = KAAS_HISTOGRAM("kaas_log_fsync_duration_seconds",
 *             "...", KAAS_METRIC_SECONDS, kaas_metric_latency_bounds, 0);
 *     kaas_metric_observe(kaas_metric_series(&fsync_s, NULL), ns);
 *
 * Cardinality is bounded: a family holds at most KAAS_METRIC_MAX_SERIES
 * series; past that, kaas_metric_series returns a shared series that is
 * never rendered (and says so once on stderr).  Series are never removed.
 *
 * Off switch: kaas_metrics_enabled() is 0 until kaas_metrics_enable(1)
 * (kaasd turns it on with --http-listen); callers test it before doing any
 * work for a metric, so a broker without the endpoint pays one relaxed load.
 *
 * Values: counters and histogram observations are unsigned integers (a
 * histogram of seconds is fed nanoseconds and rendered in seconds: its
 * `scale`); gauges are doubles.
 */
#ifndef KAAS_UTIL_METRICS_H
#define KAAS_UTIL_METRICS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define KAAS_METRIC_MAX_LABELS 3
#define KAAS_METRIC_MAX_SERIES 2000
#define KAAS_METRIC_MAX_BUCKETS 20

enum kaas_metric_type { KAAS_METRIC_COUNTER, KAAS_METRIC_GAUGE, KAAS_METRIC_HISTOGRAM };

/* Scale of a histogram's observations when rendered. */
#define KAAS_METRIC_SECONDS 1e-9 /* observed in ns, rendered in s */
#define KAAS_METRIC_UNITS 1.0

struct kaas_metric_series;

struct kaas_metric {
	const char *name;
	const char *help;
	enum kaas_metric_type type;
	const char *labels[KAAS_METRIC_MAX_LABELS]; /* NULL-terminated when fewer */
	const uint64_t *bounds;   /* histogram: ascending upper bounds (raw units), */
	int nbounds;              /* at most KAAS_METRIC_MAX_BUCKETS (+Inf implied) */
	double scale;             /* histogram: rendered value = raw * scale */
	/* Registry state (zero-initialised). */
	pthread_mutex_t mu;
	int registered;           /* under the registry lock */
	struct kaas_metric *next; /* registration order */
	struct kaas_metric_series *head; /* every series, newest first */
	struct kaas_metric_series *plain; /* the series without labels (atomic) */
	size_t nseries;
	int warned;
};

#define KAAS_METRIC_INIT_(n, h, t, b, nb, sc, ...)                                          \
	{ .name = (n), .help = (h), .type = (t), .labels = { __VA_ARGS__ }, .bounds = (b),  \
	  .nbounds = (nb), .scale = (sc), .mu = PTHREAD_MUTEX_INITIALIZER }
/* Label names follow as string literals (at most KAAS_METRIC_MAX_LABELS). */
#define KAAS_COUNTER(name, help, ...) \
	KAAS_METRIC_INIT_(name, help, KAAS_METRIC_COUNTER, NULL, 0, 1.0, __VA_ARGS__)
#define KAAS_GAUGE(name, help, ...) \
	KAAS_METRIC_INIT_(name, help, KAAS_METRIC_GAUGE, NULL, 0, 1.0, __VA_ARGS__)
#define KAAS_HISTOGRAM(name, help, scale, bounds, nbounds, ...) \
	KAAS_METRIC_INIT_(name, help, KAAS_METRIC_HISTOGRAM, bounds, nbounds, scale, __VA_ARGS__)

/* Shared bucket sets: latencies in ns (50 us .. 10 s), counts (1 .. 65536). */
extern const uint64_t kaas_metric_latency_bounds[];
#define KAAS_METRIC_LATENCY_NBOUNDS 16
extern const uint64_t kaas_metric_count_bounds[];
#define KAAS_METRIC_COUNT_NBOUNDS 17

/* Is collection on?  (one relaxed atomic load) */
int kaas_metrics_enabled(void);
/* Turn collection on (1) or off (0); any thread. */
void kaas_metrics_enable(int on);

/* The series of `m` with these label values (one per label name, in
 * order; NULL for a family without labels).  Never NULL: out of memory or
 * over the cap, a shared series that is not rendered.  Any thread. */
struct kaas_metric_series *kaas_metric_series(struct kaas_metric *m, const char *const *values);

/* Updates (any thread, lock-free). */
void kaas_metric_add(struct kaas_metric_series *s, uint64_t n);    /* counter */
void kaas_metric_set(struct kaas_metric_series *s, double v);      /* gauge */
void kaas_metric_observe(struct kaas_metric_series *s, uint64_t raw); /* histogram */

/* The monotonic clock in ns (for timing observations). */
uint64_t kaas_metrics_now_ns(void);

/* ---------------------------------------------------------- rendering */

/* A growing text buffer. */
struct kaas_mbuf {
	char *p;
	size_t len, cap;
	int oom;                  /* an append failed: the text is incomplete */
	int borrowed;             /* p is the caller's (a stack buffer of cap
	                             bytes): moved to the heap when it overflows */
};
void kaas_mbuf_printf(struct kaas_mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append `v` escaped as a label value (\\, \", \n). */
void kaas_mbuf_label_value(struct kaas_mbuf *b, const char *v);
void kaas_mbuf_free(struct kaas_mbuf *b);

/* Append the # HELP and # TYPE lines of a family rendered by hand (the
 * scrape-time gauges of the broker). */
void kaas_mbuf_family(struct kaas_mbuf *b, const char *name, const char *type, const char *help);

/* Render every registered family into b. */
void kaas_metrics_render(struct kaas_mbuf *b);

/* Text rendered elsewhere and appended to every scrape: `slot` (0 ..
 * KAAS_METRICS_SLOTS-1) is replaced by `text` (taken over, malloc'd, or
 * NULL to clear); any thread.  kaas_metrics_render_slots appends them. */
#define KAAS_METRICS_SLOTS 4
void kaas_metrics_publish(int slot, char *text);
void kaas_metrics_render_slots(struct kaas_mbuf *b);

#endif
