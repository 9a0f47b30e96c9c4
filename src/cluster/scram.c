/* scram.c — SCRAM key material over libcrypto.  See scram.h. */
#include "cluster/scram.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

static const EVP_MD *mech_md(enum kaas_scram_mech m)
{
	switch (m) {
	case KAAS_SCRAM_SHA_256:
		return EVP_sha256();
	case KAAS_SCRAM_SHA_512:
		return EVP_sha512();
	default:
		return NULL;
	}
}

const char *kaas_scram_mech_name(enum kaas_scram_mech m)
{
	switch (m) {
	case KAAS_SCRAM_SHA_256:
		return "SCRAM-SHA-256";
	case KAAS_SCRAM_SHA_512:
		return "SCRAM-SHA-512";
	default:
		return NULL;
	}
}

enum kaas_scram_mech kaas_scram_mech_by_name(const char *name)
{
	if (strcmp(name, "SCRAM-SHA-256") == 0)
		return KAAS_SCRAM_SHA_256;
	if (strcmp(name, "SCRAM-SHA-512") == 0)
		return KAAS_SCRAM_SHA_512;
	return KAAS_SCRAM_UNKNOWN;
}

size_t kaas_scram_key_len(enum kaas_scram_mech m)
{
	const EVP_MD *md = mech_md(m);
	return md ? (size_t)EVP_MD_get_size(md) : 0;
}

int kaas_scram_hmac(enum kaas_scram_mech m, const uint8_t *key, size_t klen, const void *data,
		    size_t dlen, uint8_t *out)
{
	const EVP_MD *md = mech_md(m);
	unsigned int len = 0;
	if (!md || klen > INT_MAX)
		return -EINVAL;
	if (!HMAC(md, key, (int)klen, data, dlen, out, &len))
		return -EIO;
	return 0;
}

int kaas_scram_hash(enum kaas_scram_mech m, const void *data, size_t dlen, uint8_t *out)
{
	const EVP_MD *md = mech_md(m);
	if (!md)
		return -EINVAL;
	return EVP_Digest(data, dlen, out, NULL, md, NULL) == 1 ? 0 : -EIO;
}

int kaas_scram_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

int kaas_scram_random(uint8_t *out, size_t n)
{
	if (n > INT_MAX)
		return -EINVAL;
	return RAND_bytes(out, (int)n) == 1 ? 0 : -EIO;
}

/* SaltedPassword of a password under cred's mechanism, salt, iterations. */
static int salted_password(const struct kaas_scram_cred *cred, const char *password,
			   size_t plen, uint8_t *out)
{
	const EVP_MD *md = mech_md(cred->mech);
	if (!md || plen > INT_MAX || cred->iterations > INT_MAX)
		return -EINVAL;
	if (PKCS5_PBKDF2_HMAC(password, (int)plen, cred->salt, (int)cred->salt_len,
			      (int)cred->iterations, md, EVP_MD_get_size(md), out) != 1)
		return -EIO;
	return 0;
}

/* StoredKey (into stored) and, if server is not NULL, ServerKey. */
static int keys_from_salted(enum kaas_scram_mech m, const uint8_t *salted, size_t len,
			    uint8_t *stored, uint8_t *server)
{
	uint8_t client_key[KAAS_SCRAM_KEY_MAX];
	static const char ck[] = "Client Key", sk[] = "Server Key";
	int rc = kaas_scram_hmac(m, salted, len, ck, strlen(ck), client_key);
	if (rc == 0)
		rc = kaas_scram_hash(m, client_key, kaas_scram_key_len(m), stored);
	if (rc == 0 && server)
		rc = kaas_scram_hmac(m, salted, len, sk, strlen(sk), server);
	OPENSSL_cleanse(client_key, sizeof(client_key));
	return rc;
}

int kaas_scram_from_salted(const uint8_t *salted, size_t len, struct kaas_scram_cred *cred)
{
	if (kaas_scram_key_len(cred->mech) != len || cred->salt_len == 0 ||
	    cred->salt_len > KAAS_SCRAM_SALT_MAX || cred->iterations < KAAS_SCRAM_MIN_ITERATIONS ||
	    cred->iterations > KAAS_SCRAM_MAX_ITERATIONS)
		return -EINVAL;
	return keys_from_salted(cred->mech, salted, len, cred->stored_key, cred->server_key);
}

int kaas_scram_from_password(enum kaas_scram_mech m, const char *password, size_t plen,
			     uint32_t iterations, struct kaas_scram_cred *cred)
{
	if (!mech_md(m) || iterations < KAAS_SCRAM_MIN_ITERATIONS ||
	    iterations > KAAS_SCRAM_MAX_ITERATIONS || cred->salt_len > KAAS_SCRAM_SALT_MAX)
		return -EINVAL;
	cred->mech = m;
	cred->iterations = iterations;
	if (cred->salt_len == 0) {
		cred->salt_len = KAAS_SCRAM_SALT_LEN;
		if (kaas_scram_random(cred->salt, cred->salt_len) < 0)
			return -EIO;
	}
	uint8_t salted[KAAS_SCRAM_KEY_MAX];
	int rc = salted_password(cred, password, plen, salted);
	if (rc == 0)
		rc = kaas_scram_from_salted(salted, kaas_scram_key_len(m), cred);
	OPENSSL_cleanse(salted, sizeof(salted));
	return rc;
}

int kaas_scram_check_password(const struct kaas_scram_cred *cred, const char *password,
			      size_t plen)
{
	uint8_t salted[KAAS_SCRAM_KEY_MAX], stored[KAAS_SCRAM_KEY_MAX];
	size_t n = kaas_scram_key_len(cred->mech);
	int rc = salted_password(cred, password, plen, salted);
	if (rc == 0)
		rc = keys_from_salted(cred->mech, salted, n, stored, NULL);
	OPENSSL_cleanse(salted, sizeof(salted));
	if (rc < 0)
		return rc;
	return kaas_scram_equal(stored, cred->stored_key, n);
}

int kaas_b64_encode(const uint8_t *in, size_t n, char *out, size_t outsz)
{
	if (n > INT_MAX / 2 || outsz < 4 * ((n + 2) / 3) + 1)
		return -ENOSPC;
	return EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

int kaas_b64_decode(const char *in, size_t n, uint8_t *out, size_t outsz)
{
	if (n % 4 != 0 || n > INT_MAX / 2)
		return -EINVAL;
	size_t pad = (n >= 1 && in[n - 1] == '=') + (n >= 2 && in[n - 2] == '=');
	if (outsz < n / 4 * 3 - pad)
		return -ENOSPC;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			 c == '+' || c == '/' || (c == '=' && i + 2 >= n);
		if (!ok || (c != '=' && i > 0 && in[i - 1] == '='))
			return -EINVAL;
	}
	if (n == 0)
		return 0;
	/* EVP_DecodeBlock writes whole groups of 3 (the padding as zero
	 * bytes): decode the last group apart when it is padded. */
	size_t body = pad ? n - 4 : n;
	int len = body ? EVP_DecodeBlock(out, (const unsigned char *)in, (int)body) : 0;
	if (len < 0)
		return -EINVAL;
	if (pad) {
		uint8_t last[3];
		if (EVP_DecodeBlock(last, (const unsigned char *)in + body, 4) != 3)
			return -EINVAL;
		memcpy(out + len, last, 3 - pad);
		len += (int)(3 - pad);
	}
	return len;
}
