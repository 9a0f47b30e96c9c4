/* quotas.c — the client quota cache and the measured rates
 * (broker/quotas.h). */
#include "broker/quotas.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/lock_rank.h"
#include "util/logger.h"
#include "util/metrics.h"
#include "util/thread_name.h"

#define WINDOWS_MAX 100
#define RATE_BUCKETS 256
#define RATE_IDLE_MS (3600u * 1000u) /* a rate unused this long is dropped (Kafka: 1 h) */

/* One sample of a rate. */
struct sample {
	double value;
	uint64_t start_ms;
};

/* The rate of one key for one (user, client) tag pair. */
struct rate {
	struct rate *next;
	int key;
	char *user, *client;     /* the tags ("" when the entity has no such part) */
	uint64_t last_ms;        /* last recorded */
	int n, cur;              /* samples in use, the current one */
	struct sample s[];       /* quota.window.num */
};

struct kaas_quotas {
	struct kaas_substrate *cluster;
	const struct kaas_config *cfg;
	unsigned windows;        /* quota.window.num */
	uint64_t window_ms;      /* quota.window.size.seconds x 1000 */

	pthread_rwlock_t lock;   /* the cache */
	struct kaas_quota *v;
	size_t n;
	size_t per_key[KAAS_QK_COUNT]; /* quotas of each key (atomic reads: a
	                                  request of a key with none takes no lock) */

	pthread_mutex_t rates_mu; /* the rates */
	struct rate *buckets[RATE_BUCKETS];

	pthread_mutex_t refresh_mu; /* one refresh at a time */
	pthread_mutex_t mu;         /* the thread's stop flag */
	pthread_cond_t cv;
	int stop, started;
	pthread_t thread;
};

static struct kaas_metric throttled_total =
	KAAS_COUNTER("kaas_quota_throttled_total",
		     "Responses that carried a throttle time, by the quota exceeded", "quota");
static struct kaas_metric throttle_ms_total =
	KAAS_COUNTER("kaas_quota_throttle_ms_total",
		     "Milliseconds of throttle time given to clients, by quota", "quota");

/* ------------------------------------------------------------ settings */

int kaas_config_quota_key(const char *key)
{
	return strcmp(key, "quota.window.num") == 0 ||
	       strcmp(key, "quota.window.size.seconds") == 0;
}

int kaas_config_quota_apply(struct kaas_config *c, const char *key, const char *v)
{
	char *end = NULL;
	errno = 0;
	long x = strtol(v, &end, 10);
	int num = strcmp(key, "quota.window.num") == 0;
	long lo = num ? 2 : 1, hi = num ? WINDOWS_MAX : 3600;
	if (errno || !end || end == v || *end || x < lo || x > hi) {
		fprintf(stderr, "kaasd: bad value '%s' for %s (%ld..%ld)\n", v, key, lo, hi);
		return -EINVAL;
	}
	if (num)
		c->quota_window_num = (uint32_t)x;
	else
		c->quota_window_s = (uint32_t)x;
	return 0;
}

/* --------------------------------------------------------------- cache */

int kaas_quotas_refresh(struct kaas_quotas *q)
{
	if (!q)
		return 0;
	kaas_lock(&q->refresh_mu, KAAS_RANK_QUOTA_REFRESH);
	struct kaas_quota *nv = NULL;
	size_t nn = 0, nbad = 0;
	int rc = kaas_quota_store_load(q->cluster, &nv, &nn, &nbad);
	if (rc < 0) {
		kaas_warn("client quotas: cannot read %s: %s (the last quotas read stay in force)",
			  KAAS_QUOTAS_DIR, kaas_sub_errdetail());
		kaas_unlock(&q->refresh_mu);
		return rc;
	}
	size_t per[KAAS_QK_COUNT] = { 0 };
	for (size_t i = 0; i < nn; i++) {
		assert(nv[i].key >= 0 && nv[i].key < KAAS_QK_COUNT);
		per[nv[i].key]++;
	}
	kaas_wrlock(&q->lock, KAAS_RANK_QUOTA_CACHE);
	struct kaas_quota *ov = q->v;
	size_t on = q->n;
	q->v = nv;
	q->n = nn;
	for (int k = 0; k < KAAS_QK_COUNT; k++)
		__atomic_store_n(&q->per_key[k], per[k], __ATOMIC_RELEASE);
	kaas_rwunlock(&q->lock);
	kaas_quota_store_free(ov, on);
	kaas_unlock(&q->refresh_mu);
	return 0;
}

