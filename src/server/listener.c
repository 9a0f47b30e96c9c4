/*
 * listener.c — kaasd's listening sockets (one per configured listener,
 * config.h "Listeners and TLS"), the TLS context of the SSL listeners and
 * its reload on SIGHUP.  The bound on TLS handshakes (a connection whose
 * handshake has not finished ssl.handshake.timeout.ms after accept is
 * closed: a flood of half-open handshakes costs bounded time and memory,
 * an SSL object and no read buffer until the handshake is done) is the
 * sweep of limits.c, armed here.
 */
#include "server/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util/logger.h"

/* Ciphertext read per callback on TLS connections (one shared buffer). */
#define TLS_INBUF_BYTES (64u * 1024)

static int bound_port(uv_tcp_t *tcp)
{
	struct sockaddr_storage got;
	int gl = sizeof(got);
	if (uv_tcp_getsockname(tcp, (struct sockaddr *)&got, &gl) != 0)
		return 0;
	return got.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&got)->sin6_port)
					 : ntohs(((struct sockaddr_in *)&got)->sin_port);
}

static int listen_one(struct kaas_server *s, struct kaas_listener *l)
{
	struct kaas_listener_cfg *lc = l->cfg;
	struct sockaddr_storage addr;
	int rc;
	if (strchr(lc->host, ':'))
		rc = uv_ip6_addr(lc->host, lc->port, (struct sockaddr_in6 *)&addr);
	else
		rc = uv_ip4_addr(lc->host, lc->port, (struct sockaddr_in *)&addr);
	uv_tcp_init(s->loop, &l->tcp);
	l->tcp.data = l;
	l->open = 1;
	if (rc == 0)
		rc = uv_tcp_bind(&l->tcp, (struct sockaddr *)&addr, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&l->tcp, 511, kaas_conn_accept);
	if (rc < 0) {
		kaas_error("cannot listen on %s:%d (listener %s): %s", lc->host, lc->port, lc->name,
			   uv_strerror(rc));
		return rc == UV_EADDRINUSE ? -EADDRINUSE : -EINVAL;
	}
	if (lc->port == 0) {
		/* An ephemeral port (tests): advertise the one we got. */
		lc->port = bound_port(&l->tcp);
		if (lc->adv_port == 0)
			lc->adv_port = lc->port;
	}
	return 0;
}

int kaas_listeners_start(struct kaas_server *s)
{
	struct kaas_config *cfg = &s->b->cfg;
	struct kaas_security_cfg *sc = &cfg->sec;
	int need_tls = 0;
	for (int i = 0; i < sc->n; i++)
		need_tls |= sc->l[i].protocol == KAAS_SEC_SSL || sc->l[i].protocol == KAAS_SEC_SASL_SSL;
	if (need_tls) {
		char why[512];
		int rc = kaas_tls_ctx_build(sc, &s->tls, why, sizeof(why));
		s->tls_inbuf = rc == 0 ? malloc(TLS_INBUF_BYTES) : NULL;
		if (rc < 0 || !s->tls_inbuf) {
			kaas_error("TLS: %s", rc < 0 ? why : "out of memory");
			return -EINVAL;
		}
		char serial[80];
		kaas_tls_ctx_serial(s->tls, serial, sizeof(serial));
		kaas_info("TLS: certificate serial %s from %s", serial, sc->keystore_location);
	}
	for (int i = 0; i < sc->n; i++) {
		struct kaas_listener *l = &s->listeners[i];
		l->s = s;
		l->cfg = &sc->l[i];
		l->tls = sc->l[i].protocol == KAAS_SEC_SSL || sc->l[i].protocol == KAAS_SEC_SASL_SSL;
		s->nlisteners = i + 1;
		int rc = listen_one(s, l);
		if (rc < 0) {
			kaas_listeners_close(s);
			return rc;
		}
	}
	/* The first listener is the broker's address for older readers. */
	cfg->listen_port = sc->l[0].port;
	cfg->advertise_port = sc->l[0].adv_port;
	for (int i = 0; i < sc->n; i++)
		kaas_info("listener %s (%s) on %s:%d, advertising %s:%d", sc->l[i].name,
			  kaas_sec_protocol_name(sc->l[i].protocol), sc->l[i].host, sc->l[i].port,
			  sc->l[i].adv_host, sc->l[i].adv_port);
	return 0;
}

void kaas_listeners_close(struct kaas_server *s)
{
	for (int i = 0; i < s->nlisteners; i++)
		if (s->listeners[i].open) {
			s->listeners[i].open = 0;
			uv_close((uv_handle_t *)&s->listeners[i].tcp, NULL);
		}
}

/* ------------------------------------------------ reload on SIGHUP */

struct reload {
	struct kaas_server *s;
	struct kaas_tls_ctx *ctx;
	int rc;
	char why[512];
};

static void reload_work(void *arg)
{
	struct reload *r = arg;
	r->rc = kaas_tls_ctx_build(&r->s->b->cfg.sec, &r->ctx, r->why, sizeof(r->why));
}

static void reload_done(void *arg, int status)
{
	struct reload *r = arg;
	struct kaas_server *s = r->s;
	s->reloading = 0;
	if (status < 0 || r->rc < 0) {
		kaas_error("TLS reload failed, keeping the current certificate: %s",
			   r->rc < 0 ? r->why : "cancelled");
	} else if (!s->tls) {
		kaas_tls_ctx_free(r->ctx); /* stopping */
	} else {
		char serial[80];
		kaas_tls_ctx_serial(r->ctx, serial, sizeof(serial));
		/* Open connections keep the context they started with. */
		kaas_tls_ctx_free(s->tls);
		s->tls = r->ctx;
		kaas_info("TLS: reloaded; new connections get certificate serial %s", serial);
	}
	free(r);
}

static void on_sighup(uv_signal_t *sig, int signum)
{
	struct kaas_server *s = sig->data;
	(void)signum;
	if (!s->tls) {
		kaas_info("SIGHUP: no SSL listener, nothing to reload");
		return;
	}
	if (s->reloading || s->b->draining)
		return;
	struct reload *r = calloc(1, sizeof(*r));
	if (!r) {
		kaas_error("SIGHUP: out of memory; the certificates were not reloaded");
		return;
	}
	r->s = s;
	s->reloading = 1;
	if (kaas_pool_queue(s->b, reload_work, reload_done, r) < 0) {
		s->reloading = 0;
		free(r);
	}
}

void kaas_listeners_arm(struct kaas_server *s)
{
	uv_signal_init(s->loop, &s->sighup);
	s->sighup.data = s;
	uv_signal_start(&s->sighup, on_sighup, SIGHUP);
	kaas_limits_arm(s); /* the TLS handshake timeout among the others */
}

void kaas_listeners_stop(struct kaas_server *s)
{
	uv_close((uv_handle_t *)&s->sighup, NULL);
	kaas_limits_stop(s);
}
