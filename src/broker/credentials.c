/* credentials.c — the credential cache.  See credentials.h. */
#include "broker/credentials.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cluster/credential_store.h"
#include "cluster/membership.h"
#include "util/lock_rank.h"

#define CACHE_SLOTS 256 /* entries; the oldest is dropped for a new one */

struct entry {
	char user[KAAS_CRED_USER_MAX + 1];
	enum kaas_scram_mech mech;  /* UNKNOWN: a free slot */
	int found;
	uint64_t read_ms;
	struct kaas_scram_cred cred;
};

struct kaas_creds {
	struct kaas_substrate *cluster;
	uint32_t refresh_ms;
	pthread_mutex_t mu;
	struct entry e[CACHE_SLOTS];
};

struct kaas_creds *kaas_creds_new(struct kaas_substrate *cluster, uint32_t refresh_ms)
{
	struct kaas_creds *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cluster = cluster;
	c->refresh_ms = refresh_ms ? refresh_ms : 1;
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void kaas_creds_free(struct kaas_creds *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	OPENSSL_cleanse(c->e, sizeof(c->e));
	free(c);
}

/* The slot of (user, mech), or the one to reuse for it (free or oldest). */
static struct entry *slot(struct kaas_creds *c, const char *user, enum kaas_scram_mech mech,
			  int *hit)
{
	struct entry *victim = &c->e[0];
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		struct entry *e = &c->e[i];
		if (e->mech == mech && strcmp(e->user, user) == 0) {
			*hit = 1;
			return e;
		}
		if (victim->mech != KAAS_SCRAM_UNKNOWN &&
		    (e->mech == KAAS_SCRAM_UNKNOWN || e->read_ms < victim->read_ms))
			victim = e;
	}
	*hit = 0;
	return victim;
}

int kaas_creds_lookup(struct kaas_creds *c, const char *user, enum kaas_scram_mech mech,
		      struct kaas_scram_cred *cred)
{
	if (strlen(user) > KAAS_CRED_USER_MAX || mech == KAAS_SCRAM_UNKNOWN)
		return 0;
	uint64_t now = kaas_mono_ms();
	int hit;
	kaas_lock(&c->mu, KAAS_RANK_LEAF);
	struct entry *e = slot(c, user, mech, &hit);
	if (hit && now - e->read_ms < c->refresh_ms) {
		int found = e->found;
		if (found)
			*cred = e->cred;
		kaas_unlock(&c->mu);
		return found;
	}
	kaas_unlock(&c->mu);
	/* Read outside the lock; two readers of one user both store. */
	struct kaas_scram_cred got;
	int rc = kaas_cred_get(c->cluster, user, mech, &got);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	kaas_lock(&c->mu, KAAS_RANK_LEAF);
	e = slot(c, user, mech, &hit);
	strcpy(e->user, user);
	e->mech = mech;
	e->found = rc == 0;
	e->read_ms = now;
	if (rc == 0) {
		e->cred = got;
		*cred = got;
	}
	kaas_unlock(&c->mu);
	OPENSSL_cleanse(&got, sizeof(got));
	return rc == 0;
}

void kaas_creds_forget(struct kaas_creds *c, const char *user)
{
	kaas_lock(&c->mu, KAAS_RANK_LEAF);
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (c->e[i].mech != KAAS_SCRAM_UNKNOWN && strcmp(c->e[i].user, user) == 0) {
			OPENSSL_cleanse(&c->e[i], sizeof(c->e[i]));
			c->e[i].mech = KAAS_SCRAM_UNKNOWN;
		}
	kaas_unlock(&c->mu);
}