/* Drop the rates nobody recorded into for RATE_IDLE_MS. */
static void rates_expire(struct kaas_quotas *q, uint64_t now)
{
	kaas_lock(&q->rates_mu, KAAS_RANK_QUOTA_RATES);
	for (int b = 0; b < RATE_BUCKETS; b++) {
		struct rate **pp = &q->buckets[b];
		while (*pp) {
			struct rate *r = *pp;
			if (now - r->last_ms > RATE_IDLE_MS) {
				*pp = r->next;
				free(r->user);
				free(r->client);
				free(r);
			} else {
				pp = &r->next;
			}
		}
	}
	kaas_unlock(&q->rates_mu);
}

static void *refresh_thread(void *arg)
{
	struct kaas_quotas *q = arg;
	kaas_thread_name("kaas-quotas");
	kaas_lock(&q->mu, KAAS_RANK_LEAF);
	while (!q->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)q->cfg->heartbeat_ms * 1000000ull;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		pthread_cond_timedwait(&q->cv, &q->mu, &ts);
		if (q->stop)
			break;
		kaas_unlock(&q->mu);
		(void)kaas_quotas_refresh(q);
		rates_expire(q, kaas_mono_ms());
		kaas_lock(&q->mu, KAAS_RANK_LEAF);
	}
	kaas_unlock(&q->mu);
	return NULL;
}

/* ----------------------------------------------------------- lifecycle */

int kaas_quotas_new(struct kaas_substrate *cluster, const struct kaas_config *cfg,
		    struct kaas_quotas **out)
{
	struct kaas_quotas *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->cluster = cluster;
	q->cfg = cfg;
	q->windows = cfg->quota_window_num ? cfg->quota_window_num : 11;
	q->window_ms = 1000ull * (cfg->quota_window_s ? cfg->quota_window_s : 1);
	assert(q->windows >= 2 && q->windows <= WINDOWS_MAX);
	pthread_rwlock_init(&q->lock, NULL);
	pthread_mutex_init(&q->rates_mu, NULL);
	pthread_mutex_init(&q->refresh_mu, NULL);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	int rc = kaas_quotas_refresh(q);
	if (rc < 0) {
		kaas_quotas_free(q);
		return rc;
	}
	if (q->n)
		kaas_info("client quotas: %zu quota value(s) in force", q->n);
	*out = q;
	return 0;
}

int kaas_quotas_start(struct kaas_quotas *q)
{
	int rc = pthread_create(&q->thread, NULL, refresh_thread, q);
	if (rc != 0)
		return -rc;
	q->started = 1;
	return 0;
}

void kaas_quotas_free(struct kaas_quotas *q)
{
	if (!q)
		return;
	if (q->started) {
		kaas_lock(&q->mu, KAAS_RANK_LEAF);
		q->stop = 1;
		pthread_cond_signal(&q->cv);
		kaas_unlock(&q->mu);
		pthread_join(q->thread, NULL);
	}
	rates_expire(q, UINT64_MAX);
	kaas_quota_store_free(q->v, q->n);
	pthread_rwlock_destroy(&q->lock);
	pthread_mutex_destroy(&q->rates_mu);
	pthread_mutex_destroy(&q->refresh_mu);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}

