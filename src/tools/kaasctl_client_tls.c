/* kaasctl_client_tls.c — TLS for kaasctl's broker connections (SSL and
 * SASL_SSL), over OpenSSL: the broker's certificate checked against the
 * configured CAs (or the system's), and its name against the host dialled
 * unless ssl.endpoint.identification.algorithm is empty; a client
 * certificate when one is configured. */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/kaasctl_client.h"

static int fail(struct kctl_conn *c, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";
	if (e)
		ERR_error_string_n(e, buf, sizeof buf);
	long vr = c->ssl ? SSL_get_verify_result(c->ssl) : X509_V_OK;
	snprintf(c->why, sizeof c->why, "%.300s: TLS: %.80s%s%.200s%s%.200s", c->addr, what, *buf ? ": " : "",
		 buf, vr != X509_V_OK ? ": " : "",
		 vr != X509_V_OK ? X509_verify_cert_error_string(vr) : "");
	ERR_clear_error();
	kctl_tls_close(c);
	return -1;
}

int kctl_tls_start(struct kctl_conn *c, const char *host, const struct kctl_client_cfg *cfg)
{
	ERR_clear_error();
	c->ctx = SSL_CTX_new(TLS_client_method());
	if (!c->ctx)
		return fail(c, "no context");
	SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
	if (cfg->ca_file[0] ? SSL_CTX_load_verify_locations(c->ctx, cfg->ca_file, NULL) != 1
			    : SSL_CTX_set_default_verify_paths(c->ctx) != 1)
		return fail(c, "cannot load the trusted CAs");
	if (cfg->cert_file[0] &&
	    (SSL_CTX_use_certificate_chain_file(c->ctx, cfg->cert_file) != 1 ||
	     SSL_CTX_use_PrivateKey_file(c->ctx, cfg->key_file[0] ? cfg->key_file : cfg->cert_file,
					 SSL_FILETYPE_PEM) != 1))
		return fail(c, "cannot load the client certificate and key");
	c->ssl = SSL_new(c->ctx);
	if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1)
		return fail(c, "no connection state");
	unsigned char ip[16];
	int is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
	if (!is_ip)
		SSL_set_tlsext_host_name(c->ssl, host);
	if (cfg->verify_host) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
		if ((is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host) : SSL_set1_host(c->ssl, host)) != 1)
			return fail(c, "cannot set the name to check");
	}
	if (SSL_connect(c->ssl) != 1)
		return fail(c, "handshake failed");
	return 0;
}

long kctl_tls_io(struct kctl_conn *c, void *p, size_t n, int out)
{
	int want = n > 1u << 30 ? 1 << 30 : (int)n;
	ERR_clear_error();
	int k = out ? SSL_write(c->ssl, p, want) : SSL_read(c->ssl, p, want);
	if (k > 0)
		return k;
	int e = SSL_get_error(c->ssl, k);
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	const char *why = e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK)
		? "timed out" : e == SSL_ERROR_SYSCALL && errno ? strerror(errno)
		: e == SSL_ERROR_SYSCALL ? "the broker closed the connection" : "a TLS error";
	snprintf(c->why, sizeof c->why, "%s: %s", c->addr, why);
	return -1;
}

void kctl_tls_close(struct kctl_conn *c)
{
	if (c->ssl)
		SSL_free(c->ssl);
	if (c->ctx)
		SSL_CTX_free(c->ctx);
	c->ssl = NULL;
	c->ctx = NULL;
}
