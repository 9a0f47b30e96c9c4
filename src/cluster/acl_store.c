/* acl_store.c — ACL bindings as content-named documents (acl_store.h). */
#include "cluster/acl_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "contract/contract.h"
#include "contract/doc.h"
#include "cluster/credential_store.h"

#define ACL_DOC_VERSION 1

static const char *const resource_names[] = { "unknown", "any", "topic", "group", "cluster",
					      "transactional_id", "delegation_token", "user" };
static const char *const pattern_names[] = { "unknown", "any", "match", "literal", "prefixed" };
static const char *const op_names[] = { "unknown", "any", "all", "read", "write", "create",
					"delete", "alter", "describe", "cluster_action",
					"describe_configs", "alter_configs", "idempotent_write",
					"create_tokens", "describe_tokens" };
static const char *const perm_names[] = { "unknown", "any", "deny", "allow" };

#define NAMES(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, size_t n, int code)
{
	return code >= 0 && (size_t)code < n ? names[code] : "unknown";
}

/* Case-insensitive, '-' == '_'. */
static int parse_of(const char *const *names, size_t n, const char *s)
{
	if (!s)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *a = names[i], *b = s;
		while (*a && *b) {
			char cb = *b == '-' ? '_' : *b;
			if ((*a | 0x20) != (cb | 0x20) && !(*a == '_' && cb == '_'))
				break;
			a++, b++;
		}
		if (!*a && !*b)
			return (int)i;
	}
	return -1;
}

const char *kaas_acl_resource_name(int c) { return name_of(resource_names, NAMES(resource_names), c); }
const char *kaas_acl_pattern_name(int c) { return name_of(pattern_names, NAMES(pattern_names), c); }
const char *kaas_acl_op_name(int c) { return name_of(op_names, NAMES(op_names), c); }
const char *kaas_acl_perm_name(int c) { return name_of(perm_names, NAMES(perm_names), c); }
int kaas_acl_resource_parse(const char *s) { return parse_of(resource_names, NAMES(resource_names), s); }
int kaas_acl_pattern_parse(const char *s) { return parse_of(pattern_names, NAMES(pattern_names), s); }
int kaas_acl_op_parse(const char *s) { return parse_of(op_names, NAMES(op_names), s); }
int kaas_acl_perm_parse(const char *s) { return parse_of(perm_names, NAMES(perm_names), s); }

const char *kaas_acl_invalid(const struct kaas_acl *a)
{
	if (a->resource_type < KAAS_RES_TOPIC || a->resource_type > KAAS_RES_USER)
		return "the resource type must be a concrete type (topic, group, cluster, "
		       "transactional_id, delegation_token, user)";
	if (a->pattern_type != KAAS_PAT_LITERAL && a->pattern_type != KAAS_PAT_PREFIXED)
		return "the pattern type must be literal or prefixed";
	if (!a->name || !*a->name)
		return "the resource name must not be empty";
	if (a->resource_type == KAAS_RES_CLUSTER &&
	    (a->pattern_type != KAAS_PAT_LITERAL || strcmp(a->name, KAAS_ACL_CLUSTER_NAME) != 0))
		return "the cluster resource is the literal name kafka-cluster";
	if (!a->principal || !strchr(a->principal, ':') || a->principal[0] == ':')
		return "the principal must be TYPE:NAME (User:alice, User:*)";
	if (!a->host || !*a->host)
		return "the host must be an address or *";
	if (a->operation < KAAS_OP_ALL || a->operation > KAAS_OP_DESCRIBE_TOKENS)
		return "the operation must be a concrete operation";
	if (a->permission != KAAS_PERM_DENY && a->permission != KAAS_PERM_ALLOW)
		return "the permission must be allow or deny";
	return NULL;
}

static int str_match(const char *filter, const char *value)
{
	return !filter || strcmp(filter, value) == 0;
}