size_t kaas_quotas_foreach(struct kaas_quotas *q,
			   void (*fn)(void *arg, const struct kaas_quota *qt), void *arg)
{
	if (!q)
		return 0;
	kaas_rdlock(&q->lock, KAAS_RANK_QUOTA_CACHE);
	for (size_t i = 0; i < q->n; i++)
		fn(arg, &q->v[i]);
	size_t n = q->n;
	kaas_rwunlock(&q->lock);
	return n;
}

/* ------------------------------------------------------------ matching */

/* The rank (1..8, see quotas.h) of entity e for (user, client), or 0 when
 * it does not apply. */
static int match_rank(const struct kaas_quota_entity *e, const char *user, const char *client)
{
	int u = !e->has_user ? 0 : !e->user ? 2 : strcmp(e->user, user) == 0 ? 1 : -1;
	int c = !e->has_client ? 0 : !e->client ? 2 : strcmp(e->client, client) == 0 ? 1 : -1;
	if (u < 0 || c < 0)
		return 0;
	static const int rank[3][3] = {
		/* client: none, named, default */
		{ 0, 7, 8 }, /* no user */
		{ 3, 1, 2 }, /* user named */
		{ 6, 4, 5 }, /* user default */
	};
	return rank[u][c];
}

/* The quota of key for (user, client) and its entity's shape: 0 when none
 * applies.  Under the cache lock. */
static double find_quota(struct kaas_quotas *q, int key, const char *user, const char *client,
			 int *has_user, int *has_client)
{
	int best = 9;
	double value = 0;
	for (size_t i = 0; i < q->n; i++) {
		const struct kaas_quota *qt = &q->v[i];
		if (qt->key != key)
			continue;
		int r = match_rank(&qt->e, user, client);
		if (r && r < best) {
			best = r;
			value = qt->value;
			*has_user = qt->e.has_user;
			*has_client = qt->e.has_client;
		}
	}
	return value;
}

int kaas_quotas_any(struct kaas_quotas *q, int key)
{
	return q && key >= 0 && key < KAAS_QK_COUNT &&
	       __atomic_load_n(&q->per_key[key], __ATOMIC_ACQUIRE) != 0;
}

double kaas_quotas_limit(struct kaas_quotas *q, int key, const char *user, const char *client)
{
	if (!q || key < 0 || key >= KAAS_QK_COUNT ||
	    !__atomic_load_n(&q->per_key[key], __ATOMIC_ACQUIRE))
		return 0;
	int hu = 0, hc = 0;
	kaas_rdlock(&q->lock, KAAS_RANK_QUOTA_CACHE);
	double v = find_quota(q, key, user, client, &hu, &hc);
	kaas_rwunlock(&q->lock);
	return v;
}

/* --------------------------------------------------------------- rates */

