/* metrics.c — the metrics registry and its Prometheus text rendering (see
 * metrics.h). */
#include "util/metrics.h"
#include "util/lock_rank.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const uint64_t kaas_metric_latency_bounds[KAAS_METRIC_LATENCY_NBOUNDS] = {
	50000ull,      100000ull,     250000ull,     500000ull,
	1000000ull,    2500000ull,    5000000ull,    10000000ull,
	25000000ull,   50000000ull,   100000000ull,  250000000ull,
	500000000ull,  1000000000ull, 2500000000ull, 10000000000ull,
};
const uint64_t kaas_metric_count_bounds[KAAS_METRIC_COUNT_NBOUNDS] = {
	1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
};

/* One series.  `labels` is the rendered label set ("a=\"x\",b=\"y\"", or
 * "" without labels).  Each series starts a cache line and owns the lines
 * it spans (allocated by series_alloc), so that threads updating different
 * series (the loop's request counters, the sync thread's fsync histogram,
 * the I/O pool's substrate ops) never write to a line another one writes.
 * A histogram's count is not kept: it is the sum of its buckets, added up
 * when rendered (one atomic add fewer per observation). */
#define SERIES_ALIGN 64
struct kaas_metric_series {
	_Alignas(SERIES_ALIGN) uint64_t value; /* counter; gauge: the double's bits */
	uint64_t sum;             /* histogram */
	const uint64_t *bounds;   /* histogram: the family's (0 of them in the sink) */
	int nbounds;
	struct kaas_metric_series *next;
	uint64_t buckets[KAAS_METRIC_MAX_BUCKETS + 1];
	char labels[];
};

static int enabled;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct kaas_metric *reg_head, *reg_tail;
static struct kaas_metric_series sink; /* over the cap or out of memory */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static char *slots[KAAS_METRICS_SLOTS];

int kaas_metrics_enabled(void)
{
	return __atomic_load_n(&enabled, __ATOMIC_RELAXED);
}

void kaas_metrics_enable(int on)
{
	__atomic_store_n(&enabled, on ? 1 : 0, __ATOMIC_RELAXED);
}

uint64_t kaas_metrics_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ buffers */

