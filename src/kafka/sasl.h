/*
 * sasl.h — the server side of SASL authentication on a connection:
 * mechanisms PLAIN and SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, 7677),
 * re-authentication (KIP-368), against the credentials on the cluster
 * volume (broker/credentials.h, cluster/credential_store.h).
 *
 * The wire (SaslHandshake, SaslAuthenticate) is api_sasl.c; this file keeps
 * the exchange's state, one struct kaas_sasl per connection of a SASL
 * listener (kaas_conn_security.sasl), made by the server at accept.  The
 * handlers run on the work pool; the state has its own lock, so two
 * requests of one connection in flight at once cannot corrupt it (a
 * client that pipelines its exchange simply fails it).
 *
 * On success the connection's principal becomes "User:<name>" (written
 * once: a re-authentication must name the same user with the same
 * mechanism) and, when connections.max.reauth.ms is set, the session ends
 * that long after it (security.h: session_end_ms).  A failure answers
 * SASL_AUTHENTICATION_FAILED with a message and the connection is closed
 * after the answer; it is logged with the peer's address (rate-limited),
 * never with a password, proof or key.
 */
#ifndef KAAS_KAFKA_SASL_H
#define KAAS_KAFKA_SASL_H

#include <stddef.h>
#include <stdint.h>

#include "kafka/security.h"

struct kaas_broker;

/* A mechanism's name by its KAAS_SASL_* bit (broker/config.h), NULL if
 * none; the bit of a name (exact), 0 if unknown. */
const char *kaas_sasl_mech_name(unsigned bit);
unsigned kaas_sasl_mech_bit(const char *name);

/* A fresh exchange (NULL when out of memory); kaas_sasl_free(NULL) is a
 * no-op. */
struct kaas_sasl *kaas_sasl_new(void);
void kaas_sasl_free(struct kaas_sasl *s);

/* SaslHandshake: choose `mech` (enabled: the broker's KAAS_SASL_* mask).
 * Returns the Kafka error code: NONE, UNSUPPORTED_SASL_MECHANISM (not
 * enabled), ILLEGAL_SASL_STATE (not a SASL listener, an exchange under way,
 * a re-authentication with another mechanism). */
int16_t kaas_sasl_handshake(struct kaas_conn_security *sec, unsigned enabled, const char *mech,
			    int16_t version);

/* The state of an exchange between steps, for the loop: KAAS_SASL_WANTS_TOKEN
 * (a handshake done, the exchange not finished: the next frame after a v0
 * handshake is a bare token), KAAS_SASL_FAILED (the exchange failed; the
 * connection closes).  Contract: no step of `s` is running (the server
 * reads no frame of a connection while one of its SASL requests is on the
 * pool), so this never waits on the lock a step holds through PBKDF2 or a
 * credential read; it asserts that.  NULL: 0. */
#define KAAS_SASL_WANTS_TOKEN 1u
#define KAAS_SASL_FAILED 2u
unsigned kaas_sasl_settled(struct kaas_sasl *s);

/* Log (rate-limited with the failures) a request the gate refused on a
 * SASL listener: before authentication, or after the session's end. */
void kaas_sasl_log_refused(const char *peer, int16_t api_key, int expired);

/* A name a peer chose (a SASL user, a principal) as it may be logged: a
 * control byte or DEL as \xNN, a backslash doubled, the rest as is;
 * truncated to fit `outsz` (4 x the input + 1 always fits). */
void kaas_sasl_escape(const char *in, char *out, size_t outsz);

/* What one SaslAuthenticate step answers. */
struct kaas_sasl_step {
	int16_t error;            /* Kafka error code */
	char message[200];        /* the error message ("" for none) */
	uint8_t *out;             /* the server's token (malloc'd), or NULL */
	size_t out_len;
	int64_t session_lifetime_ms; /* KIP-368: 0 = no limit */
	int close;                /* close the connection after the answer */
};

/* SaslAuthenticate: one client token; fills *st (free st->out).  May read
 * the volume (credentials) and run PBKDF2 (PLAIN): pool thread only. */
void kaas_sasl_authenticate(struct kaas_conn_security *sec, struct kaas_broker *b,
			    const char *peer, const uint8_t *tok, size_t n,
			    struct kaas_sasl_step *st);

#endif
