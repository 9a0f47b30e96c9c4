/*
 * quota_store.h — client quotas on the cluster volume (issue 35; Kafka's
 * KIP-13, KIP-124, KIP-546).
 *
 * A quota is one value of one key for one entity:
 *
 *   entity   a user, a client id, or a user and a client id; each part
 *            either named or the default ("<default>" in Kafka's tools,
 *            null on the wire): user=alice, client-id=<default>,
 *            user=<default>+client-id=app ...
 *   key      producer_byte_rate, consumer_byte_rate (bytes/s, integers),
 *            request_percentage, controller_mutation_rate (doubles)
 *
 * One document per (entity, key), named by a hash of the pair:
 *
 *   <cluster>/quotas/<32 hex>.json   kaas_doc kind "client-quota",
 *     version 1, body {"user":"alice","client_id":null,
 *                      "key":"producer_byte_rate","value":1048576}
 *
 * "user" / "client_id" absent: the entity has no such part; null: the
 * default; a string: that name.  The name is a pure function of the
 * (entity, key) pair, checked on read.  Setting a quota is one
 * kaas_replace of its document (an upsert: the last writer wins, as in
 * Kafka, and a retry after a lost reply writes the same bytes again);
 * removing one is one unlink (ENOENT counts as done).  No document is
 * ever read, changed and written back, so two brokers altering different
 * keys of one entity at once never lose either change.  Any broker
 * writes (AlterClientQuotas); every broker reads the whole directory each
 * heartbeat (broker/quotas.h).
 */
#ifndef KAAS_CLUSTER_QUOTA_STORE_H
#define KAAS_CLUSTER_QUOTA_STORE_H

#include <stddef.h>

#include "substrate/substrate.h"

#define KAAS_QUOTAS_DIR "quotas"
#define KAAS_QUOTA_DOC_KIND "client-quota"
#define KAAS_QUOTA_NAME_MAX 1024 /* bytes of a user or client id name */

/* The quota keys (Kafka's names). */
enum kaas_quota_key {
	KAAS_QK_PRODUCER_BYTE_RATE = 0,
	KAAS_QK_CONSUMER_BYTE_RATE = 1,
	KAAS_QK_REQUEST_PERCENTAGE = 2,
	KAAS_QK_CONTROLLER_MUTATION_RATE = 3,
	KAAS_QK_COUNT
};

/* An entity: which parts it has, and each part's name (NULL: the
 * default).  Strings are owned by whoever holds the struct. */
struct kaas_quota_entity {
	int has_user, has_client;
	char *user;
	char *client;
};

struct kaas_quota {
	struct kaas_quota_entity e;
	int key;      /* enum kaas_quota_key */
	double value;
};

/* The key of a name ("producer_byte_rate" ...): the code, or -1. */
int kaas_quota_key_parse(const char *name, size_t len);
const char *kaas_quota_key_name(int key);
/* NULL if value is acceptable for key (positive, finite; an integer for
 * the byte rates), else why not. */
const char *kaas_quota_value_invalid(int key, double value);
/* NULL if the entity is one a quota can name (at least one part, names
 * non-empty and at most KAAS_QUOTA_NAME_MAX bytes), else why not. */
const char *kaas_quota_entity_invalid(const struct kaas_quota_entity *e);

/* Do two entities name the same thing? */
int kaas_quota_entity_same(const struct kaas_quota_entity *a, const struct kaas_quota_entity *b);
/* Copy (0 or -ENOMEM) / free the strings (NULL-safe). */
int kaas_quota_entity_copy(struct kaas_quota_entity *dst, const struct kaas_quota_entity *src);
void kaas_quota_entity_clear(struct kaas_quota_entity *e);

/* The document name of (entity, key): "<32 hex>.json"; buf >= 40. */
void kaas_quota_doc_name(const struct kaas_quota_entity *e, int key, char *buf, size_t size);

/* Set a quota (see the top): 0, -EINVAL (invalid entity, key or value:
 * nothing written) or the volume's -errno (the document holds the old
 * value or the new one; a retry is safe). */
int kaas_quota_store_put(struct kaas_substrate *cluster, const struct kaas_quota *q);

/* Remove (entity, key): 0 (removed or already absent) or -errno. */
int kaas_quota_store_remove(struct kaas_substrate *cluster, const struct kaas_quota_entity *e,
			    int key);

/* Read the quota stored under a document name ("<32 hex>.json"): 0 and
 * *q (free its entity with kaas_quota_entity_clear), -ENOENT, -EBADMSG
 * (not a quota, or not the one its name says; the detail says which) or
 * -errno. */
int kaas_quota_store_read(struct kaas_substrate *cluster, const char *docname,
			  struct kaas_quota *q);

/* Every stored quota: 0 with *out (n entries, free with
 * kaas_quota_store_free) and *nbad (documents that could not be read as a
 * quota: skipped, logged), an empty list when the directory does not
 * exist, or -errno (listing failed; nothing returned). */
int kaas_quota_store_load(struct kaas_substrate *cluster, struct kaas_quota **out, size_t *n,
			  size_t *nbad);
void kaas_quota_store_free(struct kaas_quota *v, size_t n);

#endif
