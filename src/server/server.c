/*
 * server.c — kaasd's server: start the broker's services and the listener,
 * housekeeping on a timer, and a clean stop on SIGTERM/SIGINT (no new
 * connections, in-flight requests finished, then everything closed).
 */
#include "server/server.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "broker/authorizer.h"
#include "broker/quotas.h"
#include "broker/agent.h"
#include "server/http.h"
#include "util/metrics.h"
#include "broker/groups/groups.h"
#include "broker/credentials.h"
#include "broker/idempotence.h"
#include "broker/txn/txn.h"
#include "kafka/fetch_session.h"
#include "server/internal.h"
#include "util/logger.h"
#include "util/status.h"

/* How often the controller sweeps dead writers' temps (broker/sweep.h). */
#define SWEEP_INTERVAL_MS 30000

/* Sweep dead writers' temps and private names: the controller (or a broker
 * without a cluster agent) only, every SWEEP_INTERVAL_MS. */
static void hk_sweep(struct kaas_server *s)
{
	struct kaas_broker *b = s->b;
	uint64_t now = kaas_now_ms();
	if (s->last_sweep_ms && now - s->last_sweep_ms < SWEEP_INTERVAL_MS)
		return;
	if (b->agent && kaas_agent_controller(b->agent) != b->cfg.broker_id)
		return;
	s->last_sweep_ms = now;
	b->sweeper.grace_ms = 2 * (uint64_t)b->cfg.liveness_ms;
	int rc = kaas_sweeper_pass(&b->sweeper, b->agent, b->cluster, b->data, now);
	if (rc > 0)
		kaas_info("swept %d dead writers' temp or private name(s)", rc);
	else if (rc < 0)
		kaas_warn("sweeping dead writers' temps: %s (%s); the next pass retries",
			  kaas_strerror(rc), kaas_sub_errdetail());
}

static void hk_work(void *arg)
{
	struct kaas_server *s = arg;
	struct kaas_broker *b = s->b;
	hk_sweep(s);
	(void)kaas_topics_housekeep(b->topics);
	kaas_server_metrics_volume(b);
	int n = 0;
	struct kaas_topic **v = kaas_topics_list(b->topics, &n);
	for (int i = 0; i < n; i++) {
		for (int32_t p = 0; p < v[i]->npart; p++)
			if (v[i]->parts[p].log)
				(void)kaas_log_housekeep(v[i]->parts[p].log, 0);
		kaas_topic_put(v[i]);
	}
	free(v);
}

static void hk_done(void *arg, int status)
{
	struct kaas_server *s = arg;
	s->housekeep_busy = 0;
}

static void on_housekeep(uv_timer_t *t)
{
	struct kaas_server *s = t->data;
	if (s->housekeep_busy || s->b->draining)
		return;
	s->housekeep_busy = 1;
	if (kaas_pool_queue(s->b, hk_work, hk_done, s) < 0)
		s->housekeep_busy = 0;
}

static void on_drain_tick(uv_timer_t *t)
{
	struct kaas_server *s = t->data;
	kaas_server_wake_all(s);
	if (s->inflight || s->pool_jobs)
		return;
	kaas_info("in-flight requests finished; closing %zu connection(s)", s->nconns);
	for (struct kaas_conn *c = s->conns.next; c != &s->conns;) {
		struct kaas_conn *n = c->next;
		kaas_conn_close(c, NULL);
		c = n;
	}
	uv_close((uv_handle_t *)&s->drain_timer, NULL);
	uv_close((uv_handle_t *)&s->housekeep, NULL);
	kaas_server_metrics_stop(s);
	uv_close((uv_handle_t *)&s->async, NULL);
	uv_close((uv_handle_t *)&s->sigterm, NULL);
	uv_close((uv_handle_t *)&s->sigint, NULL);
	kaas_listeners_stop(s);
}

/* SIGINT and SIGTERM before the loop's own handlers exist: remembered, and
 * acted on (a clean stop) as soon as start-up is done; a second one while
 * start-up still runs (a volume that hangs) takes the default action. */
