/* kaasctl_client_sasl.c — the client side of SASL for kaasctl's broker
 * connections: SaslHandshake v1, then SaslAuthenticate v0 with PLAIN's one
 * token or SCRAM-SHA-256/512's two rounds (RFC 5802: the client's nonce,
 * the server's salt and iterations, the client's proof, the server's
 * signature checked).  The digests are libcrypto's (cluster/scram.h). */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/scram.h"
#include "kafka/protocol.h"
#include "tools/kaasctl_client.h"

/* One SaslAuthenticate v0 round: tok out, the server's bytes into
 * *in/inlen (malloc'd, NUL-terminated).  0, or -1 with c->why. */
static int auth_round(struct kctl_conn *c, const struct kctl_client_cfg *cfg, const void *tok,
		      size_t n, char **in, size_t *inlen)
{
	struct kaas_kw w;
	uint8_t *buf;
	struct kaas_kr r;
	kctl_req_begin(c, &w, KAAS_API_SASL_AUTHENTICATE, 0, 0);
	kaas_kw_bytes(&w, 0, tok, (int32_t)n);
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return -1;
	int16_t err = kaas_kr_i16(&r);
	struct kaas_kslice msg = kaas_kr_nstr(&r, 0);
	struct kaas_kslice bytes = kaas_kr_nbytes(&r, 0);
	int rc = 0;
	if (!kaas_kr_ok(&r)) {
		snprintf(c->why, sizeof c->why, "%s: a malformed SaslAuthenticate answer", c->addr);
		rc = -1;
	} else if (err) {
		int ml = msg.len > 0 ? (int)(msg.len < 160 ? msg.len : 160) : 0;
		snprintf(c->why, sizeof c->why, "%s: SASL authentication as %.64s: %s%s%.*s",
			 c->addr, cfg->username, kctl_kerr_name(err), ml ? ": " : "", ml,
			 ml ? (const char *)msg.p : "");
		rc = -1;
	} else if (in) {
		size_t bl = bytes.len > 0 ? (size_t)bytes.len : 0;
		*in = malloc(bl + 1);
		if (!*in) {
			snprintf(c->why, sizeof c->why, "out of memory");
			rc = -1;
		} else {
			if (bl)
				memcpy(*in, bytes.p, bl);
			(*in)[bl] = '\0';
			*inlen = bl;
		}
	}
	free(buf);
	return rc;
}

static int plain(struct kctl_conn *c, const struct kctl_client_cfg *cfg)
{
	size_t ul = strlen(cfg->username), pl = strlen(cfg->password);
	char tok[2 + sizeof cfg->username + sizeof cfg->password];
	tok[0] = '\0';
	memcpy(tok + 1, cfg->username, ul);
	tok[1 + ul] = '\0';
	memcpy(tok + 2 + ul, cfg->password, pl);
	int rc = auth_round(c, cfg, tok, 2 + ul + pl, NULL, NULL);
	OPENSSL_cleanse(tok, sizeof tok);
	return rc;
}

/* The value of attribute `k=` in a SCRAM message (into out), or -1. */
static int attr(const char *msg, char k, char *out, size_t outsz)
{
	for (const char *p = msg; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (p[0] != k || p[1] != '=')
			continue;
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p - 2) : strlen(p + 2);
		if (n >= outsz)
			return -1;
		memcpy(out, p + 2, n);
		out[n] = '\0';
		return 0;
	}
	return -1;
}

