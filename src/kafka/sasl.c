/* sasl.c — SASL exchanges: PLAIN and SCRAM.  See sasl.h. */
#include "kafka/sasl.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "broker/broker.h"
#include "broker/credentials.h"
#include "cluster/credential_store.h"
#include "cluster/scram.h"
#include "kafka/protocol.h"
#include "util/logger.h"
#include "util/lock_rank.h"

#define NONCE_MAX 256
#define SERVER_NONCE_BYTES 24
#define FAIL_LOG_WINDOW_MS 10000
#define FAIL_LOG_PER_WINDOW 10

enum sasl_state {
	S_START,      /* no handshake yet (or a finished exchange) */
	S_MECH,       /* handshake done: the client's first token next */
	S_SCRAM_FINAL,/* server-first sent: client-final next */
	S_FAILED,     /* the connection closes */
};

struct kaas_sasl {
	pthread_mutex_t mu;
	enum sasl_state state;
	unsigned mech;            /* KAAS_SASL_* of this exchange */
	unsigned done_mech;       /* of the last success (re-authentication) */
	char user[KAAS_CRED_USER_MAX + 1];
	struct kaas_scram_cred cred;
	char *gs2;                /* the client's gs2 header */
	char *auth_msg;           /* client-first-bare "," server-first (then + ",") */
	char nonce[2 * NONCE_MAX];/* client nonce + server nonce */
};

struct kaas_sasl *kaas_sasl_new(void)
{
	struct kaas_sasl *s = calloc(1, sizeof(*s));
	if (s)
		pthread_mutex_init(&s->mu, NULL);
	return s;
}

static void scram_forget(struct kaas_sasl *s)
{
	free(s->gs2);
	free(s->auth_msg);
	s->gs2 = s->auth_msg = NULL;
	OPENSSL_cleanse(&s->cred, sizeof(s->cred));
	s->nonce[0] = '\0';
}