int kaas_acl_filter_match(const struct kaas_acl_filter *f, const struct kaas_acl *a)
{
	if (f->resource_type != KAAS_RES_ANY && f->resource_type != a->resource_type)
		return 0;
	if (f->operation != KAAS_OP_ANY && f->operation != a->operation)
		return 0;
	if (f->permission != KAAS_PERM_ANY && f->permission != a->permission)
		return 0;
	if (!str_match(f->principal, a->principal) || !str_match(f->host, a->host))
		return 0;
	switch (f->pattern_type) {
	case KAAS_PAT_ANY:
		return str_match(f->name, a->name);
	case KAAS_PAT_MATCH:
		if (!f->name)
			return 1;
		if (a->pattern_type == KAAS_PAT_LITERAL)
			return strcmp(a->name, f->name) == 0 || strcmp(a->name, "*") == 0;
		return strncmp(f->name, a->name, strlen(a->name)) == 0;
	default:
		return f->pattern_type == a->pattern_type && str_match(f->name, a->name);
	}
}

static void fnv(uint64_t *h, const char *s, size_t n, int reverse)
{
	for (size_t i = 0; i < n; i++) {
		*h ^= (unsigned char)s[reverse ? n - 1 - i : i];
		*h *= 0x100000001b3ull;
	}
}

void kaas_acl_doc_name(const struct kaas_acl *a, char *buf, size_t size)
{
	/* The canonical encoding: every field, NUL-separated. */
	char head[32];
	int hn = snprintf(head, sizeof head, "%d,%d,%d,%d", a->resource_type, a->pattern_type,
			  a->operation, a->permission);
	const char *parts[] = { head, a->name, a->principal, a->host };
	size_t lens[] = { (size_t)hn, strlen(a->name), strlen(a->principal), strlen(a->host) };
	uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
	for (size_t i = 0; i < 4; i++) {
		fnv(&h1, parts[i], lens[i] + 1, 0); /* with its NUL */
		fnv(&h2, parts[3 - i], lens[3 - i] + 1, 1);
	}
	snprintf(buf, size, "%016llx%016llx.json", (unsigned long long)h1,
		 (unsigned long long)h2);
}

static int same(const struct kaas_acl *x, const struct kaas_acl *y)
{
	return x->resource_type == y->resource_type && x->pattern_type == y->pattern_type &&
	       x->operation == y->operation && x->permission == y->permission &&
	       strcmp(x->name, y->name) == 0 && strcmp(x->principal, y->principal) == 0 &&
	       strcmp(x->host, y->host) == 0;
}

