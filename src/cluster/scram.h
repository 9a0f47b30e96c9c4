/*
 * scram.h — the key material of SCRAM (RFC 5802, RFC 7677) and the few
 * primitives the SASL exchange needs, all over OpenSSL's libcrypto
 * (PBKDF2, HMAC, EVP digests, RAND, CRYPTO_memcmp, base64).  Nothing here
 * implements a cryptographic algorithm itself.
 *
 *   SaltedPassword = PBKDF2-HMAC-H(password, salt, iterations)
 *   ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey)
 *   ServerKey = HMAC(SaltedPassword, "Server Key")
 *
 * A credential keeps the salt, the iterations, StoredKey and ServerKey:
 * enough to check a client's proof and to prove the server, never enough
 * to recover the password or to log in as the user.
 */
#ifndef KAAS_CLUSTER_SCRAM_H
#define KAAS_CLUSTER_SCRAM_H

#include <stddef.h>
#include <stdint.h>

/* The mechanisms, numbered as Kafka's ScramMechanism (the wire of
 * Alter/DescribeUserScramCredentials). */
enum kaas_scram_mech {
	KAAS_SCRAM_UNKNOWN = 0,
	KAAS_SCRAM_SHA_256 = 1,
	KAAS_SCRAM_SHA_512 = 2,
};

#define KAAS_SCRAM_KEY_MAX 64      /* SHA-512 output */
#define KAAS_SCRAM_SALT_MAX 64
#define KAAS_SCRAM_SALT_LEN 32     /* salts kaas makes */
#define KAAS_SCRAM_MIN_ITERATIONS 4096   /* as Kafka */
#define KAAS_SCRAM_MAX_ITERATIONS 16384  /* as Kafka */
#define KAAS_SCRAM_DEFAULT_ITERATIONS 8192

struct kaas_scram_cred {
	enum kaas_scram_mech mech;
	uint32_t iterations;
	size_t salt_len;
	uint8_t salt[KAAS_SCRAM_SALT_MAX];
	uint8_t stored_key[KAAS_SCRAM_KEY_MAX]; /* kaas_scram_key_len(mech) bytes */
	uint8_t server_key[KAAS_SCRAM_KEY_MAX];
};

/* "SCRAM-SHA-256" / "SCRAM-SHA-512", or NULL for an unknown mechanism. */
const char *kaas_scram_mech_name(enum kaas_scram_mech m);
/* The mechanism of a name (exact, as Kafka), or KAAS_SCRAM_UNKNOWN. */
enum kaas_scram_mech kaas_scram_mech_by_name(const char *name);
/* The digest size of a mechanism: 32 or 64 (0 when unknown). */
size_t kaas_scram_key_len(enum kaas_scram_mech m);

/* A credential from a password with a fresh random salt (salt_len 0) or
 * the salt already in cred->salt[0..salt_len): 0, or -EINVAL (unknown
 * mechanism, iterations outside [MIN, MAX]) / -EIO (libcrypto failed). */
int kaas_scram_from_password(enum kaas_scram_mech m, const char *password, size_t plen,
			     uint32_t iterations, struct kaas_scram_cred *cred);
/* A credential from SaltedPassword (what AlterUserScramCredentials
 * carries) with cred->mech, salt and iterations set: 0, -EINVAL or -EIO. */
int kaas_scram_from_salted(const uint8_t *salted, size_t len, struct kaas_scram_cred *cred);
/* Does `password` give this credential's StoredKey?  1 yes, 0 no, -EIO.
 * (PBKDF2 at the credential's iterations: milliseconds, off the loop.) */
int kaas_scram_check_password(const struct kaas_scram_cred *cred, const char *password,
			      size_t plen);

/* HMAC-H(key, data) into out (kaas_scram_key_len bytes): 0 or -EIO. */
int kaas_scram_hmac(enum kaas_scram_mech m, const uint8_t *key, size_t klen, const void *data,
		    size_t dlen, uint8_t *out);
/* H(data) into out: 0 or -EIO. */
int kaas_scram_hash(enum kaas_scram_mech m, const void *data, size_t dlen, uint8_t *out);
/* Constant-time equality of n bytes: 1 equal, 0 not. */
int kaas_scram_equal(const void *a, const void *b, size_t n);
/* n random bytes (OpenSSL's CSPRNG): 0 or -EIO. */
int kaas_scram_random(uint8_t *out, size_t n);

/* Standard base64 with padding.  Encode: the length written (NUL added),
 * or -ENOSPC when out is smaller than 4*ceil(n/3)+1.  Decode: the bytes
 * written, or -EINVAL (not base64) / -ENOSPC. */
int kaas_b64_encode(const uint8_t *in, size_t n, char *out, size_t outsz);
int kaas_b64_decode(const char *in, size_t n, uint8_t *out, size_t outsz);

#endif