void kaas_sasl_free(struct kaas_sasl *s)
{
	if (!s)
		return;
	scram_forget(s);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static const struct {
	unsigned bit;
	const char *name;
} mechs[] = {
	{ KAAS_SASL_PLAIN, "PLAIN" },
	{ KAAS_SASL_SCRAM_SHA_256, "SCRAM-SHA-256" },
	{ KAAS_SASL_SCRAM_SHA_512, "SCRAM-SHA-512" },
};

const char *kaas_sasl_mech_name(unsigned bit)
{
	for (size_t i = 0; i < sizeof(mechs) / sizeof(mechs[0]); i++)
		if (mechs[i].bit == bit)
			return mechs[i].name;
	return NULL;
}

unsigned kaas_sasl_mech_bit(const char *name)
{
	for (size_t i = 0; i < sizeof(mechs) / sizeof(mechs[0]); i++)
		if (strcmp(mechs[i].name, name) == 0)
			return mechs[i].bit;
	return 0;
}

unsigned kaas_sasl_settled(struct kaas_sasl *s)
{
	if (!s)
		return 0;
	/* Never waits: the caller (the loop) asks only when no step of this
	 * exchange is on the pool, so the lock is free.  Were it held, that
	 * contract is broken: answer "nothing awaited" rather than block. */
	int rc = kaas_trylock(&s->mu, KAAS_RANK_SASL);
	assert(rc == 0);
	if (rc != 0)
		return 0;
	unsigned f = 0;
	if (s->state == S_MECH || s->state == S_SCRAM_FINAL)
		f |= KAAS_SASL_WANTS_TOKEN;
	if (s->state == S_FAILED)
		f |= KAAS_SASL_FAILED;
	kaas_unlock(&s->mu);
	return f;
}

int16_t kaas_sasl_handshake(struct kaas_conn_security *sec, unsigned enabled, const char *mech,
			    int16_t version)
{
	if (!sec || !sec->sasl || !kaas_conn_sasl_listener(sec))
		return KAAS_KERR_ILLEGAL_SASL_STATE;
	struct kaas_sasl *s = sec->sasl;
	unsigned bit = kaas_sasl_mech_bit(mech);
	int16_t err = KAAS_KERR_NONE;
	kaas_lock(&s->mu, KAAS_RANK_SASL);
	int reauth = __atomic_load_n(&sec->authenticated, __ATOMIC_ACQUIRE);
	if (s->state != S_START || (reauth && version < 1))
		err = KAAS_KERR_ILLEGAL_SASL_STATE;
	else if (!bit || !(enabled & bit))
		err = KAAS_KERR_UNSUPPORTED_SASL_MECHANISM;
	else if (reauth && bit != s->done_mech)
		err = KAAS_KERR_ILLEGAL_SASL_STATE; /* KIP-368: the same mechanism */
	if (err == KAAS_KERR_NONE) {
		s->state = S_MECH;
		s->mech = bit;
	} else {
		s->state = S_FAILED;
	}
	kaas_unlock(&s->mu);
	return err;
}

/* ------------------------------------------------------------ failures */

/* May a failure be logged now?  At most FAIL_LOG_PER_WINDOW lines per
 * window (for every connection together), then one line counting what was
 * left out. */
static int may_log(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t window_start;
	static unsigned logged, dropped;
	uint64_t now = kaas_now_ms();
	unsigned was_dropped = 0;
	int log = 0;
	kaas_lock(&mu, KAAS_RANK_LEAF);
	if (now - window_start >= FAIL_LOG_WINDOW_MS) {
		was_dropped = dropped;
		window_start = now;
		logged = dropped = 0;
	}
	if (logged < FAIL_LOG_PER_WINDOW) {
		logged++;
		log = 1;
	} else {
		dropped++;
	}
	kaas_unlock(&mu);
	if (was_dropped)
		kaas_warn("sasl: %u more authentication failures were not logged", was_dropped);
	return log;
}

void kaas_sasl_escape(const char *in, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t j = 0;
	if (!outsz)
		return;
	for (; *in && j + 1 < outsz; in++) {
		unsigned char c = (unsigned char)*in;
		if (c >= 0x20 && c != 0x7f && c != '\\') {
			out[j++] = (char)c;
			continue;
		}
		if (j + 5 > outsz)
			break;
		out[j++] = '\\';
		if (c == '\\') {
			out[j++] = '\\';
			continue;
		}
		out[j++] = 'x';
		out[j++] = hex[c >> 4];
		out[j++] = hex[c & 15];
	}
	out[j] = '\0';
}

static void log_failure(const char *peer, const char *mech, const char *user, const char *why)
{
	if (!may_log())
		return;
	char u[4 * KAAS_CRED_USER_MAX + 1];
	kaas_sasl_escape(user && *user ? user : "?", u, sizeof(u));
	kaas_warn("sasl: authentication failed from %s (mechanism %s, user '%s'): %s", peer,
		  mech ? mech : "?", u, why);
}

void kaas_sasl_log_refused(const char *peer, int16_t api_key, int expired)
{
	if (may_log())
		kaas_warn("sasl: connection %s closed: API %d %s", peer, api_key,
			  expired ? "after its SASL session ended (connections.max.reauth.ms)"
				  : "before SASL authentication");
}

static void fail(struct kaas_sasl *s, struct kaas_sasl_step *st, const char *peer,
		 const char *why)
{
	const char *mech = kaas_sasl_mech_name(s->mech);
	log_failure(peer, mech, s->user, why);
	st->error = KAAS_KERR_SASL_AUTHENTICATION_FAILED;
	snprintf(st->message, sizeof(st->message),
		 "Authentication failed during authentication due to invalid credentials with "
		 "SASL mechanism %s", mech ? mech : "?");
	st->close = 1;
	free(st->out);
	st->out = NULL;
	st->out_len = 0;
	s->state = S_FAILED;
	scram_forget(s);
}

/* Authenticated as s->user: the principal, the session's end. */
static void succeed(struct kaas_conn_security *sec, struct kaas_sasl *s,
		    struct kaas_broker *b, const char *peer, struct kaas_sasl_step *st)
{
	char principal[KAAS_PRINCIPAL_MAX];
	snprintf(principal, sizeof(principal), "User:%s", s->user);
	if (__atomic_load_n(&sec->authenticated, __ATOMIC_ACQUIRE)) {
		if (strcmp(principal, sec->principal) != 0) {
			fail(s, st, peer, "re-authentication as another user");
			return;
		}
	} else {
		memcpy(sec->principal, principal, sizeof(principal));
		__atomic_store_n(&sec->authenticated, 1, __ATOMIC_RELEASE);
	}
	uint32_t life = b ? b->cfg.sec.reauth_ms : 0;
	st->session_lifetime_ms = life;
	__atomic_store_n(&sec->session_end_ms, life ? kaas_now_ms() + life : 0, __ATOMIC_RELEASE);
	s->done_mech = s->mech;
	s->state = S_START;
	scram_forget(s);
	if (kaas_logger_enabled(KAAS_LOGGER_DEBUG)) {
		char p[4 * KAAS_PRINCIPAL_MAX];
		kaas_sasl_escape(sec->principal, p, sizeof(p));
		kaas_debug("sasl: %s authenticated as %s (%s)", peer, p, kaas_sasl_mech_name(s->mech));
	}
}

/* --------------------------------------------------------------- PLAIN */

/* The credential an unknown user's PLAIN password is hashed against: made
 * once from random bytes at the default iterations (it matches nothing). */
static struct kaas_scram_cred dummy;
static int dummy_rc;
static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;

static void dummy_init(void)
{
	uint8_t pw[32];
	dummy_rc = kaas_scram_random(pw, sizeof(pw));
	if (dummy_rc == 0)
		dummy_rc = kaas_scram_from_password(KAAS_SCRAM_SHA_512, (const char *)pw, sizeof(pw),
						    KAAS_SCRAM_DEFAULT_ITERATIONS, &dummy);
	OPENSSL_cleanse(pw, sizeof(pw));
}

static int dummy_cred(struct kaas_scram_cred *out)
{
	pthread_once(&dummy_once, dummy_init);
	if (dummy_rc < 0)
		return dummy_rc;
	*out = dummy;
	return 0;
}

/* "authzid NUL authcid NUL password"; the password is checked against the
 * user's SCRAM credential (PBKDF2 at its iterations): SCRAM-SHA-512's when
 * the user has one, else SCRAM-SHA-256's. */
static void plain(struct kaas_conn_security *sec, struct kaas_sasl *s, struct kaas_broker *b,
		  const char *peer, const uint8_t *tok, size_t n, struct kaas_sasl_step *st)
{
	const uint8_t *z1 = memchr(tok, 0, n);
	const uint8_t *z2 = z1 ? memchr(z1 + 1, 0, n - (size_t)(z1 + 1 - tok)) : NULL;
	if (!z2 || memchr(z2 + 1, 0, n - (size_t)(z2 + 1 - tok))) {
		fail(s, st, peer, "malformed PLAIN token");
		return;
	}
	size_t ulen = (size_t)(z2 - z1 - 1);
	size_t azlen = (size_t)(z1 - tok);
	if (ulen == 0 || ulen > KAAS_CRED_USER_MAX) {
		fail(s, st, peer, "bad user name");
		return;
	}
	memcpy(s->user, z1 + 1, ulen);
	s->user[ulen] = '\0';
	if (azlen && (azlen != ulen || memcmp(tok, s->user, ulen) != 0)) {
		fail(s, st, peer, "authorization id differs from the user");
		return;
	}
	const char *pw = (const char *)z2 + 1;
	size_t pwlen = n - (size_t)(z2 + 1 - tok);
	/* One credential (SCRAM-SHA-512's, else SCRAM-SHA-256's), and for an
	 * unknown user the dummy one: a known user costs one PBKDF2 as an
	 * unknown one does, so the answer's timing names no user. */
	static const enum kaas_scram_mech order[] = { KAAS_SCRAM_SHA_512, KAAS_SCRAM_SHA_256 };
	struct kaas_scram_cred cred;
	int known = 0;
	for (size_t i = 0; !known && i < 2; i++) {
		int rc = b && b->creds ? kaas_creds_lookup(b->creds, s->user, order[i], &cred) : 0;
		if (rc < 0) {
			OPENSSL_cleanse(&cred, sizeof(cred));
			fail(s, st, peer, "credentials unreadable on the volume");
			return;
		}
		known = rc == 1;
	}
	if (!known && dummy_cred(&cred) < 0) {
		fail(s, st, peer, "no random bytes");
		return;
	}
	int ok = kaas_scram_check_password(&cred, pw, pwlen) == 1 && known;
	OPENSSL_cleanse(&cred, sizeof(cred));
	if (!ok) {
		fail(s, st, peer, known ? "wrong password" : "unknown user");
		return;
	}
	succeed(sec, s, b, peer, st);
}

/* ---------------------------------------------------------------- SCRAM */

/* A SCRAM saslname ("=2C" is ',', "=3D" is '='): 0, or -EINVAL. */
static int saslname(const char *p, size_t n, char *out, size_t size)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '=') {
			if (i + 3 > n)
				return -EINVAL;
			if (memcmp(p + i, "=2C", 3) == 0)
				c = ',';
			else if (memcmp(p + i, "=3D", 3) == 0)
				c = '=';
			else
				return -EINVAL;
			i += 2;
		} else if (c == ',' || c == '\0') {
			return -EINVAL;
		}
		if (j + 1 >= size)
			return -EINVAL;
		out[j++] = c;
	}
	out[j] = '\0';
	return j ? 0 : -EINVAL;
}

