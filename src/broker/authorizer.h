/*
 * authorizer.h — may principal P from host H do operation O on resource R?
 * (issue 17, authorization)
 *
 * The answer follows Kafka's standard authorizer:
 *   - the authorizer is off (authorizer.class.name set empty): yes;
 *   - P is one of super.users: yes;
 *   - the bindings that apply to R are the literal ones on R's name, the
 *     literal "*" ones of R's type and the prefixed ones whose pattern
 *     starts R's name; none at all (for any principal): the answer is
 *     allow.everyone.if.no.acl.found;
 *   - a DENY binding for P (or "User:*"), H (or "*") and O (or ALL): no;
 *   - an ALLOW binding for P/H and O, ALL, or an operation that implies O
 *     (DESCRIBE is implied by READ, WRITE, DELETE, ALTER;
 *     DESCRIBE_CONFIGS by ALTER_CONFIGS): yes;
 *   - otherwise no.
 *
 * Bindings live on the cluster volume (cluster/acl_store.h).  Every broker
 * keeps them in a cache that a thread of the authorizer refreshes every
 * heartbeat interval (a directory listing; documents never change content,
 * so only new names are read), and right after this broker created or
 * deleted bindings.  A document that cannot be read as a binding (corrupt)
 * makes the authorizer refuse everyone but super users until it is gone:
 * a deny binding is never silently dropped.  A refresh that fails (volume
 * error) keeps the last cache and is logged.
 *
 * Settings (Kafka's keys in --config):
 *   authorizer.class.name      empty: no authorizer (every request allowed,
 *                              the ACL APIs answer SECURITY_DISABLED); any
 *                              other value (Kafka's class names
 *                              kafka.security.authorizer.AclAuthorizer,
 *                              org.apache.kafka.metadata.authorizer.
 *                              StandardAuthorizer, or "kaas") or unset:
 *                              kaas's authorizer.
 *   super.users                "User:admin;User:CN=ops,O=x" (';'-separated)
 *   allow.everyone.if.no.acl.found   true|false; default false once any
 *                              listener is SSL, SASL_PLAINTEXT or SASL_SSL,
 *                              true when every listener is PLAINTEXT.
 *
 * Threads: kaas_authz_allowed and the other queries from any thread.
 */
#ifndef KAAS_BROKER_AUTHORIZER_H
#define KAAS_BROKER_AUTHORIZER_H

#include <stddef.h>
#include <stdint.h>

#include "broker/config.h"
#include "cluster/acl_store.h"
#include "substrate/substrate.h"

struct kaas_authz;

/* Is `key` an authorizer setting?  Apply it to c->authz: 0, -EINVAL
 * (message printed) or -ENOMEM. */
int kaas_config_authz_key(const char *key);
int kaas_config_authz_apply(struct kaas_config *c, const char *key, const char *v);
void kaas_config_authz_free(struct kaas_config *c);

/* Create the authorizer over the cluster volume with cfg's settings
 * (cfg must outlive it) and load the bindings once.  0 or -errno (the
 * bindings could not be listed: the broker does not start). */
int kaas_authz_new(struct kaas_substrate *cluster, const struct kaas_config *cfg,
		   struct kaas_authz **out);
/* Start the refresh thread (every cfg->heartbeat_ms).  0 or -errno. */
int kaas_authz_start(struct kaas_authz *az);
/* Stop the thread and free (NULL: no-op). */
void kaas_authz_free(struct kaas_authz *az);

/* Re-read the bindings now (any thread): 0 or -errno (cache kept). */
int kaas_authz_refresh(struct kaas_authz *az);

/* Is the authorizer on?  (NULL: off.) */
int kaas_authz_enabled(const struct kaas_authz *az);

/* The decision above for principal ("User:x"), host (the client's address,
 * without port), op (enum kaas_acl_op, concrete), resource type (TOPIC,
 * GROUP, CLUSTER, TRANSACTIONAL_ID) and name (len bytes; the cluster is
 * KAAS_ACL_CLUSTER_NAME).  1 allowed, 0 refused.  NULL az: 1. */
int kaas_authz_allowed(struct kaas_authz *az, const char *principal, const char *host, int op,
		       int resource_type, const char *name, size_t len);

/* May principal/host do op on SOME resource of the type (Kafka's
 * authorizeByResourceType: InitProducerId of an idempotent producer needs
 * WRITE on some topic)?  Yes for super users; with no binding of the type,
 * allow.everyone.if.no.acl.found; else an ALLOW that no DENY of the same
 * or a wider pattern (literal "*", a prefix of its name) covers.  1 or 0. */
int kaas_authz_allowed_any(struct kaas_authz *az, const char *principal, const char *host,
			   int op, int resource_type);

/* Is principal a super user? */
int kaas_authz_super(const struct kaas_authz *az, const char *principal);

/* Call fn for every cached binding matching f (under the cache's read
 * lock: fn must not call back into the authorizer).  Returns the count. */
size_t kaas_authz_foreach(struct kaas_authz *az, const struct kaas_acl_filter *f,
			  void (*fn)(void *arg, const struct kaas_acl *a), void *arg);

#endif
