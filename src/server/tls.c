/*
 * tls.c — OpenSSL behind tls.h: contexts built from PEM files read through
 * the substrate, and per-connection SSL objects between two memory BIOs.
 */
#include "server/tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "kafka/security.h"
#include "util/grow.h"

struct kaas_tls_ctx {
	SSL_CTX *ctx;
};

/* Records waiting to be sent: the write side's BIO appends here. */
struct sealed {
	uint8_t *buf;
	size_t len, cap;
};

struct kaas_tls_conn {
	SSL *ssl;
	BIO *rbio, *wbio;   /* owned by ssl; wbio is a sink into out */
	int established;
	struct sealed out;
};

/* Room for n more bytes in o: 0 or -ENOMEM. */
static int sealed_reserve(struct sealed *o, size_t n)
{
	uint8_t *nb = kaas_reserve(o->buf, &o->cap, o->len + n, 4096, SIZE_MAX);
	if (!nb)
		return -ENOMEM;
	o->buf = nb;
	return 0;
}

/* The write BIO: OpenSSL's records go straight into the connection's
 * `out` buffer (no memory BIO to copy them through). */
static int sink_write(BIO *b, const char *data, int len)
{
	struct sealed *o = BIO_get_data(b);
	if (len < 0 || sealed_reserve(o, (size_t)len) < 0)
		return -1;
	memcpy(o->buf + o->len, data, (size_t)len);
	o->len += (size_t)len;
	return len;
}

static long sink_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int sink_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO_METHOD *sink_method;
static pthread_once_t sink_once = PTHREAD_ONCE_INIT;

static void sink_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "kaas records");
	if (m && BIO_meth_set_write(m, sink_write) == 1 && BIO_meth_set_ctrl(m, sink_ctrl) == 1 &&
	    BIO_meth_set_create(m, sink_create) == 1)
		sink_method = m;
	else
		BIO_meth_free(m);
}

/* The oldest queued OpenSSL error as text (or `otherwise`), into why. */
static void ossl_reason(char *why, size_t whysz, const char *what, const char *otherwise)
{
	unsigned long e = ERR_get_error();
	char buf[256];
	if (e)
		ERR_error_string_n(e, buf, sizeof buf);
	snprintf(why, whysz, "%s: %s", what, e ? buf : otherwise);
	ERR_clear_error();
}

/* A PEM file's text (NUL-terminated; free()): 0, or -errno (why set). */
static int pem_read(const char *path, char **text, char *why, size_t whysz)
{
	int rc = kaas_read_local_file(path, text);
	if (rc < 0)
		snprintf(why, whysz, "cannot read %s: %s", path, strerror(-rc));
	return rc;
}

/* Hand the i-th certificate of the PEM text (read from path) to
 * add(ctx, x509, i), which does not take ownership: how many (at least
 * one), or -EINVAL / -ENOMEM (why set). */
static int each_cert(SSL_CTX *ctx, const char *text, const char *path,
		     int (*add)(SSL_CTX *, X509 *, int), char *why, size_t whysz)
{
	BIO *b = BIO_new_mem_buf(text, -1);
	if (!b) {
		snprintf(why, whysz, "out of memory reading %s", path);
		return -ENOMEM;
	}
	int n = 0;
	X509 *x;
	while (n >= 0 && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		int ok = add(ctx, x, n) == 1;
		X509_free(x);
		if (ok) {
			n++;
		} else {
			ossl_reason(why, whysz, path, "cannot use a certificate");
			n = -EINVAL;
		}
	}
	ERR_clear_error(); /* the end of the file */
	BIO_free(b);
	if (n == 0) {
		snprintf(why, whysz, "%s: no certificate", path);
		n = -EINVAL;
	}
	return n;
}

/* The keystore's certificates: the leaf, then its chain. */
static int add_keystore_cert(SSL_CTX *ctx, X509 *x, int i)
{
	return i == 0 ? SSL_CTX_use_certificate(ctx, x) : (int)SSL_CTX_add1_chain_cert(ctx, x);
}

/* A CA that signs client certificates: trusted, and named in the
 * certificate request. */
static int add_trusted(SSL_CTX *ctx, X509 *x, int i)
{
	(void)i;
	return X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x) == 1 &&
	       SSL_CTX_add_client_CA(ctx, x) == 1;
}

