/*
 * security.h — who is on the other end of a connection, as the API
 * handlers see it, and the one place an authorizer will be asked.
 *
 * The server (src/server) keeps one kaas_conn_security per connection: the
 * listener it came in on (Metadata and FindCoordinator answer with that
 * listener's addresses), the listener's security protocol and the
 * principal.  Today the principal is "User:ANONYMOUS", or on an SSL
 * listener with a client certificate "User:<subject DN, RFC 2253>" as
 * Kafka spells it.  SASL (a later step) will set it after authentication.
 */
#ifndef KAAS_KAFKA_SECURITY_H
#define KAAS_KAFKA_SECURITY_H

#include "broker/config.h"

struct kaas_conn;
struct kaas_req;

#define KAAS_PRINCIPAL_MAX 512
#define KAAS_PRINCIPAL_ANONYMOUS "User:ANONYMOUS"

struct kaas_conn_security {
	const char *listener;               /* its name (the broker's config) */
	enum kaas_sec_protocol protocol;
	int authenticated;                  /* the principal is final */
	char principal[KAAS_PRINCIPAL_MAX]; /* "User:..." */
};

/* The security state of a request's connection (part of the seam: the
 * server implements it; NULL from a program without connections, which
 * handlers read as the first listener and an anonymous principal). */
const struct kaas_conn_security *kaas_conn_security(const struct kaas_conn *c);

/* The authorizer hook: may this connection send this request at all?
 * Called by the server for every request after its header is parsed and
 * before its handler runs.  Today every request is allowed (no SASL, no
 * ACLs yet); the SASL step will refuse everything but ApiVersions and the
 * handshake before authentication here, and the ACL step adds per-resource
 * checks inside the handlers.  Returns 1 (allowed) or 0 (close). */
int kaas_security_admit(const struct kaas_conn_security *sec, const struct kaas_req *req);

#endif