/* The attribute `a=` at *p (up to the next ',' or end): its value and
 * length, *p moved past the ','. */
static int attr(const char **p, const char *end, char a, const char **val, size_t *len)
{
	if (end - *p < 2 || (*p)[0] != a || (*p)[1] != '=')
		return -EINVAL;
	const char *v = *p + 2;
	const char *c = memchr(v, ',', (size_t)(end - v));
	*val = v;
	*len = (size_t)((c ? c : end) - v);
	*p = c ? c + 1 : end;
	return 0;
}

static char *dupn(const char *p, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

static enum kaas_scram_mech scram_mech(unsigned bit)
{
	return bit == KAAS_SASL_SCRAM_SHA_256 ? KAAS_SCRAM_SHA_256 : KAAS_SCRAM_SHA_512;
}

/* client-first-message: gs2-header client-first-message-bare. */
static void scram_first(struct kaas_sasl *s, struct kaas_broker *b, const char *peer,
			const char *msg, size_t n, struct kaas_sasl_step *st)
{
	const char *p = msg, *end = msg + n, *v;
	size_t len;
	char authzid[KAAS_CRED_USER_MAX + 1] = "";
	if (n < 3 || (p[0] != 'n' && p[0] != 'y') || p[1] != ',') {
		fail(s, st, peer, "channel binding or a malformed first message");
		return;
	}
	p += 2;
	if (*p == 'a') {
		if (attr(&p, end, 'a', &v, &len) < 0 || saslname(v, len, authzid, sizeof(authzid)) < 0) {
			fail(s, st, peer, "malformed authorization id");
			return;
		}
	} else if (*p == ',') {
		p++;
	} else {
		fail(s, st, peer, "malformed gs2 header");
		return;
	}
	const char *bare = p;
	if (attr(&p, end, 'n', &v, &len) < 0 || saslname(v, len, s->user, sizeof(s->user)) < 0) {
		s->user[0] = '\0';
		fail(s, st, peer, "malformed user name");
		return;
	}
	const char *cnonce;
	size_t cnlen;
	if (attr(&p, end, 'r', &cnonce, &cnlen) < 0 || cnlen == 0 || cnlen > NONCE_MAX) {
		fail(s, st, peer, "malformed nonce");
		return;
	}
	for (size_t i = 0; i < cnlen; i++)
		if (cnonce[i] < 0x21 || cnonce[i] > 0x7e) {
			fail(s, st, peer, "malformed nonce");
			return;
		}
	/* Extensions: Kafka's tokenauth (delegation tokens) is not served. */
	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		size_t el = (size_t)((c ? c : end) - p);
		if (el >= 10 && memcmp(p, "tokenauth=", 10) == 0 &&
		    !(el == 15 && memcmp(p + 10, "false", 5) == 0)) {
			fail(s, st, peer, "delegation tokens are not supported");
			return;
		}
		p = c ? c + 1 : end;
	}
	if (authzid[0] && strcmp(authzid, s->user) != 0) {
		fail(s, st, peer, "authorization id differs from the user");
		return;
	}
	int rc = b && b->creds ? kaas_creds_lookup(b->creds, s->user, scram_mech(s->mech), &s->cred)
			       : 0;
	if (rc != 1) {
		fail(s, st, peer, rc < 0 ? "credentials unreadable on the volume"
					 : "unknown user (no credential for this mechanism)");
		return;
	}
	uint8_t rnd[SERVER_NONCE_BYTES];
	char snonce[2 * SERVER_NONCE_BYTES], salt[2 * KAAS_SCRAM_SALT_MAX];
	if (kaas_scram_random(rnd, sizeof(rnd)) < 0 ||
	    kaas_b64_encode(rnd, sizeof(rnd), snonce, sizeof(snonce)) < 0 ||
	    kaas_b64_encode(s->cred.salt, s->cred.salt_len, salt, sizeof(salt)) < 0) {
		fail(s, st, peer, "no random bytes");
		return;
	}
	snprintf(s->nonce, sizeof(s->nonce), "%.*s%s", (int)cnlen, cnonce, snonce);
	char sfirst[3 * NONCE_MAX + 64];
	int sl = snprintf(sfirst, sizeof(sfirst), "r=%s,s=%s,i=%u", s->nonce, salt,
			  s->cred.iterations);
	size_t barelen = (size_t)(end - bare);
	s->gs2 = dupn(msg, (size_t)(bare - msg));
	s->auth_msg = malloc(barelen + 1 + (size_t)sl + 2);
	st->out = (uint8_t *)dupn(sfirst, (size_t)sl);
	if (!s->gs2 || !s->auth_msg || !st->out) {
		fail(s, st, peer, "out of memory");
		return;
	}
	sprintf(s->auth_msg, "%.*s,%s,", (int)barelen, bare, sfirst);
	st->out_len = (size_t)sl;
	s->state = S_SCRAM_FINAL;
}

