/*
 * internal.h — what the files of src/server share: the server, its
 * connections, and the calls between conn.c (connections, framing, ordered
 * answers), zerocopy.c (Fetch responses by sendfile), dispatch.c (the API
 * table and the work pool), wakeups.c (cross-thread completions, parked
 * fetches), listener.c (the listeners, TLS reload on SIGHUP, the TLS
 * handshake timeout), tls.c (OpenSSL, tls.h) and server.c (start,
 * housekeeping, stop).
 *
 * Threads: everything here runs on the loop thread, except the work of
 * pool jobs and kaas_broker_complete / kaas_server_on_data (any thread,
 * under cq_mu).
 */
#ifndef KAAS_SERVER_INTERNAL_H
#define KAAS_SERVER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "broker/broker.h"
#include "kafka/request.h"
#include "kafka/security.h"
#include "server/tls.h"

/* Connections refused or closed by a limit (limits.c), counted per server
 * and in /metrics. */
enum kaas_conn_event {
	KAAS_CONN_REFUSED_MAX,        /* max.connections */
	KAAS_CONN_REFUSED_PER_IP,     /* max.connections.per.ip (+ overrides) */
	KAAS_CONN_REFUSED_FD_RESERVE, /* the descriptors kept for the volume */
	KAAS_CONN_CLOSED_IDLE,        /* connections.max.idle.ms */
	KAAS_CONN_CLOSED_SASL_TIMEOUT,/* sasl.authentication.timeout.ms */
	KAAS_CONN_CLOSED_SSL_TIMEOUT, /* ssl.handshake.timeout.ms */
	KAAS_CONN_CLOSED_SASL_RECV,   /* sasl.server.max.receive.size */
	KAAS_CONN_AUTH_DELAYED,       /* a failed authentication's answer held */
	KAAS_CONN_EVENTS
};

/* A log line's window (loop only): at most KAAS_RATELOG_LINES lines per
 * KAAS_RATELOG_WINDOW_MS, then one line counting what was left out. */
#define KAAS_RATELOG_LINES 10
#define KAAS_RATELOG_WINDOW_MS 10000
struct kaas_ratelog {
	uint64_t window_start;
	uint64_t logged, dropped;
};
/* May one more line of this kind be logged now?  (what: how the count of
 * the lines left out is named when a window ends.) */
int kaas_ratelog_ok(struct kaas_ratelog *r, const char *what);
/* End the window if it is over, logging its count of lines left out. */
void kaas_ratelog_flush(struct kaas_ratelog *r, const char *what, uint64_t now);

/* Descriptors kept for the broker's own work besides the segment handle
 * cache (max-open-files): rounds, credential and ACL reads, listeners,
 * the HTTP endpoint, libraries. */
#define KAAS_FD_SLACK 256

/* One listening socket (config.h: struct kaas_listener_cfg). */
struct kaas_listener {
	uv_tcp_t tcp;
	struct kaas_server *s;
	struct kaas_listener_cfg *cfg; /* in b->cfg.sec */
	int tls;                  /* SSL: connections speak TLS (s->tls) */
	int open;                 /* tcp initialised, not yet closed */
};

