/*
 * security.h — who is on the other end of a connection, as the API
 * handlers see it, and the one place an authorizer will be asked.
 *
 * The server (src/server) keeps one kaas_conn_security per connection: the
 * listener it came in on (Metadata and FindCoordinator answer with that
 * listener's addresses), the listener's security protocol and the
 * principal.  Today the principal is "User:ANONYMOUS", or on an SSL
 * listener with a client certificate "User:<subject DN, RFC 2253>" as
 * Kafka spells it.  On a SASL listener (SASL_PLAINTEXT, SASL_SSL) it is
 * "User:<name>" once SaslAuthenticate succeeded (kafka/sasl.h), and until
 * then the connection may send only ApiVersions, SaslHandshake and
 * SaslAuthenticate.
 */
#ifndef KAAS_KAFKA_SECURITY_H
#define KAAS_KAFKA_SECURITY_H

#include "broker/config.h"

struct kaas_conn;
struct kaas_req;
struct kaas_sasl;

#define KAAS_PRINCIPAL_MAX 512
#define KAAS_PRINCIPAL_ANONYMOUS "User:ANONYMOUS"

struct kaas_conn_security {
	const char *listener;               /* its name (the broker's config) */
	enum kaas_sec_protocol protocol;
	int authenticated;                  /* the principal is final (atomic: a
	                                       SASL handler on the pool sets it) */
	char principal[KAAS_PRINCIPAL_MAX]; /* "User:..." (written once, before
	                                       authenticated is set) */
	/* SASL listeners (kafka/sasl.h): the exchange's state, made by the
	 * first SaslHandshake and freed with the connection (kaas_sasl_free),
	 * and the session's end (KIP-368: monotonic ms, 0 = none; atomic):
	 * after it only ApiVersions and a re-authentication are admitted,
	 * anything else closes the connection. */
	struct kaas_sasl *sasl;
	uint64_t session_end_ms;
};

/* The security state of a request's connection (part of the seam: the
 * server implements it; NULL from a program without connections, which
 * handlers read as the first listener and an anonymous principal). */
const struct kaas_conn_security *kaas_conn_security(const struct kaas_conn *c);

/* The same, writable: for the SASL handlers only (NULL as above). */
struct kaas_conn_security *kaas_conn_security_rw(struct kaas_conn *c);

/* Is this a SASL listener's connection (SASL_PLAINTEXT or SASL_SSL)? */
int kaas_conn_sasl_listener(const struct kaas_conn_security *sec);

/* The authorizer hook: may this connection send this request at all?
 * Called by the server for every request after its header is parsed and
 * before its handler runs.  On a SASL listener an unauthenticated
 * connection, or one whose session has ended (KIP-368), may send only
 * ApiVersions, SaslHandshake and SaslAuthenticate; the ACL step adds
 * per-resource checks inside the handlers.  Returns 1 (allowed) or 0
 * (close). */
int kaas_security_admit(const struct kaas_conn_security *sec, const struct kaas_req *req);

#endif