static volatile sig_atomic_t early_signal;

static void on_early_signal(int signum)
{
	if (early_signal) { /* a second one: the default (stop now, half started) */
		signal(signum, SIG_DFL);
		raise(signum);
		return;
	}
	early_signal = signum;
}

void kaas_early_signals_catch(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_early_signal;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
}

int kaas_early_signal_taken(void)
{
	int s = early_signal;
	early_signal = 0;
	return s;
}

static void on_signal(uv_signal_t *sig, int signum)
{
	struct kaas_server *s = sig->data;
	if (s->b->draining)
		return;
	kaas_info("signal %d: stopping (no new connections, finishing in-flight requests)",
		  signum);
	s->b->draining = 1;
	kaas_http_set_agent(s->http, NULL); /* /readyz: 503 from now on */
	kaas_listeners_close(s);
	for (struct kaas_conn *c = s->conns.next; c != &s->conns; c = c->next)
		kaas_conn_read_stop(c);
	uv_timer_start(&s->drain_timer, on_drain_tick, 0, 20);
}

/* Stop what kaas_server_run started, in reverse order (each is NULL-safe). */
static void stop_services(struct kaas_broker *b)
{
	kaas_lanes_stop(b->lanes); /* every queued append done; freed with the last lane */
	b->lanes = NULL;
	kaas_txns_stop(b->txns); /* before the groups and topics it uses */
	b->txns = NULL;
	kaas_groups_destroy(b->groups);
	b->groups = NULL;
	kaas_idem_stop(b);
	kaas_creds_free(b->creds);
	b->creds = NULL;
	kaas_authz_free(b->authz);
	b->authz = NULL;
	kaas_quotas_free(b->quotas);
	b->quotas = NULL;
	kaas_fetch_sessions_free(b->fetch_sessions);
	b->fetch_sessions = NULL;
	if (b->server)
		kaas_http_set_agent(b->server->http, NULL);
	kaas_agent_stop(b->agent);
	b->agent = NULL;
}

/* The TLS context and buffer, once the loop has stopped. */
static void free_tls(struct kaas_server *s)
{
	kaas_tls_ctx_free(s->tls);
	s->tls = NULL;
	free(s->tls_inbuf);
	s->tls_inbuf = NULL;
}

/* The server (one per process). */
static struct kaas_server server;

static int serve(struct kaas_broker *b);

/* With --http-listen, the endpoint runs for the whole of serve(): /healthz
 * answers while the broker joins, /readyz once the agent says so. */
int kaas_server_run(struct kaas_broker *b)
{
	struct kaas_server *s = &server;
	if (b->cfg.http_host[0]) {
		kaas_metrics_enable(1);
		int rc = kaas_http_start(b->cfg.http_host, b->cfg.http_port, &s->http);
		if (rc < 0) {
			kaas_error("cannot serve http on %s:%d: %s", b->cfg.http_host, b->cfg.http_port,
				   kaas_strerror(rc));
			return rc;
		}
	}
	int rc = serve(b);
	kaas_http_stop(s->http);
	s->http = NULL;
	return rc;
}

