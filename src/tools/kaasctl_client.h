/*
 * kaasctl_client.h — a small synchronous Kafka client for kaasctl's broker
 * commands (topic, group, cluster): one blocking TCP connection per broker,
 * one request at a time, each send and receive bounded by a timeout.
 *
 * A connection starts with ApiVersions v0 and keeps the broker's version
 * ranges, so a command asks kctl_conn_pick for a version both sides speak
 * before it sends.  Requests are built and answers read with the Kafka
 * codec (kafka/codec.h); this file adds the framing: the request header
 * (v1, or v2 for flexible versions), the size prefix, and on the answer the
 * correlation id check and the response header's tags.
 *
 * PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL (PLAIN, SCRAM-SHA-256,
 * SCRAM-SHA-512) are spoken, TLS through OpenSSL; the settings come
 * from a Kafka-style properties file (--command-config), read by
 * kctl_client_config_load.
 */
#ifndef KAAS_TOOLS_KAASCTL_CLIENT_H
#define KAAS_TOOLS_KAASCTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "kafka/codec.h"

#define KCTL_MAX_API 128

/* Client settings (from --command-config; defaults: PLAINTEXT, 30 s). */
struct kctl_client_cfg {
	int sasl;                    /* SASL_PLAINTEXT or SASL_SSL */
	int tls;                     /* SSL or SASL_SSL */
	int verify_host;             /* ssl.endpoint.identification.algorithm https (default) */
	char ca_file[512];           /* PEM CAs to trust ("": the system's) */
	char cert_file[512];         /* PEM client certificate ("": none) */
	char key_file[512];          /* its key (may be cert_file: a PEM keystore) */
	char mechanism[32];          /* sasl.mechanism: PLAIN, SCRAM-SHA-256/512 */
	char username[256];
	char password[256];
	int timeout_ms;              /* each connect, send and receive */
};

/* Read a Kafka client properties file into cfg (zeroed first, defaults
 * set).  0, or -1 with why[] naming the key or the problem (an unsupported
 * security.protocol or mechanism, an unreadable file). */
int kctl_client_config_load(struct kctl_client_cfg *cfg, const char *path, char *why,
			    size_t whysz);

struct ssl_st;
struct ssl_ctx_st;

struct kctl_conn {
	int fd;                      /* -1: closed */
	struct ssl_st *ssl;          /* TLS (kaasctl_client_tls.c), or NULL */
	struct ssl_ctx_st *ctx;
	int32_t corr;                /* the next correlation id */
	char addr[300];              /* host:port, for messages */
	int16_t vmin[KCTL_MAX_API];  /* the broker's ranges by API key; */
	int16_t vmax[KCTL_MAX_API];  /* vmax < 0: not served */
	char why[1024];              /* the last failure, in words */
};

/* Connect to host:port (host a name or an address), authenticate as cfg
 * says and ask ApiVersions.  0, or -1 with c->why set; c is closed on
 * failure (kctl_conn_close is still safe). */
int kctl_conn_open(struct kctl_conn *c, const char *host, int port,
		   const struct kctl_client_cfg *cfg);
/* "HOST:PORT" (the last ':' separates; [v6]:port allowed) into host/port:
 * 0 or -1. */
int kctl_split_hostport(const char *s, char *host, size_t hostsz, int *port);
void kctl_conn_close(struct kctl_conn *c);

/* The highest version of api in [lo, hi] that the broker serves, or -1
 * with c->why saying what it serves. */
int kctl_conn_pick(struct kctl_conn *c, int16_t api, int16_t lo, int16_t hi);

/* Start a request: w gets the size placeholder and the request header
 * (v2 when flex, else v1; client id "kaasctl").  The caller appends the
 * body and calls kctl_conn_call. */
void kctl_req_begin(struct kctl_conn *c, struct kaas_kw *w, int16_t api, int16_t version,
		    int flex);

/* Send w (frees it) and read the answer: 0 with *buf (malloc'd, the
 * caller frees) and r positioned at the response body (the correlation id
 * checked, a flexible header's tags skipped when flex); -1 with c->why. */
int kctl_conn_call(struct kctl_conn *c, struct kaas_kw *w, int flex, uint8_t **buf,
		   struct kaas_kr *r);

/* TLS on c's connected socket (kaasctl_client_tls.c): the handshake with
 * cfg's CAs, client certificate and host check.  0, or -1 with c->why. */
int kctl_tls_start(struct kctl_conn *c, const char *host, const struct kctl_client_cfg *cfg);
/* One TLS read or write of at most n bytes: the count, 0 at the peer's
 * close, or -1 with c->why. */
long kctl_tls_io(struct kctl_conn *c, void *p, size_t n, int out);
/* Free c's TLS state (the socket is the caller's). */
void kctl_tls_close(struct kctl_conn *c);

/* SaslHandshake and SaslAuthenticate on a fresh connection, with
 * cfg->mechanism (kaasctl_client_sasl.c): 0, or -1 with c->why. */
int kctl_sasl_authenticate(struct kctl_conn *c, const struct kctl_client_cfg *cfg);

/* A Kafka error code's name ("TOPIC_ALREADY_EXISTS") and a short meaning
 * (kaasctl_admin_errors.c); unknown codes: "ERROR_<n>" (static buffer
 * not shared: the name of an unknown code is only valid until the next
 * call) and "". */
const char *kctl_kerr_name(int16_t code);
const char *kctl_kerr_meaning(int16_t code);

#endif