/* client-final-message: c=<b64 gs2>,r=<nonce>[,ext...],p=<b64 proof>. */
static void scram_final(struct kaas_conn_security *sec, struct kaas_sasl *s,
			struct kaas_broker *b, const char *peer, const char *msg, size_t n,
			struct kaas_sasl_step *st)
{
	enum kaas_scram_mech m = scram_mech(s->mech);
	size_t klen = kaas_scram_key_len(m);
	const char *p = msg, *end = msg + n, *v;
	size_t len;
	uint8_t cb[256], proof[KAAS_SCRAM_KEY_MAX], sig[KAAS_SCRAM_KEY_MAX];
	uint8_t client_key[KAAS_SCRAM_KEY_MAX], stored[KAAS_SCRAM_KEY_MAX];
	int cblen;
	if (attr(&p, end, 'c', &v, &len) < 0 ||
	    (cblen = kaas_b64_decode(v, len, cb, sizeof(cb))) < 0 ||
	    (size_t)cblen != strlen(s->gs2) || memcmp(cb, s->gs2, (size_t)cblen) != 0) {
		fail(s, st, peer, "channel binding does not match the first message");
		return;
	}
	/* The nonce must end with the one sent (as Kafka checks it:
	 * librdkafka up to 2.x sends the client nonce once more in front);
	 * it is covered by the proof either way. */
	size_t nl = strlen(s->nonce);
	if (attr(&p, end, 'r', &v, &len) < 0 || len < nl || memcmp(v + len - nl, s->nonce, nl) != 0) {
		fail(s, st, peer, "nonce does not match");
		return;
	}
	/* The proof is the last attribute. */
	const char *pp = NULL;
	for (const char *q = end - 2; q > msg; q--)
		if (q[0] == 'p' && q[1] == '=' && q[-1] == ',') {
			pp = q;
			break;
		}
	if (!pp || pp < p ||
	    kaas_b64_decode(pp + 2, (size_t)(end - pp - 2), proof, sizeof(proof)) != (int)klen) {
		fail(s, st, peer, "malformed proof");
		return;
	}
	size_t without = (size_t)(pp - 1 - msg);
	size_t am_len = strlen(s->auth_msg) + without;
	char *am = malloc(am_len + 1);
	if (!am) {
		fail(s, st, peer, "out of memory");
		return;
	}
	sprintf(am, "%s%.*s", s->auth_msg, (int)without, msg);
	int rc = kaas_scram_hmac(m, s->cred.stored_key, klen, am, am_len, sig);
	for (size_t i = 0; i < klen; i++)
		client_key[i] = proof[i] ^ sig[i];
	if (rc == 0)
		rc = kaas_scram_hash(m, client_key, klen, stored);
	int ok = rc == 0 && kaas_scram_equal(stored, s->cred.stored_key, klen);
	uint8_t server_sig[KAAS_SCRAM_KEY_MAX];
	if (ok)
		ok = kaas_scram_hmac(m, s->cred.server_key, klen, am, am_len, server_sig) == 0;
	free(am);
	OPENSSL_cleanse(client_key, sizeof(client_key));
	if (!ok) {
		fail(s, st, peer, "wrong password (the proof does not verify)");
		return;
	}
	char b64[2 * KAAS_SCRAM_KEY_MAX + 8];
	(void)kaas_b64_encode(server_sig, klen, b64, sizeof(b64));
	size_t ol = strlen(b64) + 2;
	st->out = malloc(ol + 1);
	if (!st->out) {
		fail(s, st, peer, "out of memory");
		return;
	}
	snprintf((char *)st->out, ol + 1, "v=%s", b64);
	st->out_len = ol;
	succeed(sec, s, b, peer, st);
}