/* The key and certificate chain (leaf first) of the keystore, from one
 * read of the file; the key may come before or after the certificates
 * (PEM reading skips blocks of other types). */
static int load_keystore(SSL_CTX *ctx, const char *path, char *why, size_t whysz)
{
	char *text;
	int rc = pem_read(path, &text, why, whysz);
	if (rc < 0)
		return rc;
	BIO *kb = BIO_new_mem_buf(text, -1);
	EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
	BIO_free(kb);
	rc = -EINVAL;
	if (!key)
		ossl_reason(why, whysz, path, "no (unencrypted) private key");
	else
		rc = each_cert(ctx, text, path, add_keystore_cert, why, whysz);
	if (rc >= 0 && (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)) {
		ossl_reason(why, whysz, path, "the key does not match the certificate");
		rc = -EINVAL;
	}
	EVP_PKEY_free(key);
	free(text);
	return rc < 0 ? rc : 0;
}

/* The CAs of the truststore. */
static int load_truststore(SSL_CTX *ctx, const char *path, char *why, size_t whysz)
{
	char *text;
	int rc = pem_read(path, &text, why, whysz);
	if (rc < 0)
		return rc;
	rc = each_cert(ctx, text, path, add_trusted, why, whysz);
	free(text);
	return rc < 0 ? rc : 0;
}

/* The default TLS 1.2 suites: ECDHE key exchange (forward secrecy) and an
 * AEAD cipher only.  TLS 1.3's suites all are both (OpenSSL's default). */
#define DEFAULT_TLS12_SUITES "ECDHE+AESGCM:ECDHE+CHACHA20"

/* Is `name` one of TLS 1.3's suites (they have no key exchange in their
 * name)? */
static int tls13_suite(const char *name)
{
	static const char *const v13[] = { "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
					   "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256",
					   "TLS_AES_128_CCM_8_SHA256" };
	for (size_t i = 0; i < sizeof(v13) / sizeof(v13[0]); i++)
		if (strcmp(name, v13[i]) == 0)
			return 1;
	return 0;
}

/* ssl.cipher.suites: Kafka's (JSSE, that is IANA) names such as
 * TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, or OpenSSL's
 * (ECDHE-RSA-AES128-GCM-SHA256), comma-separated; each must name a suite
 * this OpenSSL has, and each enabled protocol must keep one.  Unset: the
 * defaults above. */
static int set_suites(SSL_CTX *ctx, const struct kaas_security_cfg *cfg, char *why,
		      size_t whysz)
{
	if (!cfg->cipher_suites) {
		if (SSL_CTX_set_cipher_list(ctx, DEFAULT_TLS12_SUITES) != 1) {
			ossl_reason(why, whysz, "ssl.cipher.suites", "the default suites");
			return -EINVAL;
		}
		return 0;
	}
	size_t cap = strlen(cfg->cipher_suites) * 2 + 64;
	char *l12 = calloc(1, cap), *l13 = calloc(1, cap), *copy = strdup(cfg->cipher_suites);
	int rc = l12 && l13 && copy ? 0 : -ENOMEM;
	if (rc < 0)
		snprintf(why, whysz, "out of memory");
	for (char *save = NULL, *item = copy ? strtok_r(copy, ", \t", &save) : NULL; rc == 0 && item;
	     item = strtok_r(NULL, ", \t", &save)) {
		const char *name = item;
		char *list = l12;
		if (tls13_suite(item)) {
			list = l13;
			if (SSL_CTX_set_ciphersuites(ctx, item) != 1)
				name = NULL;
		} else {
			if (strncmp(item, "TLS_", 4) == 0 || strncmp(item, "SSL_", 4) == 0) {
				name = OPENSSL_cipher_name(item); /* IANA -> OpenSSL */
				if (!name || strcmp(name, "(NONE)") == 0)
					name = NULL;
			}
			if (name && (strchr(name, ':') || SSL_CTX_set_cipher_list(ctx, name) != 1))
				name = NULL;
		}
		if (!name) {
			snprintf(why, whysz, "ssl.cipher.suites: '%s' is not a suite this OpenSSL serves",
				 item);
			rc = -EINVAL;
			break;
		}
		if (*list)
			strcat(list, ":");
		strcat(list, name);
	}
	ERR_clear_error();
	if (rc == 0 && cfg->tls_min <= 12 && !*l12) {
		snprintf(why, whysz, "ssl.cipher.suites names no TLS 1.2 suite, and TLSv1.2 is enabled");
		rc = -EINVAL;
	}
	if (rc == 0 && cfg->tls_max >= 13 && !*l13) {
		snprintf(why, whysz, "ssl.cipher.suites names no TLS 1.3 suite, and TLSv1.3 is enabled");
		rc = -EINVAL;
	}
	if (rc == 0 && ((*l12 && SSL_CTX_set_cipher_list(ctx, l12) != 1) ||
			(*l13 && SSL_CTX_set_ciphersuites(ctx, l13) != 1))) {
		ossl_reason(why, whysz, "ssl.cipher.suites", "rejected");
		rc = -EINVAL;
	}
	free(l12);
	free(l13);
	free(copy);
	return rc;
}