static unsigned tag_hash(int key, const char *user, const char *client)
{
	uint32_t h = 2166136261u ^ (uint32_t)key;
	for (const char *p = user; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	for (const char *p = client; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h % RATE_BUCKETS;
}

/* The rate of (key, user, client), made if new (NULL: out of memory).
 * Under rates_mu. */
static struct rate *rate_get(struct kaas_quotas *q, int key, const char *user,
			     const char *client)
{
	unsigned b = tag_hash(key, user, client);
	for (struct rate *r = q->buckets[b]; r; r = r->next)
		if (r->key == key && strcmp(r->user, user) == 0 && strcmp(r->client, client) == 0)
			return r;
	struct rate *r = calloc(1, sizeof(*r) + q->windows * sizeof(struct sample));
	if (!r)
		return NULL;
	r->key = key;
	r->user = strdup(user);
	r->client = strdup(client);
	if (!r->user || !r->client) {
		free(r->user);
		free(r->client);
		free(r);
		return NULL;
	}
	r->next = q->buckets[b];
	q->buckets[b] = r;
	return r;
}

static void rate_record(struct kaas_quotas *q, struct rate *r, double value, uint64_t now)
{
	if (r->n == 0) {
		r->n = 1;
		r->cur = 0;
		r->s[0] = (struct sample){ 0, now };
	} else if (now - r->s[r->cur].start_ms >= q->window_ms) {
		r->cur = (r->cur + 1) % (int)q->windows;
		if (r->n < (int)q->windows)
			r->n++;
		r->s[r->cur] = (struct sample){ 0, now };
	}
	r->s[r->cur].value += value;
	r->last_ms = now;
}

/* The rate per second now, and the span it is measured over (ms). */
static double rate_measure(struct kaas_quotas *q, struct rate *r, uint64_t now, double *span_ms)
{
	uint64_t whole = q->windows * q->window_ms;
	double total = 0;
	uint64_t oldest = now;
	for (int i = 0; i < r->n; i++) {
		if (now - r->s[i].start_ms >= whole) /* out of every window: forgotten */
			r->s[i] = (struct sample){ 0, now };
		total += r->s[i].value;
		if (r->s[i].start_ms < oldest)
			oldest = r->s[i].start_ms;
	}
	uint64_t elapsed = now - oldest;
	uint64_t full = elapsed / q->window_ms;
	if (full < q->windows - 1)
		elapsed += (q->windows - 1 - full) * q->window_ms;
	*span_ms = (double)elapsed;
	return total * 1000.0 / (double)elapsed;
}

void kaas_quotas_unrecord(struct kaas_quotas *q, int key, const char *user, const char *client,
			  double value, uint64_t now_ms)
{
	if (!kaas_quotas_any(q, key))
		return;
	int hu = 0, hc = 0;
	kaas_rdlock(&q->lock, KAAS_RANK_QUOTA_CACHE);
	double bound = find_quota(q, key, user, client, &hu, &hc);
	kaas_rwunlock(&q->lock);
	if (bound <= 0)
		return;
	kaas_lock(&q->rates_mu, KAAS_RANK_QUOTA_RATES);
	struct rate *r = rate_get(q, key, hu ? user : "", hc ? client : "");
	if (r)
		rate_record(q, r, -value, now_ms);
	kaas_unlock(&q->rates_mu);
}

double kaas_quotas_window_max(struct kaas_quotas *q, int key, const char *user,
			      const char *client)
{
	double bound = kaas_quotas_limit(q, key, user, client);
	return bound > 0 ? bound * (double)(q->windows - 1) * (double)q->window_ms / 1000.0 : 0;
}

uint32_t kaas_quotas_record(struct kaas_quotas *q, int key, const char *user,
			    const char *client, double value, uint64_t now_ms)
{
	if (!q || key < 0 || key >= KAAS_QK_COUNT ||
	    !__atomic_load_n(&q->per_key[key], __ATOMIC_ACQUIRE))
		return 0;
	int hu = 0, hc = 0;
	kaas_rdlock(&q->lock, KAAS_RANK_QUOTA_CACHE);
	double bound = find_quota(q, key, user, client, &hu, &hc);
	kaas_rwunlock(&q->lock);
	if (bound <= 0)
		return 0;
	uint32_t throttle = 0;
	kaas_lock(&q->rates_mu, KAAS_RANK_QUOTA_RATES);
	struct rate *r = rate_get(q, key, hu ? user : "", hc ? client : "");
	if (r) {
		rate_record(q, r, value, now_ms);
		double span, observed = rate_measure(q, r, now_ms, &span);
		if (observed > bound) {
			double t = (observed - bound) / bound * span;
			double cap = (double)(q->windows * q->window_ms);
			throttle = (uint32_t)llround(t < cap ? t : cap);
		}
	}
	kaas_unlock(&q->rates_mu);
	if (throttle && kaas_metrics_enabled()) {
		const char *v[2] = { kaas_quota_key_name(key), NULL };
		struct kaas_metric_series *s = kaas_metric_series(&throttled_total, v);
		if (s)
			kaas_metric_add(s, 1);
		if ((s = kaas_metric_series(&throttle_ms_total, v)))
			kaas_metric_add(s, throttle);
	}
	return throttle;
}
