/*
 * credentials.h — the broker's cache of SASL credentials
 * (cluster/credential_store.h), so that a burst of logins does not read
 * the volume for each, and a change made on any broker (or by kaasctl) is
 * seen here within a heartbeat: an entry — found or not found — is used
 * for at most `refresh_ms` after it was read, then read again.
 *
 * Thread-safe (the SASL handlers run on the work pool).  Lookups may read
 * the volume: never on the loop thread.
 */
#ifndef KAAS_BROKER_CREDENTIALS_H
#define KAAS_BROKER_CREDENTIALS_H

#include <stdint.h>

#include "cluster/scram.h"
#include "substrate/substrate.h"

struct kaas_creds;

/* A cache over the cluster volume, entries kept for refresh_ms (>= 1).
 * NULL when out of memory. */
struct kaas_creds *kaas_creds_new(struct kaas_substrate *cluster, uint32_t refresh_ms);
void kaas_creds_free(struct kaas_creds *c);

/* The credential of `user` for `mech`: 1 and *cred, 0 when the user has
 * none, or -errno when the volume could not be read (the caller fails
 * the login; nothing stale is trusted past refresh_ms). */
int kaas_creds_lookup(struct kaas_creds *c, const char *user, enum kaas_scram_mech mech,
		      struct kaas_scram_cred *cred);

/* Forget what is cached for `user` (this broker just changed it). */
void kaas_creds_forget(struct kaas_creds *c, const char *user);

#endif