void kaas_sasl_authenticate(struct kaas_conn_security *sec, struct kaas_broker *b,
			    const char *peer, const uint8_t *tok, size_t n,
			    struct kaas_sasl_step *st)
{
	memset(st, 0, sizeof(*st));
	if (!sec || !sec->sasl) {
		st->error = KAAS_KERR_ILLEGAL_SASL_STATE;
		snprintf(st->message, sizeof(st->message), "not a SASL listener");
		st->close = 1;
		return;
	}
	struct kaas_sasl *s = sec->sasl;
	kaas_lock(&s->mu, KAAS_RANK_SASL);
	if (s->state != S_MECH && s->state != S_SCRAM_FINAL) {
		st->error = KAAS_KERR_ILLEGAL_SASL_STATE;
		snprintf(st->message, sizeof(st->message),
			 "SaslAuthenticate without a SaslHandshake before it");
		st->close = 1;
		log_failure(peer, kaas_sasl_mech_name(s->mech), NULL, st->message);
		s->state = S_FAILED;
	} else if (s->mech == KAAS_SASL_PLAIN) {
		plain(sec, s, b, peer, tok, n, st);
	} else if (s->state == S_MECH) {
		s->user[0] = '\0';
		scram_first(s, b, peer, (const char *)tok, n, st);
	} else {
		scram_final(sec, s, b, peer, (const char *)tok, n, st);
	}
	kaas_unlock(&s->mu);
}