int kaas_tls_ctx_build(const struct kaas_security_cfg *cfg, struct kaas_tls_ctx **out,
		       char *why, size_t whysz)
{
	ERR_clear_error();
	struct kaas_tls_ctx *t = calloc(1, sizeof(*t));
	SSL_CTX *ctx = t ? SSL_CTX_new(TLS_server_method()) : NULL;
	if (!ctx) {
		free(t);
		snprintf(why, whysz, "out of memory");
		return -ENOMEM;
	}
	/* ssl.enabled.protocols (TLSv1.2, TLSv1.3; nothing older). */
	SSL_CTX_set_min_proto_version(ctx, cfg->tls_min == 13 ? TLS1_3_VERSION : TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(ctx, cfg->tls_max == 12 ? TLS1_2_VERSION : TLS1_3_VERSION);
	/* No resumption: every connection presents (and checks) the current
	 * certificates, and nothing per session is kept.  The session cache
	 * is off, TLS 1.3 issues no ticket (num_tickets 0) and TLS 1.2 none
	 * either (SSL_OP_NO_TICKET: without it a ticket was issued and
	 * resumed, and with client authentication its resumption failed for
	 * want of a session id context, which is set too). */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
					 SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	static const unsigned char sid_ctx[] = "kaas";
	SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1);
	int rc = set_suites(ctx, cfg, why, whysz);
	if (rc == 0)
		rc = load_keystore(ctx, cfg->keystore_location, why, whysz);
	if (rc == 0 && cfg->client_auth != KAAS_SSL_AUTH_NONE)
		rc = load_truststore(ctx, cfg->truststore_location, why, whysz);
	if (rc < 0) {
		SSL_CTX_free(ctx);
		free(t);
		return rc;
	}
	int mode = SSL_VERIFY_NONE;
	if (cfg->client_auth == KAAS_SSL_AUTH_REQUESTED)
		mode = SSL_VERIFY_PEER;
	else if (cfg->client_auth == KAAS_SSL_AUTH_REQUIRED)
		mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	SSL_CTX_set_verify(ctx, mode, NULL);
	t->ctx = ctx;
	*out = t;
	return 0;
}

void kaas_tls_ctx_free(struct kaas_tls_ctx *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

void kaas_tls_ctx_serial(const struct kaas_tls_ctx *t, char *out, size_t outsz)
{
	snprintf(out, outsz, "?");
	X509 *x = SSL_CTX_get0_certificate(t->ctx);
	BIGNUM *bn = x ? ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL) : NULL;
	char *hex = bn ? BN_bn2hex(bn) : NULL;
	if (hex)
		snprintf(out, outsz, "%s", hex);
	OPENSSL_free(hex);
	BN_free(bn);
	ERR_clear_error();
}

int kaas_tls_conn_new(struct kaas_tls_ctx *t, struct kaas_tls_conn **out)
{
	ERR_clear_error();
	struct kaas_tls_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ssl = SSL_new(t->ctx); /* holds its own reference to the context */
	c->rbio = BIO_new(BIO_s_mem());
	pthread_once(&sink_once, sink_init);
	c->wbio = sink_method ? BIO_new(sink_method) : NULL;
	if (c->wbio)
		BIO_set_data(c->wbio, &c->out);
	if (!c->ssl || !c->rbio || !c->wbio) {
		SSL_free(c->ssl);
		BIO_free(c->rbio);
		BIO_free(c->wbio);
		free(c);
		ERR_clear_error();
		return -ENOMEM;
	}
	/* An empty read BIO means "more to come", not end of file. */
	BIO_set_mem_eof_return(c->rbio, -1);
	SSL_set_bio(c->ssl, c->rbio, c->wbio);
	SSL_set_accept_state(c->ssl);
	*out = c;
	return 0;
}