static int serve(struct kaas_broker *b)
{
	struct kaas_server *s = &server;
	assert(b->loop && !b->server);
	s->b = b;
	s->loop = b->loop;
	b->server = s;
	s->conns.next = s->conns.prev = &s->conns;
	s->waiters.next = s->waiters.prev = &s->waiters;
	pthread_mutex_init(&s->cq_mu, NULL);
	uv_async_init(s->loop, &s->async, kaas_server_on_async);
	s->async.data = s;
	int rc = kaas_agent_new(b->cluster, &b->cfg, &b->agent);
	if (rc == -EADDRINUSE) /* the agent said which broker holds the id */
		b->stop_why = "another live broker has this --broker-id";
	struct kaas_topics_opts topts = { .data = b->data, .cluster = b->cluster,
					  .lease = kaas_agent_lease, .lease_arg = b->agent,
					  .notify = kaas_server_on_data, .notify_arg = s,
					  .defaults = &b->cfg.topic_defaults,
					  /* A round must end well within half the
					   * liveness timeout (kaas_agent_fenced). */
					  .reconcile_budget_ms = b->cfg.liveness_ms / 4 ? b->cfg.liveness_ms / 4 : 1 };
	if (rc >= 0)
		rc = kaas_topics_open_opts(&topts, &b->topics);
	if (rc < 0) {
		kaas_agent_stop(b->agent);
		b->agent = NULL;
		uv_close((uv_handle_t *)&s->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		return rc;
	}
	rc = kaas_groups_init(b, &b->groups);
	if (rc >= 0)
		rc = kaas_idem_start(b);
	if (rc >= 0)
		rc = kaas_txns_start(b, b->cfg.transaction_max_timeout_ms, &b->txns);
	if (rc >= 0 && !(b->creds = kaas_creds_new(b->cluster, b->cfg.heartbeat_ms)))
		rc = -ENOMEM;
	if (rc >= 0 && (rc = kaas_authz_new(b->cluster, &b->cfg, &b->authz)) >= 0)
		rc = kaas_authz_start(b->authz); /* ACLs (issue 17) */
	if (rc >= 0 && (rc = kaas_quotas_new(b->cluster, &b->cfg, &b->quotas)) >= 0)
		rc = kaas_quotas_start(b->quotas); /* client quotas (issue 35) */
	if (rc < 0) {
		kaas_error("cannot set up the group coordinator / producer ids: %s (%s)",
			   kaas_strerror(rc), kaas_sub_errdetail());
		stop_services(b);
		uv_close((uv_handle_t *)&s->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		return rc;
	}
	rc = kaas_lanes_start(b->cfg.produce_threads, &b->lanes);
	if (rc < 0) {
		stop_services(b);
		uv_close((uv_handle_t *)&s->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		return rc;
	}
	kaas_limits_init(s);
	rc = kaas_listeners_start(s);
	if (rc < 0) {
		uv_close((uv_handle_t *)&s->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		free_tls(s);
		kaas_limits_free(s);
		stop_services(b);
		return rc;
	}
	/* Join the cluster: the first rounds run here, before we serve. */
	rc = kaas_agent_start(b->agent, b->topics);
	if (rc < 0) {
		kaas_error("cannot start the cluster agent: %s", kaas_strerror(rc));
		kaas_listeners_close(s);
		uv_close((uv_handle_t *)&s->async, NULL);
		uv_run(b->loop, UV_RUN_DEFAULT);
		free_tls(s);
		kaas_limits_free(s);
		stop_services(b);
		return rc;
	}
	uv_signal_init(s->loop, &s->sigterm);
	uv_signal_init(s->loop, &s->sigint);
	s->sigterm.data = s->sigint.data = s;
	uv_signal_start(&s->sigterm, on_signal, SIGTERM);
	uv_signal_start(&s->sigint, on_signal, SIGINT);
	uv_timer_init(s->loop, &s->housekeep);
	uv_timer_init(s->loop, &s->drain_timer);
	s->housekeep.data = s->drain_timer.data = s;
	uv_timer_start(&s->housekeep, on_housekeep, 5000, 5000);
	kaas_listeners_arm(s);
	kaas_groups_start(b->groups);
	kaas_server_metrics_start(s);
	kaas_http_set_agent(s->http, b->agent);
	kaas_info("listening on %s:%d, advertising %s:%d as broker %d", b->cfg.listen_host,
		  b->cfg.listen_port, b->cfg.advertise_host, b->cfg.advertise_port,
		  b->cfg.broker_id);
	int early = kaas_early_signal_taken(); /* everything on_signal stops is up */
	if (early) {
		kaas_info("signal %d came during start-up", early);
		on_signal(early == SIGTERM ? &s->sigterm : &s->sigint, early);
	}
	uv_run(b->loop, UV_RUN_DEFAULT);
	free_tls(s);
	kaas_limits_free(s);
	stop_services(b);
	return 0;
}

