/*
 * acl_store.h — ACL bindings on the cluster volume (issue 17).
 *
 * One document per binding, named by a hash of the binding's content:
 *
 *   <cluster>/acls/<32 hex>.json     kaas_doc kind "acl", version 1, body
 *     {"resource_type":"topic","pattern_type":"literal","name":"orders",
 *      "principal":"User:alice","host":"*","operation":"read",
 *      "permission":"allow"}
 *
 * The name is a pure function of the content (kaas_acl_doc_name), so a
 * document is never changed once it exists: creating a binding writes its
 * document with kaas_replace (temp, fsync, rename — readers see the whole
 * document or none), and two brokers creating the same binding at once
 * write byte-identical documents under one name (either rename wins, the
 * result is the same), while two different bindings land under two names:
 * no read-modify-write of a shared list, so no update is ever lost.
 * Removing a binding unlinks its document; ENOENT counts as done, so a
 * removal is convergent and may be re-driven.  Readers list the directory
 * and read the documents they do not yet know (a name never changes
 * content, so a cache keyed by name is exact).
 *
 * Bindings are by name, as in Kafka: an ACL on topic "t" applies to every
 * future topic called "t" (an ACL names a resource name, not a topic
 * incarnation).
 *
 * The enums carry Kafka's wire codes (AclOperation, ResourceType,
 * PatternType, AclPermissionType).
 */
#ifndef KAAS_ACL_STORE_H
#define KAAS_ACL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

#define KAAS_ACLS_DIR "acls"
#define KAAS_ACL_DOC_KIND "acl"
#define KAAS_ACL_CLUSTER_NAME "kafka-cluster"

enum kaas_acl_resource {
	KAAS_RES_UNKNOWN = 0, KAAS_RES_ANY = 1, KAAS_RES_TOPIC = 2, KAAS_RES_GROUP = 3,
	KAAS_RES_CLUSTER = 4, KAAS_RES_TRANSACTIONAL_ID = 5, KAAS_RES_DELEGATION_TOKEN = 6,
	KAAS_RES_USER = 7,
};
enum kaas_acl_pattern {
	KAAS_PAT_UNKNOWN = 0, KAAS_PAT_ANY = 1, KAAS_PAT_MATCH = 2, KAAS_PAT_LITERAL = 3,
	KAAS_PAT_PREFIXED = 4,
};
enum kaas_acl_op {
	KAAS_OP_UNKNOWN = 0, KAAS_OP_ANY = 1, KAAS_OP_ALL = 2, KAAS_OP_READ = 3,
	KAAS_OP_WRITE = 4, KAAS_OP_CREATE = 5, KAAS_OP_DELETE = 6, KAAS_OP_ALTER = 7,
	KAAS_OP_DESCRIBE = 8, KAAS_OP_CLUSTER_ACTION = 9, KAAS_OP_DESCRIBE_CONFIGS = 10,
	KAAS_OP_ALTER_CONFIGS = 11, KAAS_OP_IDEMPOTENT_WRITE = 12, KAAS_OP_CREATE_TOKENS = 13,
	KAAS_OP_DESCRIBE_TOKENS = 14,
};
enum kaas_acl_perm {
	KAAS_PERM_UNKNOWN = 0, KAAS_PERM_ANY = 1, KAAS_PERM_DENY = 2, KAAS_PERM_ALLOW = 3,
};

/* One binding (all strings owned). */
struct kaas_acl {
	int8_t resource_type;  /* enum kaas_acl_resource: TOPIC..USER */
	int8_t pattern_type;   /* LITERAL or PREFIXED */
	char *name;            /* resource name; "*" literal = every resource */
	char *principal;       /* "User:alice", "User:*" */
	char *host;            /* client address or "*" */
	int8_t operation;      /* enum kaas_acl_op: ALL..DESCRIBE_TOKENS */
	int8_t permission;     /* DENY or ALLOW */
};

/* A filter (DescribeAcls, DeleteAcls): the ANY values and NULL strings
 * match everything; pattern MATCH matches what applies to the name
 * (literal equal, literal "*", prefixed patterns that prefix it). */
struct kaas_acl_filter {
	int8_t resource_type;
	int8_t pattern_type;
	const char *name;
	const char *principal;
	const char *host;
	int8_t operation;
	int8_t permission;
};

/* Names of the enums (lower case, as documents and kaasctl spell them:
 * "topic", "literal", "read", "idempotent_write", "allow"), and back:
 * the code, or -1 for an unknown name.  Parsing is case-insensitive and
 * accepts '-' for '_'. */
const char *kaas_acl_resource_name(int code);
const char *kaas_acl_pattern_name(int code);
const char *kaas_acl_op_name(int code);
const char *kaas_acl_perm_name(int code);
int kaas_acl_resource_parse(const char *s);
int kaas_acl_pattern_parse(const char *s);
int kaas_acl_op_parse(const char *s);
int kaas_acl_perm_parse(const char *s);

/* Is the binding one that can be stored (a concrete resource type,
 * LITERAL/PREFIXED, a concrete operation and permission, non-empty name,
 * a principal "Type:name", a host)?  NULL if so, else why not. */
const char *kaas_acl_invalid(const struct kaas_acl *a);

/* Does the filter match the binding? */
int kaas_acl_filter_match(const struct kaas_acl_filter *f, const struct kaas_acl *a);

/* The document name of a binding: "<32 hex>.json" (two 64-bit FNV-1a
 * hashes of its canonical encoding).  buf >= 40 bytes. */
void kaas_acl_doc_name(const struct kaas_acl *a, char *buf, size_t size);

/* Store a binding (see the top): 0, or -errno.  Idempotent.  A document
 * of that name holding another binding (a hash collision) is -EEXIST. */
int kaas_acl_store_add(struct kaas_substrate *cluster, const struct kaas_acl *a);

/* Remove a binding: 0 (removed, or already absent), or -errno. */
int kaas_acl_store_remove(struct kaas_substrate *cluster, const struct kaas_acl *a);

/* The names of the documents in <cluster>/acls (only "<32 hex>.json";
 * temps and others skipped): 0 and *out (free with kaas_dirlist_free), an
 * empty list when the directory does not exist, or -errno. */
int kaas_acl_store_list(struct kaas_substrate *cluster, struct kaas_dirlist *out);

/* Read the binding stored under a document name: 0, -ENOENT (removed
 * meanwhile), -EBADMSG (corrupt, or its content does not hash to its
 * name), or -errno. */
int kaas_acl_store_read(struct kaas_substrate *cluster, const char *docname, struct kaas_acl *a);

/* Copy a binding (0 or -ENOMEM) / free its strings (NULL-safe). */
int kaas_acl_copy(struct kaas_acl *dst, const struct kaas_acl *src);
void kaas_acl_clear(struct kaas_acl *a);

#endif
