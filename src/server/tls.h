/*
 * tls.h — TLS for kaasd's SSL listeners, on OpenSSL without its sockets:
 * the socket stays libuv's; ciphertext read from it is fed in through a
 * memory BIO, plaintext comes out, and plaintext to send comes back as
 * records to write (OpenSSL's write BIO is a sink appending them to one
 * buffer per connection).  Nothing here blocks or touches a socket.
 *
 * Threads: a kaas_tls_conn is its connection's, on the loop thread.
 * kaas_tls_ctx_build reads the PEM files and may run on any thread (the
 * reload on SIGHUP builds on the work pool); swapping a listener's context
 * is the loop's.  OpenSSL's error queue is per thread: every call here
 * clears it first and reports the reason in a caller's buffer.
 */
#ifndef KAAS_SERVER_TLS_H
#define KAAS_SERVER_TLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "broker/config.h"

struct kaas_tls_ctx;   /* an SSL_CTX: certificate, key, trust, settings */
struct kaas_tls_conn;  /* one connection's SSL object and BIOs */

/* Build a server context from the settings: the protocols of
 * ssl.enabled.protocols (TLS 1.2 and 1.3 at most), the suites of
 * ssl.cipher.suites (default: forward-secret AEAD suites only), no session
 * resumption (no cache, no ticket in either version), the key and
 * certificate chain of ssl.keystore.location, the CAs of
 * ssl.truststore.location and ssl.client.auth.  0 and *out, or -EINVAL /
 * -ENOMEM / -errno of reading a file, with the reason in why. */
int kaas_tls_ctx_build(const struct kaas_security_cfg *cfg, struct kaas_tls_ctx **out,
		       char *why, size_t whysz);
/* Drop a reference (connections made with it keep it alive). */
void kaas_tls_ctx_free(struct kaas_tls_ctx *t);
/* The serial number of the context's certificate, in hex (for the log). */
void kaas_tls_ctx_serial(const struct kaas_tls_ctx *t, char *out, size_t outsz);

/* A new server-side connection on context t: 0 or -ENOMEM. */
int kaas_tls_conn_new(struct kaas_tls_ctx *t, struct kaas_tls_conn **out);
void kaas_tls_conn_free(struct kaas_tls_conn *c);

/* Feed n bytes read from the socket and move the handshake on.  Returns
 * 1 once the handshake is complete (then kaas_tls_read), 0 while it needs
 * more, -EPROTO when it failed (reason in why: a plaintext client, a
 * missing or untrusted client certificate, an old protocol version).
 * Afterwards, send kaas_tls_take_output (replies, alerts). */
int kaas_tls_feed(struct kaas_tls_conn *c, const void *p, size_t n, char *why, size_t whysz);

/* Decrypted bytes, up to cap: > 0, 0 when nothing more is buffered,
 * -EPIPE when the peer closed the TLS session, -EPROTO on a bad record
 * (reason in why). */
ssize_t kaas_tls_read(struct kaas_tls_conn *c, void *buf, size_t cap, char *why, size_t whysz);

/* Encrypt the n buffers as one stream (after the handshake) into records
 * of up to 16 KiB (small buffers share a record: a response header rides
 * with its body): 0 and a malloc'd buffer with every record waiting to be
 * sent, or -ENOMEM / -EPROTO.  Each record is taken out of the memory BIO
 * as it is made, so the BIO never grows past one record. */
int kaas_tls_seal(struct kaas_tls_conn *c, const uv_buf_t *bufs, unsigned n, uint8_t **out,
		  size_t *outlen);

/* The ciphertext waiting to be sent: 0 and a malloc'd buffer (*buf NULL
 * and *len 0 when nothing waits), or -ENOMEM. */
int kaas_tls_take_output(struct kaas_tls_conn *c, uint8_t **buf, size_t *len);

/* After the handshake: "User:<subject DN>" of the client's verified
 * certificate (RFC 2253, as Kafka spells it), or "User:ANONYMOUS". */
void kaas_tls_principal(struct kaas_tls_conn *c, char *out, size_t outsz);

#endif
