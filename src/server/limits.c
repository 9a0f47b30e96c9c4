/*
 * limits.c — what an unauthenticated or idle peer may hold (issue 35):
 * connections refused at accept past max.connections, past
 * max.connections.per.ip (and its overrides) or when the descriptors kept
 * in reserve for the broker's own volume work would be touched; the
 * periodic sweep that closes idle connections (connections.max.idle.ms),
 * SASL exchanges not finished in time (sasl.authentication.timeout.ms) and
 * TLS handshakes not finished in time (ssl.handshake.timeout.ms); every
 * such refusal or close counted (internal.h: enum kaas_conn_event, in
 * /metrics when metrics are on) and logged rate-limited with a count.
 *
 * Everything here runs on the loop thread: the per-address table, the
 * counters' plain copies and the log windows need no lock.
 */
#include "server/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util/fnv.h"
#include "util/logger.h"
#include "util/metrics.h"

#define IP_BUCKETS 4096
#define SWEEP_MAX_MS 1000
#define SWEEP_MIN_MS 50

/* ------------------------------------------------- rate-limited logs */

int kaas_ratelog_ok(struct kaas_ratelog *r, const char *what)
{
	uint64_t now = kaas_now_ms();
	kaas_ratelog_flush(r, what, now);
	if (r->logged < KAAS_RATELOG_LINES) {
		r->logged++;
		return 1;
	}
	r->dropped++;
	return 0;
}

void kaas_ratelog_flush(struct kaas_ratelog *r, const char *what, uint64_t now)
{
	if (r->window_start && now - r->window_start < KAAS_RATELOG_WINDOW_MS)
		return;
	if (r->dropped)
		kaas_warn("%llu more %s in the last %llu s were not logged",
			  (unsigned long long)r->dropped, what,
			  (unsigned long long)(now - r->window_start) / 1000);
	r->window_start = now;
	r->logged = 0;
	r->dropped = 0;
}

/* ------------------------------------------------------ the counters */

static struct kaas_metric refused_total = KAAS_COUNTER("kaas_connections_refused_total",
	"Connections closed at accept, by the limit that refused them (max_connections, "
	"max_connections_per_ip, descriptor_reserve).", "reason");
static struct kaas_metric closed_total = KAAS_COUNTER("kaas_connections_closed_total",
	"Connections closed by a limit after accept (idle, sasl_timeout, ssl_handshake_timeout, "
	"sasl_max_receive_size).", "reason");
static struct kaas_metric failed_auth_total = KAAS_COUNTER("kaas_failed_authentications_total",
	"Failed SASL authentications (each answer held connection.failed.authentication.delay.ms).",
	NULL);

static const struct {
	struct kaas_metric *family;
	const char *reason;
	const char *what; /* in the log */
} events[KAAS_CONN_EVENTS] = {
	[KAAS_CONN_REFUSED_MAX] = { &refused_total, "max_connections",
				    "connections refused (max.connections)" },
	[KAAS_CONN_REFUSED_PER_IP] = { &refused_total, "max_connections_per_ip",
				       "connections refused (max.connections.per.ip)" },
	[KAAS_CONN_REFUSED_FD_RESERVE] = { &refused_total, "descriptor_reserve",
					   "connections refused (descriptors kept for the volume)" },
	[KAAS_CONN_CLOSED_IDLE] = { &closed_total, "idle", "idle connections closed" },
	[KAAS_CONN_CLOSED_SASL_TIMEOUT] = { &closed_total, "sasl_timeout",
					    "connections closed before finishing SASL" },
	[KAAS_CONN_CLOSED_SSL_TIMEOUT] = { &closed_total, "ssl_handshake_timeout",
					   "connections closed before finishing TLS" },
	[KAAS_CONN_CLOSED_SASL_RECV] = { &closed_total, "sasl_max_receive_size",
					 "connections closed for a frame over "
					 "sasl.server.max.receive.size" },
	[KAAS_CONN_AUTH_DELAYED] = { &failed_auth_total, NULL, "failed authentications" },
};

void kaas_server_conn_count(struct kaas_server *s, enum kaas_conn_event e)
{
	assert(e < KAAS_CONN_EVENTS);
	s->conn_events[e]++;
	if (!kaas_metrics_enabled())
		return;
	const char *v[2] = { events[e].reason, NULL };
	struct kaas_metric_series *series =
		kaas_metric_series(events[e].family, events[e].reason ? v : NULL);
	if (series)
		kaas_metric_add(series, 1);
}

/* ------------------------------------------------- addresses counted */

struct ip_count {
	struct ip_count *next;
	uint32_t n;
	char ip[48];
};

