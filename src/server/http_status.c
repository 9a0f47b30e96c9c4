/*
 * http_status.c — the status page's snapshots (http_status.h): taken on
 * the loop when a request asks for one, handed to the endpoint thread
 * under a leaf mutex, formatted there (http_status_render.c).
 */
#include "server/http_status.h"
#include "server/http_status_snap.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/broker.h"
#include "broker/groups/groups.h"
#include "broker/topics.h"
#include "log/log.h"
#include "util/lock_rank.h"
#include "util/metrics.h"

static struct kaas_metric snapshot_seconds = KAAS_HISTOGRAM("kaas_status_snapshot_duration_seconds",
	"Loop time spent copying the broker's state for the status page (/ and /status.json).",
	KAAS_METRIC_SECONDS, kaas_metric_latency_bounds, KAAS_METRIC_LATENCY_NBOUNDS, NULL);

#define FRESH_MS 1000   /* a snapshot this young is served again */
/* How long a request waits for the loop: the endpoint's one thread also
 * answers /healthz and /readyz, which must not queue behind a busy loop
 * for long.  With an older snapshot at hand, only briefly (then that one
 * is served, its time on the page). */
#define WAIT_MS 1000
#define STALE_WAIT_MS 250

/* ------------------------------------------------------------ arena */

struct st_arena {
	struct st_arena *next;
	size_t used, size;
	char data[];
};