struct kaas_conn {
	uv_tcp_t tcp;
	struct kaas_server *s;
	struct kaas_listener *lst; /* the listener it came in on */
	struct kaas_conn_security sec;
	struct kaas_tls_conn *tls; /* SSL listeners: the session, else NULL */
	int tls_ready;            /* handshake complete */
	uint64_t accepted_ms;
	struct kaas_conn *prev, *next; /* all connections */
	uint8_t *rbuf;
	size_t rlen, rcap;
	uint8_t *big;             /* a large frame being read straight into its
	                             own buffer (conn.c, BIG_FRAME), or NULL */
	size_t big_len, big_have; /* its size, and how much of it has arrived */
	struct kaas_req *head, *tail;
	size_t queued;
	int closing;
	int sasl_v0;              /* the last SaslHandshake was v0: while its
	                             exchange wants a token, frames are raw SASL
	                             tokens (Kafka's v0 framing; kaas_conn_raw_next) */
	int sasl_raw;             /* the next frame is a raw token: the loop's own
	                             copy, set when a SASL step has finished
	                             (kaas_sasl_settled), never read under the
	                             exchange's lock while a step runs */
	struct kaas_req *sasl_req; /* the SaslHandshake / SaslAuthenticate (or raw
	                             token) on the pool, or NULL: while set no
	                             further frame of this connection is cut or
	                             read (the exchange's state is the worker's) */
	int auth_delay;           /* a failed authentication's answer is held for
	                             connection.failed.authentication.delay.ms */
	struct kaas_conn_mute *mute; /* a throttled response was sent: nothing
	                             is read until its timer ends (mute.c), or NULL */
	uint64_t last_active_ms;  /* last read or completed write (idle timeout) */
	char ip[48];              /* the peer's address, no port */
	int ip_counted;           /* counted in the server's per-address table */
	int close_after;          /* a RESPOND_CLOSE answer is being written:
	                             closed when the writes are done */
	int reading;
	int in_frames;            /* conn_frames is on the stack */
	int writes;               /* uv_write requests not yet completed */
	int zc_busy;              /* a zero-copy send owns the socket */
	int close_deferred;       /* closed while zc_busy: uv_close after it */
	int refs;                 /* 1 for the handle + 1 per request not yet freed */
	char peer[64];
};

struct kaas_server {
	struct kaas_broker *b;
	uv_loop_t *loop;          /* b->loop */
	struct kaas_listener listeners[KAAS_MAX_LISTENERS];
	int nlisteners;
	struct kaas_tls_ctx *tls; /* the SSL listeners' context (reloaded on SIGHUP) */
	uint8_t *tls_inbuf;       /* ciphertext read buffer, shared (loop only) */
	uv_signal_t sighup;
	uv_timer_t sweep_timer;   /* closes idle connections, unfinished TLS
	                             handshakes and SASL exchanges (limits.c) */
	uint64_t fd_ceiling;      /* an accepted descriptor at or above it is
	                             refused (the reserve for volume work) */
	uint64_t ip_salt;
	struct ip_count **ip_tab; /* connections per peer address, when a
	                             per-address limit is set (else NULL) */
	uint64_t conn_events[KAAS_CONN_EVENTS];
	struct kaas_ratelog rl[KAAS_CONN_EVENTS];
	struct kaas_ratelog rl_close;   /* "closing connection X: why" */
	struct kaas_ratelog rl_request; /* unknown API, unsupported version */
	int reloading;            /* a SIGHUP reload is on the pool */
	uv_async_t async;         /* completions and data arrivals */
	uv_signal_t sigterm, sigint;
	uv_timer_t housekeep;
	uv_timer_t drain_timer;
	pthread_mutex_t cq_mu;
	struct kaas_fifo cq;      /* under cq_mu: completions (kaas_broker_complete) */
	int data_arrived;         /* under cq_mu: a log's high watermark moved */
	struct kaas_fetch_waiter waiters; /* list head */
	struct kaas_conn conns;   /* list head of every connection */
	size_t nconns;
	size_t inflight;          /* requests not yet sent or dropped */
	size_t pool_jobs;         /* work-pool jobs outstanding (kaas_pool_queue) */
	int housekeep_busy;
	uint64_t last_sweep_ms;
	struct kaas_http *http;   /* the /metrics endpoint, or NULL (http.h) */
	uv_timer_t metrics_tick;  /* the broker-state snapshot (http_metrics.c) */
	int metrics_live;
};

/* http_metrics.c: count and time a finished request (loop); the state
 * snapshot timer (started with the loop when metrics are on, stopped with
 * the other handles); the volume's free space (housekeeping, pool). */
void kaas_server_metrics_request(struct kaas_req *req, int status);
void kaas_server_metrics_start(struct kaas_server *s);
void kaas_server_metrics_stop(struct kaas_server *s);
void kaas_server_metrics_volume(struct kaas_broker *b);

/* limits.c (loop thread) */
/* Read the descriptor limit (raising the soft one to the hard one) and
 * size the reserve; the per-address table when a per-address limit is set. */