/* Are per-address counts kept at all (a per-address limit is set)? */
static int per_ip_limited(const struct kaas_security_cfg *sc)
{
	return sc->max_connections_per_ip < INT32_MAX || sc->n_ip_overrides > 0;
}

static uint32_t ip_limit(const struct kaas_security_cfg *sc, const char *ip)
{
	for (int i = 0; i < sc->n_ip_overrides; i++)
		if (strcmp(sc->ip_overrides[i].addr, ip) == 0)
			return sc->ip_overrides[i].n;
	return sc->max_connections_per_ip;
}

static struct ip_count **ip_slot(struct kaas_server *s, const char *ip)
{
	/* Salted per process: the peer chooses its address only within what
	 * it owns, but collisions should not be predictable. */
	uint64_t h = kaas_fnv64(s->ip_salt, ip, strlen(ip));
	h ^= h >> 29;
	struct ip_count **pp = &s->ip_tab[h % IP_BUCKETS];
	while (*pp && strcmp((*pp)->ip, ip) != 0)
		pp = &(*pp)->next;
	return pp;
}

void kaas_limits_release(struct kaas_conn *c)
{
	if (!c->ip_counted)
		return;
	struct ip_count **pp = ip_slot(c->s, c->ip);
	struct ip_count *e = *pp;
	assert(e && e->n > 0);
	c->ip_counted = 0;
	if (--e->n == 0) {
		*pp = e->next;
		free(e);
	}
}

/* ------------------------------------------------------------ accept */

void kaas_limits_init(struct kaas_server *s)
{
	const struct kaas_config *cfg = &s->b->cfg;
	struct rlimit rl;
	uint64_t nofile = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		/* The soft limit up to the hard one: connections and the
		 * volume share the descriptors. */
		if (rl.rlim_cur < rl.rlim_max) {
			rlim_t want = rl.rlim_max == RLIM_INFINITY ? 1048576 : rl.rlim_max;
			struct rlimit up = { want, rl.rlim_max };
			if (setrlimit(RLIMIT_NOFILE, &up) == 0)
				rl.rlim_cur = want;
		}
		nofile = rl.rlim_cur == RLIM_INFINITY ? 1048576 : rl.rlim_cur;
	}
	/* The reserve: the segment handle cache, plus what the rounds, the
	 * credential and ACL reads, the listeners and the libraries take;
	 * at most half of the descriptors. */
	uint64_t cache = cfg->max_open_files ? cfg->max_open_files : 1000;
	uint64_t reserve = cache + KAAS_FD_SLACK;
	if (reserve > nofile / 2)
		reserve = nofile / 2;
	s->fd_ceiling = nofile - reserve;
	s->ip_salt = KAAS_FNV64_INIT ^ (uint64_t)(uintptr_t)s ^ kaas_now_ms();
	if (per_ip_limited(&cfg->sec))
		s->ip_tab = calloc(IP_BUCKETS, sizeof(*s->ip_tab));
	kaas_info("connections: at most %u (max.connections), %u per address "
		  "(max.connections.per.ip, %d override(s)); %llu of %llu descriptors kept for "
		  "the volume",
		  cfg->sec.max_connections, cfg->sec.max_connections_per_ip, cfg->sec.n_ip_overrides,
		  (unsigned long long)reserve, (unsigned long long)nofile);
}

void kaas_limits_free(struct kaas_server *s)
{
	if (!s->ip_tab)
		return;
	for (size_t i = 0; i < IP_BUCKETS; i++)
		while (s->ip_tab[i]) {
			struct ip_count *e = s->ip_tab[i];
			s->ip_tab[i] = e->next;
			free(e);
		}
	free(s->ip_tab);
	s->ip_tab = NULL;
}

static void refuse(struct kaas_conn *c, enum kaas_conn_event e, uint64_t limit)
{
	struct kaas_server *s = c->s;
	kaas_server_conn_count(s, e);
	if (kaas_ratelog_ok(&s->rl[e], events[e].what))
		kaas_warn("refused connection from %s: %s (limit %llu)", c->peer, events[e].what,
			  (unsigned long long)limit);
}