static int mbuf_room(struct kaas_mbuf *b, size_t more)
{
	if (b->oom)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *p = b->borrowed ? malloc(cap) : realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	if (b->borrowed) {
		memcpy(p, b->p, b->len + 1);
		b->borrowed = 0;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void kaas_mbuf_printf(struct kaas_mbuf *b, const char *fmt, ...)
{
	/* Formatted once when it fits in the room left (the usual case), twice
	 * when the buffer must grow first. */
	if (mbuf_room(b, 0) < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->p[b->len] = '\0';
		return;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		b->p[b->len] = '\0';
		if (mbuf_room(b, (size_t)n) < 0)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Append n bytes of s. */
static void mbuf_put(struct kaas_mbuf *b, const char *s, size_t n)
{
	if (mbuf_room(b, n) < 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void mbuf_str(struct kaas_mbuf *b, const char *s)
{
	mbuf_put(b, s, strlen(s));
}

/* Append v in decimal. */
static void mbuf_u64(struct kaas_mbuf *b, uint64_t v)
{
	char d[24];
	size_t i = sizeof d;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	mbuf_put(b, d + i, sizeof d - i);
}

void kaas_mbuf_label_value(struct kaas_mbuf *b, const char *v)
{
	for (; *v; v++) {
		if (mbuf_room(b, 2) < 0)
			return;
		if (*v == '\\' || *v == '"') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = *v;
		} else if (*v == '\n') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = 'n';
		} else {
			b->p[b->len++] = *v;
		}
		b->p[b->len] = '\0';
	}
}

void kaas_mbuf_free(struct kaas_mbuf *b)
{
	if (!b->borrowed)
		free(b->p);
	memset(b, 0, sizeof(*b));
}

void kaas_mbuf_family(struct kaas_mbuf *b, const char *name, const char *type, const char *help)
{
	kaas_mbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* ------------------------------------------------------------- series */

static void register_family(struct kaas_metric *m)
{
	kaas_lock(&reg_mu, KAAS_RANK_METRICS);
	if (!m->registered) {
		m->registered = 1;
		if (reg_tail)
			reg_tail->next = m;
		else
			reg_head = m;
		reg_tail = m;
	}
	kaas_unlock(&reg_mu);
}

static int nlabels(const struct kaas_metric *m)
{
	int n = 0;
	while (n < KAAS_METRIC_MAX_LABELS && m->labels[n])
		n++;
	return n;
}

/* A zeroed series with room for `labels` bytes of label text, alone on
 * its cache lines. */
static struct kaas_metric_series *series_alloc(size_t labels)
{
	size_t size = sizeof(struct kaas_metric_series) + labels;
	size = (size + SERIES_ALIGN - 1) / SERIES_ALIGN * SERIES_ALIGN;
	struct kaas_metric_series *s = aligned_alloc(SERIES_ALIGN, size);
	if (s)
		memset(s, 0, size);
	return s;
}

struct kaas_metric_series *kaas_metric_series(struct kaas_metric *m, const char *const *values)
{
	int nl = nlabels(m);
	if (nl == 0) {
		struct kaas_metric_series *s = __atomic_load_n(&m->plain, __ATOMIC_ACQUIRE);
		if (s)
			return s;
	}
	assert(m->nbounds <= KAAS_METRIC_MAX_BUCKETS);
	char stack[256] = "";
	struct kaas_mbuf lb = { .p = stack, .cap = sizeof stack, .borrowed = 1 };
	for (int i = 0; i < nl; i++) {
		kaas_mbuf_printf(&lb, "%s%s=\"", i ? "," : "", m->labels[i]);
		kaas_mbuf_label_value(&lb, values && values[i] ? values[i] : "");
		kaas_mbuf_printf(&lb, "\"");
	}
	if (lb.oom) {
		kaas_mbuf_free(&lb);
		return &sink;
	}
	const char *text = lb.p;
	kaas_lock(&m->mu, KAAS_RANK_METRICS);
	struct kaas_metric_series *s;
	for (s = m->head; s; s = s->next)
		if (strcmp(s->labels, text) == 0)
			break;
	if (!s) {
		if (m->nseries >= KAAS_METRIC_MAX_SERIES) {
			if (!m->warned++)
				fprintf(stderr, "kaas metrics: %s has %d series: no more are kept\n",
					m->name, KAAS_METRIC_MAX_SERIES);
			s = &sink;
		} else if ((s = series_alloc(strlen(text) + 1)) == NULL) {
			s = &sink;
		} else {
			strcpy(s->labels, text);
			s->bounds = m->bounds;
			s->nbounds = m->nbounds;
			if (m->type == KAAS_METRIC_GAUGE) {
				double zero = 0.0;
				memcpy(&s->value, &zero, sizeof(zero));
			}
			s->next = m->head;
			__atomic_store_n(&m->head, s, __ATOMIC_RELEASE);
			m->nseries++;
			if (nl == 0)
				__atomic_store_n(&m->plain, s, __ATOMIC_RELEASE);
		}
	}
	kaas_unlock(&m->mu);
	kaas_mbuf_free(&lb);
	if (s != &sink)
		register_family(m);
	return s;
}

void kaas_metric_add(struct kaas_metric_series *s, uint64_t n)
{
	__atomic_fetch_add(&s->value, n, __ATOMIC_RELAXED);
}

void kaas_metric_set(struct kaas_metric_series *s, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	__atomic_store_n(&s->value, bits, __ATOMIC_RELAXED);
}

void kaas_metric_observe(struct kaas_metric_series *s, uint64_t raw)
{
	int i = 0;
	while (i < s->nbounds && raw > s->bounds[i])
		i++;
	__atomic_fetch_add(&s->buckets[i], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sum, raw, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------- rendering */

static void render_value(struct kaas_mbuf *b, double v)
{
	if (isnan(v))
		kaas_mbuf_printf(b, "NaN\n");
	else if (isinf(v))
		kaas_mbuf_printf(b, "%s\n", v > 0 ? "+Inf" : "-Inf");
	else if (v == (double)(int64_t)v && fabs(v) < 9e15)
		kaas_mbuf_printf(b, "%lld\n", (long long)v);
	else
		kaas_mbuf_printf(b, "%.9g\n", v);
}

/* "name{labels} " (braces only with labels). */
static void render_name(struct kaas_mbuf *b, const char *name, const char *suffix,
			const struct kaas_metric_series *s)
{
	mbuf_str(b, name);
	mbuf_str(b, suffix);
	if (s->labels[0]) {
		mbuf_put(b, "{", 1);
		mbuf_str(b, s->labels);
		mbuf_put(b, "} ", 2);
	} else {
		mbuf_put(b, " ", 1);
	}
}

/* The buckets' `le` values of a family, formatted once per scrape. */
struct le_text {
	char v[KAAS_METRIC_MAX_BUCKETS + 1][32];
};

static void render_histogram(struct kaas_mbuf *b, const struct kaas_metric *m,
			     const struct kaas_metric_series *s, const struct le_text *le)
{
	uint64_t cum = 0;
	for (int i = 0; i <= m->nbounds; i++) {
		cum += __atomic_load_n(&s->buckets[i], __ATOMIC_RELAXED);
		mbuf_str(b, m->name);
		mbuf_put(b, "_bucket{", 8);
		if (s->labels[0]) {
			mbuf_str(b, s->labels);
			mbuf_put(b, ",", 1);
		}
		mbuf_put(b, "le=\"", 4);
		mbuf_str(b, le->v[i]);
		mbuf_put(b, "\"} ", 3);
		mbuf_u64(b, cum);
		mbuf_put(b, "\n", 1);
	}
	/* the count is the +Inf bucket's (observations are not counted twice) */
	render_name(b, m->name, "_sum", s);
	render_value(b, (double)__atomic_load_n(&s->sum, __ATOMIC_RELAXED) * m->scale);
	render_name(b, m->name, "_count", s);
	mbuf_u64(b, cum);
	mbuf_put(b, "\n", 1);
}

static void render_family(struct kaas_mbuf *b, struct kaas_metric *m)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	kaas_mbuf_family(b, m->name, types[m->type], m->help);
	struct le_text le;
	if (m->type == KAAS_METRIC_HISTOGRAM) {
		for (int i = 0; i < m->nbounds; i++)
			snprintf(le.v[i], sizeof le.v[i], "%.9g", (double)m->bounds[i] * m->scale);
		snprintf(le.v[m->nbounds], sizeof le.v[m->nbounds], "+Inf");
	}
	for (struct kaas_metric_series *s = __atomic_load_n(&m->head, __ATOMIC_ACQUIRE); s; s = s->next) {
		if (m->type == KAAS_METRIC_HISTOGRAM) {
			render_histogram(b, m, s, &le);
		} else if (m->type == KAAS_METRIC_COUNTER) {
			render_name(b, m->name, "", s);
			mbuf_u64(b, __atomic_load_n(&s->value, __ATOMIC_RELAXED));
			mbuf_put(b, "\n", 1);
		} else {
			uint64_t bits = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
			double v;
			memcpy(&v, &bits, sizeof(v));
			render_name(b, m->name, "", s);
			render_value(b, v);
		}
	}
}

void kaas_metrics_render(struct kaas_mbuf *b)
{
	kaas_lock(&reg_mu, KAAS_RANK_METRICS);
	struct kaas_metric *head = reg_head;
	kaas_unlock(&reg_mu);
	/* Families are only ever appended: walking the list without the lock
	 * is safe once the head is read (next is written before tail moves,
	 * under reg_mu; a family added meanwhile may be missed this time). */
	for (struct kaas_metric *m = head; m; m = __atomic_load_n(&m->next, __ATOMIC_ACQUIRE))
		render_family(b, m);
}

void kaas_metrics_publish(int slot, char *text)
{
	assert(slot >= 0 && slot < KAAS_METRICS_SLOTS);
	kaas_lock(&slot_mu, KAAS_RANK_METRICS);
	char *old = slots[slot];
	slots[slot] = text;
	kaas_unlock(&slot_mu);
	free(old);
}

void kaas_metrics_render_slots(struct kaas_mbuf *b)
{
	kaas_lock(&slot_mu, KAAS_RANK_METRICS);
	for (int i = 0; i < KAAS_METRICS_SLOTS; i++)
		if (slots[i])
			kaas_mbuf_printf(b, "%s", slots[i]);
	kaas_unlock(&slot_mu);
}