void kaas_tls_conn_free(struct kaas_tls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl); /* frees both BIOs */
	free(c->out.buf);
	free(c);
}

int kaas_tls_feed(struct kaas_tls_conn *c, const void *p, size_t n, char *why, size_t whysz)
{
	ERR_clear_error();
	if (n && BIO_write(c->rbio, p, (int)n) != (int)n) {
		snprintf(why, whysz, "out of memory");
		return -EPROTO;
	}
	if (c->established)
		return 1;
	int r = SSL_do_handshake(c->ssl);
	if (r == 1) {
		c->established = 1;
		return 1;
	}
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		ERR_clear_error();
		return 0;
	}
	ossl_reason(why, whysz, "TLS handshake", "the peer closed the connection");
	return -EPROTO;
}

ssize_t kaas_tls_read(struct kaas_tls_conn *c, void *buf, size_t cap, char *why, size_t whysz)
{
	ERR_clear_error();
	int r = SSL_read(c->ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
	if (r > 0)
		return r;
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		ERR_clear_error();
		return 0;
	}
	if (e == SSL_ERROR_ZERO_RETURN) {
		ERR_clear_error();
		return -EPIPE;
	}
	ossl_reason(why, whysz, "TLS record", "the peer closed the connection");
	return -EPROTO;
}

/* Largest TLS plaintext record. */
#define RECORD_MAX 16384

/* One record of n <= RECORD_MAX bytes (into c->out). */
static int seal_record(struct kaas_tls_conn *c, const void *p, size_t n)
{
	if (SSL_write(c->ssl, p, (int)n) != (int)n) {
		ERR_clear_error();
		return -EPROTO;
	}
	return 0;
}

int kaas_tls_seal(struct kaas_tls_conn *c, const uv_buf_t *bufs, unsigned n, uint8_t **out,
		  size_t *outlen)
{
	ERR_clear_error();
	size_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += bufs[i].len;
	/* Room for every record's header and tag (at most ~40 bytes each). */
	if (sealed_reserve(&c->out, total + (total / RECORD_MAX + n + 1) * 64) < 0)
		return -ENOMEM;
	uint8_t stage[RECORD_MAX]; /* small pieces, gathered into one record */
	size_t staged = 0;
	int rc = 0;
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		const uint8_t *p = (const uint8_t *)bufs[i].base;
		size_t left = bufs[i].len;
		while (rc == 0 && left) {
			if (staged == 0 && left >= RECORD_MAX) {
				rc = seal_record(c, p, RECORD_MAX);
				p += RECORD_MAX;
				left -= RECORD_MAX;
				continue;
			}
			size_t k = left < RECORD_MAX - staged ? left : RECORD_MAX - staged;
			memcpy(stage + staged, p, k);
			staged += k;
			p += k;
			left -= k;
			if (staged == RECORD_MAX) {
				rc = seal_record(c, stage, staged);
				staged = 0;
			}
		}
	}
	if (rc == 0 && staged)
		rc = seal_record(c, stage, staged);
	if (rc < 0)
		return rc;
	return kaas_tls_take_output(c, out, outlen);
}

int kaas_tls_take_output(struct kaas_tls_conn *c, uint8_t **buf, size_t *len)
{
	*buf = c->out.len ? c->out.buf : NULL;
	*len = c->out.len;
	if (c->out.len) {
		c->out.buf = NULL;
		c->out.len = c->out.cap = 0;
	}
	return 0;
}

void kaas_tls_principal(struct kaas_tls_conn *c, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s", KAAS_PRINCIPAL_ANONYMOUS);
	X509 *peer = SSL_get1_peer_certificate(c->ssl);
	if (!peer || SSL_get_verify_result(c->ssl) != X509_V_OK) {
		X509_free(peer);
		return;
	}
	BIO *b = BIO_new(BIO_s_mem());
	if (b && X509_NAME_print_ex(b, X509_get_subject_name(peer), 0, XN_FLAG_RFC2253) >= 0) {
		char *dn;
		long len = BIO_get_mem_data(b, &dn);
		snprintf(out, outsz, "User:%.*s", (int)len, dn);
	}
	BIO_free(b);
	X509_free(peer);
	ERR_clear_error();
}