int kaas_limits_admit(struct kaas_conn *c)
{
	struct kaas_server *s = c->s;
	const struct kaas_security_cfg *sc = &s->b->cfg.sec;
	assert(s->nconns > 0); /* c itself */
	uv_os_fd_t fd;
	if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0 && (uint64_t)fd >= s->fd_ceiling) {
		/* Descriptors are handed out lowest first: this one means fewer
		 * than the reserve are left. */
		refuse(c, KAAS_CONN_REFUSED_FD_RESERVE, s->fd_ceiling);
		return 0;
	}
	if (s->nconns - 1 >= sc->max_connections) {
		refuse(c, KAAS_CONN_REFUSED_MAX, sc->max_connections);
		return 0;
	}
	if (!s->ip_tab)
		return 1;
	struct ip_count **pp = ip_slot(s, c->ip);
	uint32_t limit = ip_limit(sc, c->ip);
	if ((*pp ? (*pp)->n : 0) >= limit) {
		refuse(c, KAAS_CONN_REFUSED_PER_IP, limit);
		return 0;
	}
	if (!*pp) {
		struct ip_count *e = calloc(1, sizeof(*e));
		if (!e)
			return 0;
		snprintf(e->ip, sizeof(e->ip), "%s", c->ip);
		*pp = e;
	}
	(*pp)->n++;
	c->ip_counted = 1;
	return 1;
}

/* --------------------------------------------------------- the sweep */

static void on_sweep(uv_timer_t *t)
{
	struct kaas_server *s = t->data;
	const struct kaas_security_cfg *sc = &s->b->cfg.sec;
	uint64_t now = kaas_now_ms();
	unsigned closed[KAAS_CONN_EVENTS] = { 0 };
	for (struct kaas_conn *c = s->conns.next; c != &s->conns;) {
		struct kaas_conn *n = c->next;
		enum kaas_conn_event why = KAAS_CONN_EVENTS;
		if (c->closing) {
			/* already going */
		} else if (c->tls && !c->tls_ready && now - c->accepted_ms >= sc->handshake_timeout_ms) {
			why = KAAS_CONN_CLOSED_SSL_TIMEOUT;
		} else if (c->sec.sasl && !__atomic_load_n(&c->sec.authenticated, __ATOMIC_ACQUIRE) &&
			   !c->sasl_req && now - c->accepted_ms >= sc->sasl_timeout_ms) {
			/* (A step on the pool finishes first: its worker owns
			 * the state, and it is bounded.) */
			why = KAAS_CONN_CLOSED_SASL_TIMEOUT;
		} else if (sc->idle_ms >= 0 && !c->head && c->writes == 0 && !c->zc_busy &&
			   now - c->last_active_ms >= (uint64_t)sc->idle_ms) {
			why = KAAS_CONN_CLOSED_IDLE;
		}
		if (why != KAAS_CONN_EVENTS) {
			kaas_conn_close(c, NULL);
			kaas_server_conn_count(s, why);
			closed[why]++;
		}
		c = n;
	}
	for (int e = 0; e < KAAS_CONN_EVENTS; e++) {
		if (!closed[e] || !kaas_ratelog_ok(&s->rl[e], events[e].what))
			;
		else if (e == KAAS_CONN_CLOSED_SSL_TIMEOUT)
			kaas_warn("closed %u connection(s) whose TLS handshake did not finish in %u ms",
				  closed[e], sc->handshake_timeout_ms);
		else if (e == KAAS_CONN_CLOSED_SASL_TIMEOUT)
			kaas_warn("closed %u connection(s) whose SASL authentication did not finish "
				  "in %u ms (sasl.authentication.timeout.ms)", closed[e], sc->sasl_timeout_ms);
		else
			kaas_warn("closed %u connection(s) idle for %lld ms (connections.max.idle.ms)",
				  closed[e], (long long)sc->idle_ms);
		kaas_ratelog_flush(&s->rl[e], events[e].what, now);
	}
	kaas_ratelog_flush(&s->rl_close, "connection close warnings", now);
	kaas_ratelog_flush(&s->rl_request, "refused request warnings", now);
}

void kaas_limits_arm(struct kaas_server *s)
{
	const struct kaas_security_cfg *sc = &s->b->cfg.sec;
	uint64_t every = SWEEP_MAX_MS;
	if (s->tls && sc->handshake_timeout_ms / 4 < every)
		every = sc->handshake_timeout_ms / 4;
	if (sc->sasl_timeout_ms / 4 < every)
		every = sc->sasl_timeout_ms / 4;
	if (sc->idle_ms >= 0 && (uint64_t)sc->idle_ms / 4 < every)
		every = (uint64_t)sc->idle_ms / 4;
	if (every < SWEEP_MIN_MS)
		every = SWEEP_MIN_MS;
	uv_timer_init(s->loop, &s->sweep_timer);
	s->sweep_timer.data = s;
	uv_timer_start(&s->sweep_timer, on_sweep, every, every);
}

void kaas_limits_stop(struct kaas_server *s)
{
	uv_close((uv_handle_t *)&s->sweep_timer, NULL);
}