static void *st_alloc(struct kaas_status_snap *s, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct st_arena *a = s->arena;
	if (!a || a->size - a->used < n) {
		size_t size = n > 16384 ? n : 16384;
		struct st_arena *b = malloc(sizeof(*b) + size);
		if (!b) {
			s->oom = 1;
			return NULL;
		}
		b->next = a;
		b->used = 0;
		b->size = size;
		s->arena = a = b;
	}
	void *p = a->data + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

static const char *st_strdup(struct kaas_status_snap *s, const char *v)
{
	if (!v)
		return NULL;
	size_t n = strlen(v) + 1;
	char *p = st_alloc(s, n);
	if (!p)
		return "";
	memcpy(p, v, n);
	return p;
}

static void snap_free(struct kaas_status_snap *s)
{
	if (!s)
		return;
	for (struct st_arena *a = s->arena, *next; a; a = next) {
		next = a->next;
		free(a);
	}
	free(s);
}

/* ------------------------------------------------------ the handover */

static struct {
	pthread_mutex_t mu;           /* leaf: the fields below */
	pthread_cond_t cv;            /* a snapshot was published, or detached */
	int attached;                 /* async may be sent */
	int asked;                    /* a snapshot was asked and not yet taken */
	uint64_t published;           /* snapshots published so far */
	struct kaas_status_snap *cur; /* the newest, or NULL */
	uv_async_t async;             /* loop: take a snapshot */
	struct kaas_broker *b;        /* loop thread only */
} st = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void snap_put(struct kaas_status_snap *s)
{
	if (!s)
		return;
	kaas_lock(&st.mu, KAAS_RANK_LEAF);
	assert(s->refs > 0);
	int last = --s->refs == 0;
	kaas_unlock(&st.mu);
	if (last)
		snap_free(s);
}

/* ------------------------------------------------- taking a snapshot */

static void take_partitions(struct kaas_status_snap *s, struct kaas_broker *b)
{
	int n = 0;
	struct kaas_topic **v = kaas_topics_list(b->topics, &n);
	if (!v)
		n = 0;
	s->topics = n ? st_alloc(s, sizeof(*s->topics) * (size_t)n) : NULL;
	if (n && !s->topics) {
		for (int i = 0; i < n; i++)
			kaas_topic_put(v[i]);
		n = 0;
	}
	int copied = 0, ntxn_cap = 0;
	for (int i = 0; i < n; i++) {
		struct kaas_topic *t = v[i];
		struct st_topic *o = &s->topics[s->ntopics++];
		o->name = st_strdup(s, t->name);
		o->npart = t->npart;
		int32_t room = KAAS_STATUS_MAX_PARTS - copied;
		int32_t take = t->npart < room ? t->npart : (room > 0 ? room : 0);
		if (take < t->npart)
			s->cut = 1;
		o->parts = take ? st_alloc(s, sizeof(*o->parts) * (size_t)take) : NULL;
		if (!o->parts)
			take = 0;
		o->ncopied = take;
		copied += take;
		for (int32_t p = 0; p < take; p++) {
			struct kaas_partition *pa = &t->parts[p];
			struct st_part *x = &o->parts[p];
			x->index = p;
			x->leader = -1;
			x->start = x->hw = x->lso = x->size = -1;
			int32_t leader;
			uint32_t epoch;
			if (b->agent && kaas_agent_leader(b->agent, t->name, p, &leader, &epoch) == 0) {
				x->leader = leader;
				x->epoch = epoch;
			}
			if (kaas_partition_not_led(pa)) {
				x->state = ST_NOT_LED;
				continue;
			}
			if (!pa->log) {
				x->state = ST_OFFLINE;
				continue;
			}
			if (__atomic_load_n(&pa->failed, __ATOMIC_RELAXED) || kaas_log_status(pa->log) < 0) {
				x->state = ST_RECOVERING;
				continue;
			}
			x->state = ST_LED;
			x->start = kaas_log_start_offset(pa->log);
			x->hw = kaas_log_high_watermark(pa->log);
			x->lso = kaas_log_last_stable_offset(pa->log);
			x->size = kaas_log_size(pa->log);
			if (x->lso >= x->hw)
				continue; /* no transaction open here: no copy of its producers */
			struct kaas_log_producer *pr = NULL;
			size_t np = 0;
			if (kaas_log_producers(pa->log, &pr, &np) < 0)
				continue;
			for (size_t k = 0; k < np; k++) {
				if (pr[k].txn_first_offset < 0)
					continue;
				x->open_txns++;
				if (s->ntxns == ntxn_cap) {
					int cap = ntxn_cap ? 2 * ntxn_cap : 16;
					struct st_txn *nv = st_alloc(s, sizeof(*nv) * (size_t)cap);
					if (!nv)
						break;
					if (s->ntxns)
						memcpy(nv, s->txns, sizeof(*nv) * (size_t)s->ntxns);
					s->txns = nv;
					ntxn_cap = cap;
				}
				s->txns[s->ntxns++] = (struct st_txn){ .topic = o->name, .partition = p,
					.producer_id = pr[k].producer_id, .epoch = pr[k].epoch,
					.first_offset = pr[k].txn_first_offset };
			}
			free(pr);
		}
		kaas_topic_put(t);
	}
	free(v);
}

/* The consumer protocol's assignment (version, [topic, [partition]],
 * user data) as "topic: 0,1; other: 2"; the raw size when it is not one. */
static const char *decode_assignment(struct kaas_status_snap *s, const uint8_t *p, int32_t len)
{
	if (!p || len <= 0)
		return "";
	char buf[1024];
	size_t o = 0;
	int32_t at = 2;
	buf[0] = 0;
#define NEED(n) do { if (at + (n) > len) goto raw; } while (0)
	NEED(4);
	int32_t nt = (int32_t)((uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 |
			       (uint32_t)p[at + 2] << 8 | p[at + 3]);
	at += 4;
	if (nt < 0 || nt > 10000)
		goto raw;
	for (int32_t i = 0; i < nt; i++) {
		NEED(2);
		int16_t tl = (int16_t)(p[at] << 8 | p[at + 1]);
		at += 2;
		if (tl < 0)
			goto raw;
		NEED(tl);
		const char *tn = (const char *)p + at;
		at += tl;
		NEED(4);
		int32_t np = (int32_t)((uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 |
				       (uint32_t)p[at + 2] << 8 | p[at + 3]);
		at += 4;
		if (np < 0)
			goto raw;
		if (o < sizeof buf)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%.*s:", i ? "; " : "",
					      (int)tl, tn);
		for (int32_t k = 0; k < np; k++) {
			NEED(4);
			int32_t part = (int32_t)((uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 |
						 (uint32_t)p[at + 2] << 8 | p[at + 3]);
			at += 4;
			if (o < sizeof buf)
				o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d", k ? "," : " ",
						      (int)part);
		}
	}
#undef NEED
	if (o >= sizeof buf)
		memcpy(buf + sizeof buf - 4, "...", 4);
	return st_strdup(s, buf);
raw:
	snprintf(buf, sizeof buf, "(%d bytes)", (int)len);
	return st_strdup(s, buf);
}

struct group_walk {
	struct kaas_status_snap *s;
	struct kaas_broker *b;
	int cap;
};

static void on_group(void *ctx, const char *id, const char *protocol_type, const char *state)
{
	struct group_walk *w = ctx;
	struct kaas_status_snap *s = w->s;
	if (s->ngroups == w->cap) {
		int cap = w->cap ? 2 * w->cap : 16;
		struct st_group *nv = st_alloc(s, sizeof(*nv) * (size_t)cap);
		if (!nv)
			return;
		if (s->ngroups)
			memcpy(nv, s->groups, sizeof(*nv) * (size_t)s->ngroups);
		s->groups = nv;
		w->cap = cap;
	}
	struct st_group *g = &s->groups[s->ngroups++];
	g->id = st_strdup(s, id);
	g->protocol_type = st_strdup(s, protocol_type);
	g->state = st_strdup(s, state);
	struct kaas_group_info info;
	if (kaas_groups_describe(w->b->groups, id, &info) != 0)
		return;
	g->protocol = st_strdup(s, info.protocol ? info.protocol : "");
	g->members = info.nmembers ? st_alloc(s, sizeof(*g->members) * (size_t)info.nmembers) : NULL;
	for (int i = 0; g->members && i < info.nmembers; i++) {
		const struct kaas_group_member_info *m = &info.members[i];
		struct st_member *x = &g->members[g->nmembers++];
		x->id = st_strdup(s, m->id);
		x->instance_id = st_strdup(s, m->instance_id);
		x->client_id = st_strdup(s, m->client_id);
		x->host = st_strdup(s, m->client_host);
		x->assignment = protocol_type && strcmp(protocol_type, "consumer") == 0
					? decode_assignment(s, m->assignment, m->assignment_len)
					: (m->assignment_len > 0 ? "(not a consumer group)" : "");
	}
	kaas_group_info_free(&info);
}

struct commit_walk {
	struct kaas_status_snap *s;
	struct kaas_broker *b;
	int *caps;
};

static void on_commit(void *arg, const char *group, const char *topic, int32_t partition,
		      int64_t offset)
{
	struct commit_walk *w = arg;
	struct kaas_status_snap *s = w->s;
	int gi = -1;
	for (int i = s->ngroups - 1; i >= 0 && gi < 0; i--)
		if (strcmp(s->groups[i].id, group) == 0)
			gi = i;
	if (gi < 0)
		return;
	struct st_group *g = &s->groups[gi];
	if (g->ncommits == w->caps[gi]) {
		int cap = w->caps[gi] ? 2 * w->caps[gi] : 8;
		struct st_commit *nv = st_alloc(s, sizeof(*nv) * (size_t)cap);
		if (!nv)
			return;
		if (g->ncommits)
			memcpy(nv, g->commits, sizeof(*nv) * (size_t)g->ncommits);
		g->commits = nv;
		w->caps[gi] = cap;
	}
	struct st_commit *c = &g->commits[g->ncommits++];
	c->topic = st_strdup(s, topic);
	c->partition = partition;
	c->offset = offset;
	c->lag = -1;
	struct kaas_topic *t = kaas_topics_get(w->b->topics, topic, (int)strlen(topic));
	if (!t)
		return;
	if (partition >= 0 && partition < t->npart && t->parts[partition].log && offset >= 0) {
		int64_t hw = kaas_log_high_watermark(t->parts[partition].log);
		c->lag = hw > offset ? hw - offset : 0;
	}
	kaas_topic_put(t);
}

static void take_groups(struct kaas_status_snap *s, struct kaas_broker *b)
{
	if (!b->groups)
		return;
	struct group_walk gw = { .s = s, .b = b };
	kaas_groups_list(b->groups, on_group, &gw);
	if (!s->ngroups)
		return;
	int *caps = calloc((size_t)s->ngroups, sizeof(int));
	if (!caps) {
		s->oom = 1;
		return;
	}
	struct commit_walk cw = { .s = s, .b = b, .caps = caps };
	kaas_groups_each_commit(b->groups, on_commit, &cw);
	free(caps);
}

static void take_brokers(struct kaas_status_snap *s, struct kaas_broker *b)
{
	s->controller = -1;
	if (!b->agent)
		return;
	s->controller = kaas_agent_controller(b->agent);
	s->ready = kaas_agent_ready(b->agent);
	s->fenced = kaas_agent_fenced(b->agent);
	s->nevents = (int)kaas_agent_events(b->agent, s->events, KAAS_AGENT_EVENTS);
	struct kaas_broker_info *v = malloc(sizeof(*v) * KAAS_STATUS_MAX_BROKERS);
	int *alive = malloc(sizeof(int) * KAAS_STATUS_MAX_BROKERS);
	size_t n = v && alive ? kaas_agent_members(b->agent, v, alive, KAAS_STATUS_MAX_BROKERS) : 0;
	if (!v || !alive)
		s->oom = 1;
	s->brokers = n ? st_alloc(s, sizeof(*s->brokers) * n) : NULL;
	for (size_t i = 0; s->brokers && i < n; i++) {
		struct st_broker *x = &s->brokers[s->nbrokers++];
		x->id = v[i].id;
		x->host = st_strdup(s, v[i].host);
		x->port = v[i].port;
		x->alive = alive[i];
		x->stopped = v[i].stopped;
		x->incarnation = v[i].incarnation;
	}
	free(v);
	free(alive);
}

static struct kaas_status_snap *take(struct kaas_broker *b)
{
	struct kaas_status_snap *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->taken_unix_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	s->taken_mono_ms = kaas_now_ms();
	s->self = b->cfg.broker_id;
	s->cluster_id = st_strdup(s, b->cluster_id);
	take_brokers(s, b);
	take_partitions(s, b);
	take_groups(s, b);
	s->refs = 1;
	return s;
}

static void on_async(uv_async_t *h)
{
	(void)h;
	kaas_lock(&st.mu, KAAS_RANK_LEAF);
	int want = st.asked && st.attached;
	kaas_unlock(&st.mu);
	if (!want)
		return;
	uint64_t t0 = kaas_metrics_now_ns();
	struct kaas_status_snap *s = take(st.b); /* no lock held: plain copies */
	kaas_metric_observe(kaas_metric_series(&snapshot_seconds, NULL), kaas_metrics_now_ns() - t0);
	kaas_lock(&st.mu, KAAS_RANK_LEAF);
	struct kaas_status_snap *old = st.cur;
	if (s)
		st.cur = s;
	else
		old = NULL;
	st.asked = 0;
	st.published++;
	pthread_cond_broadcast(&st.cv);
	kaas_unlock(&st.mu);
	snap_put(old);
}

int kaas_http_status_attach(uv_loop_t *loop, struct kaas_broker *b)
{
	int rc = uv_async_init(loop, &st.async, on_async);
	if (rc < 0)
		return rc;
	st.b = b;
	kaas_lock(&st.mu, KAAS_RANK_LEAF);
	st.attached = 1;
	kaas_unlock(&st.mu);
	return 0;
}

void kaas_http_status_detach(void)
{
	kaas_lock(&st.mu, KAAS_RANK_LEAF);
	int was = st.attached;
	st.attached = 0;
	struct kaas_status_snap *old = st.cur;
	st.cur = NULL;
	pthread_cond_broadcast(&st.cv);
	kaas_unlock(&st.mu);
	snap_put(old);
	if (was)
		uv_close((uv_handle_t *)&st.async, NULL);
}

static struct timespec deadline(long ms)
{
	struct timespec end;
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	return end;
}

/* A snapshot at most FRESH_MS old, asking the loop for one and waiting up
 * to WAIT_MS, or STALE_WAIT_MS when an older one exists (then the older
 * one, or NULL).  A reference: snap_put. */
static struct kaas_status_snap *snap_get(void)
{
	kaas_lock(&st.mu, KAAS_RANK_LEAF);
	if (!st.cur || kaas_now_ms() - st.cur->taken_mono_ms > FRESH_MS) {
		struct timespec end = deadline(st.cur ? STALE_WAIT_MS : WAIT_MS);
		uint64_t seen = st.published;
		if (st.attached && !st.asked) {
			st.asked = 1;
			uv_async_send(&st.async);
		}
		while (st.attached && st.published == seen &&
		       pthread_cond_timedwait(&st.cv, &st.mu, &end) != ETIMEDOUT)
			;
	}
	struct kaas_status_snap *s = st.cur;
	if (s)
		s->refs++;
	kaas_unlock(&st.mu);
	return s;
}

char *kaas_http_status_render(int json, size_t *len, unsigned *code)
{
	struct kaas_status_snap *s = snap_get();
	if (!s) {
		*code = 503;
		const char *msg = "no status snapshot (the broker is starting or stopping)\n";
		*len = strlen(msg);
		return strdup(msg);
	}
	*code = 200;
	char *body = kaas_status_format(s, json, len); /* no lock held */
	snap_put(s);
	return body;
}