static int scram(struct kctl_conn *c, const struct kctl_client_cfg *cfg,
		 enum kaas_scram_mech m)
{
	size_t kl = kaas_scram_key_len(m);
	const EVP_MD *md = m == KAAS_SCRAM_SHA_256 ? EVP_sha256() : EVP_sha512();
	char user[3 * sizeof cfg->username], cnonce[48], first[1024], final[1024];
	char nonce[512], salt64[256], iters[16], sig64[256], *sfirst = NULL, *sfinal = NULL;
	uint8_t rnd[24], salt[KAAS_SCRAM_SALT_MAX], salted[KAAS_SCRAM_KEY_MAX];
	uint8_t ckey[KAAS_SCRAM_KEY_MAX], skey[KAAS_SCRAM_KEY_MAX], stored[KAAS_SCRAM_KEY_MAX];
	uint8_t csig[KAAS_SCRAM_KEY_MAX], ssig[KAAS_SCRAM_KEY_MAX], proof[KAAS_SCRAM_KEY_MAX];
	char proof64[2 * KAAS_SCRAM_KEY_MAX], auth[3072], sig[KAAS_SCRAM_KEY_MAX + 8];
	size_t n, u = 0;
	int rc = -1;
	for (const char *p = cfg->username; *p; p++) /* saslname: '=' and ',' escaped */
		u += (size_t)snprintf(user + u, sizeof user - u, "%s",
				      *p == '=' ? "=3D" : *p == ',' ? "=2C" : (char[]){ *p, 0 });
	if (kaas_scram_random(rnd, sizeof rnd) < 0 ||
	    kaas_b64_encode(rnd, sizeof rnd, cnonce, sizeof cnonce) < 0)
		goto fail;
	int fl = snprintf(first, sizeof first, "n,,n=%s,r=%s", user, cnonce);
	if (fl < 0 || (size_t)fl >= sizeof first || auth_round(c, cfg, first, (size_t)fl, &sfirst, &n) < 0)
		goto out;
	long it = 0;
	int sl = -1;
	if (attr(sfirst, 'r', nonce, sizeof nonce) == 0 && attr(sfirst, 's', salt64, sizeof salt64) == 0 &&
	    attr(sfirst, 'i', iters, sizeof iters) == 0)
		sl = kaas_b64_decode(salt64, strlen(salt64), salt, sizeof salt);
	it = atol(iters);
	if (sl <= 0 || it < 1 || it > 1000000 || strncmp(nonce, cnonce, strlen(cnonce)) != 0) {
		snprintf(c->why, sizeof c->why, "%s: a SCRAM server-first message kaasctl cannot use",
			 c->addr);
		goto out;
	}
	int al = snprintf(auth, sizeof auth, "%s,%s,c=biws,r=%s", first + 3, sfirst, nonce);
	if (al < 0 || (size_t)al >= sizeof auth ||
	    PKCS5_PBKDF2_HMAC(cfg->password, (int)strlen(cfg->password), salt, sl, (int)it, md,
			      (int)kl, salted) != 1 ||
	    kaas_scram_hmac(m, salted, kl, "Client Key", 10, ckey) < 0 ||
	    kaas_scram_hash(m, ckey, kl, stored) < 0 ||
	    kaas_scram_hmac(m, stored, kl, auth, (size_t)al, csig) < 0 ||
	    kaas_scram_hmac(m, salted, kl, "Server Key", 10, skey) < 0 ||
	    kaas_scram_hmac(m, skey, kl, auth, (size_t)al, ssig) < 0)
		goto fail;
	for (size_t i = 0; i < kl; i++)
		proof[i] = ckey[i] ^ csig[i];
	if (kaas_b64_encode(proof, kl, proof64, sizeof proof64) < 0)
		goto fail;
	fl = snprintf(final, sizeof final, "c=biws,r=%s,p=%s", nonce, proof64);
	if (fl < 0 || (size_t)fl >= sizeof final || auth_round(c, cfg, final, (size_t)fl, &sfinal, &n) < 0)
		goto out;
	int gl = attr(sfinal, 'v', sig64, sizeof sig64) == 0
		? kaas_b64_decode(sig64, strlen(sig64), (uint8_t *)sig, sizeof sig) : -1;
	if (gl != (int)kl || !kaas_scram_equal(sig, ssig, kl)) {
		snprintf(c->why, sizeof c->why, "%s: the broker's SCRAM signature does not verify",
			 c->addr);
		goto out;
	}
	rc = 0;
	goto out;
fail:
	snprintf(c->why, sizeof c->why, "SCRAM: a libcrypto step failed");
out:
	OPENSSL_cleanse(salted, sizeof salted);
	OPENSSL_cleanse(ckey, sizeof ckey);
	OPENSSL_cleanse(skey, sizeof skey);
	free(sfirst);
	free(sfinal);
	return rc;
}

int kctl_sasl_authenticate(struct kctl_conn *c, const struct kctl_client_cfg *cfg)
{
	struct kaas_kw w;
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_pick(c, KAAS_API_SASL_HANDSHAKE, 1, 1) < 0 ||
	    kctl_conn_pick(c, KAAS_API_SASL_AUTHENTICATE, 0, 0) < 0)
		return -1;
	kctl_req_begin(c, &w, KAAS_API_SASL_HANDSHAKE, 1, 0);
	kaas_kw_str(&w, 0, cfg->mechanism);
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return -1;
	int16_t err = kaas_kr_i16(&r);
	free(buf);
	if (err) {
		snprintf(c->why, sizeof c->why, "%s: SASL mechanism %.31s: %s", c->addr,
			 cfg->mechanism, kctl_kerr_name(err));
		return -1;
	}
	if (!strcmp(cfg->mechanism, "PLAIN"))
		return plain(c, cfg);
	enum kaas_scram_mech m = kaas_scram_mech_by_name(cfg->mechanism);
	if (m == KAAS_SCRAM_UNKNOWN) {
		snprintf(c->why, sizeof c->why, "SASL mechanism %.31s: not spoken by kaasctl",
			 cfg->mechanism);
		return -1;
	}
	return scram(c, cfg, m);
}