void kaas_limits_init(struct kaas_server *s);
void kaas_limits_free(struct kaas_server *s);
/* May c (accepted, in s->conns, c->ip and c->peer set) stay?  1, or 0
 * (refused: counted and logged; the caller closes it).  Counts c against
 * its address (kaas_limits_release undoes it when c is freed). */
int kaas_limits_admit(struct kaas_conn *c);
void kaas_limits_release(struct kaas_conn *c);
/* Start / close the sweep timer. */
void kaas_limits_arm(struct kaas_server *s);
void kaas_limits_stop(struct kaas_server *s);
/* Count one event (and its /metrics series). */
void kaas_server_conn_count(struct kaas_server *s, enum kaas_conn_event e);

/* conn.c */
/* Accept a connection on a listener (the uv_listen callback; the
 * listener handle's data is its struct kaas_listener). */
void kaas_conn_accept(uv_stream_t *listener, int status);
/* Send a whole response (or, req NULL, raw bytes) on c: the buffers are
 * written, or on a TLS connection encrypted and the records written; req
 * is freed when the write completes.  0, or < 0 when nothing was queued
 * (the caller frees req and closes c). */
int kaas_conn_send(struct kaas_conn *c, struct kaas_req *req, const uv_buf_t *bufs,
		   unsigned n);
/* Close a connection (why: logged as a warning, or NULL); requests still
 * being handled are freed when they finish. */
void kaas_conn_close(struct kaas_conn *c, const char *why);
/* Stop reading (while stopping, or during a zero-copy send). */
void kaas_conn_read_stop(struct kaas_conn *c);
/* Send every finished request at the head of the queue, in order. */
void kaas_conn_flush(struct kaas_conn *c);
/* Is the next frame of c a raw SASL token (after SaslHandshake v0)? */
int kaas_conn_raw_next(struct kaas_conn *c);
/* Drop a connection reference (the last one frees it). */
void kaas_conn_unref(struct kaas_conn *c);
/* The uv_close callback of a connection's handle. */
void kaas_conn_on_closed(uv_handle_t *h);
/* Free a request that left its connection's queue. */
void kaas_conn_req_free(struct kaas_req *req);

/* mute.c (KIP-219) */
/* A response carrying a throttle time of ms has been written (or, acks=0,
 * would have been; kaas_conn_req_free calls it): stop reading c for that
 * long (a longer one extends it; closing: nothing).  The timer holds a
 * reference to c. */
void kaas_conn_mute(struct kaas_conn *c, uint32_t ms);
/* c is closing: end its mute now (no timer outlives a closed socket). */
void kaas_conn_mute_cancel(struct kaas_conn *c);

/* zerocopy.c */
/* Send a finished response with zero-copy pieces from the work pool (the
 * request has left the queue; on failure it is freed and c closed). */
void kaas_zc_start(struct kaas_conn *c, struct kaas_req *req);

/* listener.c */
/* Bind and listen on every configured listener (ephemeral ports are
 * written back into the configuration), with the TLS context when one is
 * SSL.  0, or -EADDRINUSE / -EINVAL (logged); on failure every listener
 * that was opened is closing. */
int kaas_listeners_start(struct kaas_server *s);
/* Start the SIGHUP reload and the handshake timeout (after the start). */
void kaas_listeners_arm(struct kaas_server *s);
/* Stop accepting (close the listening sockets). */
void kaas_listeners_close(struct kaas_server *s);
/* Close the SIGHUP and timer handles and drop the TLS context's
 * reference (connections still open keep theirs). */
void kaas_listeners_stop(struct kaas_server *s);

/* dispatch.c */
/* Parse a request's header and run its API's handler (or close). */
void kaas_server_dispatch(struct kaas_conn *c, struct kaas_req *req);

/* wakeups.c */
/* The async callback: run handed-over completions, wake parked fetches. */
void kaas_server_on_async(uv_async_t *a);
/* The log's data-arrival callback (arg: the server; any thread). */
void kaas_server_on_data(void *arg, int64_t hw);
/* Wake every parked fetch (each is unparked first; it may park again). */
void kaas_server_wake_all(struct kaas_server *s);

#endif
