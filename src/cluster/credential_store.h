/*
 * credential_store.h — SCRAM credentials of SASL users on the cluster
 * volume: salted keys only, never a password.
 *
 * One document per user and mechanism:
 *
 *   <cluster>/credentials/<mechanism>/<user-enc>.json
 *     kind "scram-credential", version 1, body
 *     {"user": NAME, "mechanism": "SCRAM-SHA-512", "salt": B64,
 *      "iterations": N, "stored_key": B64, "server_key": B64}
 *
 * <mechanism> is "SCRAM-SHA-256" or "SCRAM-SHA-512"; <user-enc> is the user
 * name encoded as kaas_group_dirname encodes a group id (the full name is
 * in the body and checked on read).  Writers: `kaasctl user add/delete` and
 * AlterUserScramCredentials on any broker.  Each change is one contract
 * primitive: a whole document by kaas_replace (an upsert: the last writer
 * wins, as Kafka's own credential store) or one unlink; there is no
 * read-modify-write, so no change is ever half made or mixed with another.
 * Readers (every broker's cache, broker/credentials.h) re-read a user's
 * document at most a heartbeat after they last did.
 */
#ifndef KAAS_CLUSTER_CREDENTIAL_STORE_H
#define KAAS_CLUSTER_CREDENTIAL_STORE_H

#include "cluster/scram.h"
#include "substrate/substrate.h"

#define KAAS_CRED_DIR "credentials"
/* The modes of what only the brokers and their operators may read: the
 * credential and ACL directories and documents (kaasctl verify warns on
 * looser ones; a backend without modes ignores them). */
#define KAAS_SECRET_DIR_MODE 0700
#define KAAS_SECRET_FILE_MODE 0600
#define KAAS_CRED_USER_MAX 256 /* bytes of a user name, NUL excluded */

/* Write (create or replace) the credential of `user` for cred->mech.
 * 0, -EINVAL (empty or too long a name, unknown mechanism) or the
 * volume's -errno. */
int kaas_cred_put(struct kaas_substrate *cluster, const char *user,
		  const struct kaas_scram_cred *cred);

/* Read the credential of `user` for `mech`: 0 and *cred, -ENOENT when there
 * is none, -EBADMSG for a damaged document, or the volume's -errno. */
int kaas_cred_get(struct kaas_substrate *cluster, const char *user, enum kaas_scram_mech mech,
		  struct kaas_scram_cred *cred);

/* Remove the credential of `user` for `mech`: 0, -ENOENT when there was
 * none, or -errno. */
int kaas_cred_delete(struct kaas_substrate *cluster, const char *user, enum kaas_scram_mech mech);

/* Every stored credential, by mechanism then encoded name: cb(arg, user,
 * cred) for each (a nonzero return stops the walk and is returned).
 * Damaged documents are skipped with a warning.  0 or -errno. */
typedef int (*kaas_cred_each_fn)(void *arg, const char *user, const struct kaas_scram_cred *cred);
int kaas_cred_each(struct kaas_substrate *cluster, kaas_cred_each_fn cb, void *arg);

#endif