static cJSON *to_json(const struct kaas_acl *a)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int ok = cJSON_AddStringToObject(o, "resource_type", kaas_acl_resource_name(a->resource_type)) &&
		 cJSON_AddStringToObject(o, "pattern_type", kaas_acl_pattern_name(a->pattern_type)) &&
		 cJSON_AddStringToObject(o, "name", a->name) &&
		 cJSON_AddStringToObject(o, "principal", a->principal) &&
		 cJSON_AddStringToObject(o, "host", a->host) &&
		 cJSON_AddStringToObject(o, "operation", kaas_acl_op_name(a->operation)) &&
		 cJSON_AddStringToObject(o, "permission", kaas_acl_perm_name(a->permission));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static const char *get_str(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static int from_json(const cJSON *o, struct kaas_acl *a)
{
	memset(a, 0, sizeof(*a));
	int rt = kaas_acl_resource_parse(get_str(o, "resource_type"));
	int pt = kaas_acl_pattern_parse(get_str(o, "pattern_type"));
	int op = kaas_acl_op_parse(get_str(o, "operation"));
	int pm = kaas_acl_perm_parse(get_str(o, "permission"));
	const char *n = get_str(o, "name"), *p = get_str(o, "principal"), *h = get_str(o, "host");
	if (rt < 0 || pt < 0 || op < 0 || pm < 0 || !n || !p || !h)
		return -EBADMSG;
	struct kaas_acl tmp = { (int8_t)rt, (int8_t)pt, (char *)n, (char *)p, (char *)h,
				(int8_t)op, (int8_t)pm };
	if (kaas_acl_invalid(&tmp))
		return -EBADMSG;
	return kaas_acl_copy(a, &tmp);
}

int kaas_acl_copy(struct kaas_acl *dst, const struct kaas_acl *src)
{
	*dst = *src;
	dst->name = strdup(src->name);
	dst->principal = strdup(src->principal);
	dst->host = strdup(src->host);
	if (!dst->name || !dst->principal || !dst->host) {
		kaas_acl_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

void kaas_acl_clear(struct kaas_acl *a)
{
	if (!a)
		return;
	free(a->name);
	free(a->principal);
	free(a->host);
	a->name = a->principal = a->host = NULL;
}

static int doc_path(const struct kaas_acl *a, char *buf, size_t size)
{
	char name[48];
	kaas_acl_doc_name(a, name, sizeof name);
	int n = snprintf(buf, size, "%s/%s", KAAS_ACLS_DIR, name);
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

int kaas_acl_store_read(struct kaas_substrate *cluster, const char *docname, struct kaas_acl *a)
{
	char path[96];
	if (snprintf(path, sizeof path, "%s/%s", KAAS_ACLS_DIR, docname) >= (int)sizeof path)
		return -ENAMETOOLONG;
	cJSON *body = NULL;
	int version;
	int rc = kaas_doc_read(cluster, path, KAAS_ACL_DOC_KIND, ACL_DOC_VERSION, &body, &version);
	if (rc < 0)
		return rc;
	rc = from_json(body, a);
	cJSON_Delete(body);
	if (rc < 0)
		return rc == -EBADMSG ? kaas_sub_fail(rc, "%s: not an ACL binding", path) : rc;
	char want[48];
	kaas_acl_doc_name(a, want, sizeof want);
	if (strcmp(want, docname) != 0) {
		kaas_acl_clear(a);
		return kaas_sub_fail(-EBADMSG, "%s: its binding hashes to %s", path, want);
	}
	return 0;
}

int kaas_acl_store_add(struct kaas_substrate *cluster, const struct kaas_acl *a)
{
	if (kaas_acl_invalid(a))
		return kaas_sub_fail(-EINVAL, "ACL binding: %s", kaas_acl_invalid(a));
	char path[96], name[48];
	int rc = doc_path(a, path, sizeof path);
	if (rc < 0)
		return rc;
	kaas_acl_doc_name(a, name, sizeof name);
	/* A document of this name either holds this very binding (done) or,
	 * astronomically unlikely, another one: never overwrite that. */
	struct kaas_acl old;
	rc = kaas_acl_store_read(cluster, name, &old);
	if (rc == 0) {
		int eq = same(&old, a);
		kaas_acl_clear(&old);
		return eq ? 0 : kaas_sub_fail(-EEXIST, "%s holds another binding", path);
	}
	if (rc != -ENOENT && rc != -EBADMSG)
		return rc;
	rc = kaas_sub_mkdirs(cluster, KAAS_ACLS_DIR, KAAS_SECRET_DIR_MODE);
	if (rc < 0 && rc != -EEXIST)
		return rc;
	cJSON *body = to_json(a);
	if (!body)
		return -ENOMEM;
	rc = kaas_doc_write_mode(cluster, path, KAAS_ACL_DOC_KIND, ACL_DOC_VERSION, body,
				 KAAS_SECRET_FILE_MODE);
	cJSON_Delete(body);
	return rc;
}

int kaas_acl_store_remove(struct kaas_substrate *cluster, const struct kaas_acl *a)
{
	char path[96];
	int rc = doc_path(a, path, sizeof path);
	if (rc < 0)
		return rc;
	rc = kaas_sub_unlink(cluster, path);
	return rc == -ENOENT ? 0 : rc;
}

static int is_doc_name(const char *n)
{
	if (strlen(n) != 37 || strcmp(n + 32, ".json") != 0)
		return 0;
	for (int i = 0; i < 32; i++)
		if (!strchr("0123456789abcdef", n[i]))
			return 0;
	return 1;
}

int kaas_acl_store_list(struct kaas_substrate *cluster, struct kaas_dirlist *out)
{
	memset(out, 0, sizeof(*out));
	int rc = kaas_sub_list(cluster, KAAS_ACLS_DIR, out);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (is_doc_name(out->names[i])) {
			out->names[k] = out->names[i];
			if (out->types)
				out->types[k] = out->types[i];
			k++;
		} else {
			free(out->names[i]);
		}
	}
	out->n = k;
	return 0;
}
