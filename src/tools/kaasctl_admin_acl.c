/* kaasctl_admin_acl.c — `kaasctl --bootstrap HOST:PORT acl list|add|remove`:
 * ACL bindings through the Kafka protocol (DescribeAcls, CreateAcls,
 * DeleteAcls v1), with the options of the volume's `acl` command. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"

/* The protocol's enums (ResourceType, PatternType, AclOperation,
 * AclPermissionType). */
static const char *const res_names[] = { "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER",
					 "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER" };
static const char *const pat_names[] = { "UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED" };
static const char *const op_names[] = { "UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE",
					"DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
					"DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
					"CREATE_TOKENS", "DESCRIBE_TOKENS" };
static const char *const perm_names[] = { "UNKNOWN", "ANY", "DENY", "ALLOW" };
#define NAME(tab, v) ((v) >= 0 && (size_t)(v) < sizeof tab / sizeof tab[0] ? tab[v] : "UNKNOWN")

struct binding {
	int8_t res, pat, op, perm;
	const char *name, *principal, *host;
};

static int usage(void)
{
	fputs("usage: kaasctl --bootstrap HOST:PORT acl add|remove --principal User:NAME\n"
	      "           (--topic T | --group G | --cluster | --transactional-id X)\n"
	      "           --operation OP [--prefixed] [--host H] [--deny]\n"
	      "       kaasctl --bootstrap HOST:PORT acl list [--principal P]\n"
	      "           [--topic T | --group G | --cluster | --transactional-id X]\n", stderr);
	return KCTL_EXIT_ERROR;
}

static int parse(int argc, char **argv, int filter, struct binding *b)
{
	*b = (struct binding){ filter ? 1 : 0, filter ? 1 : 3, filter ? 1 : 0, filter ? 1 : 3,
			       NULL, NULL, filter ? NULL : "*" };
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--principal") && v)
			b->principal = v, i++;
		else if (!strcmp(o, "--topic") && v)
			b->res = 2, b->name = v, i++;
		else if (!strcmp(o, "--group") && v)
			b->res = 3, b->name = v, i++;
		else if (!strcmp(o, "--transactional-id") && v)
			b->res = 5, b->name = v, i++;
		else if (!strcmp(o, "--cluster"))
			b->res = 4, b->name = "kafka-cluster";
		else if (!filter && !strcmp(o, "--prefixed"))
			b->pat = 4;
		else if (!filter && !strcmp(o, "--deny"))
			b->perm = 2;
		else if (!filter && !strcmp(o, "--host") && v)
			b->host = v, i++;
		else if (!filter && !strcmp(o, "--operation") && v) {
			char up[64];
			size_t k = 0;
			for (; v[k] && k < sizeof up - 1; k++)
				up[k] = v[k] == '-' ? '_' : (char)toupper((unsigned char)v[k]);
			up[k] = '\0';
			for (size_t j = 2; j < sizeof op_names / sizeof op_names[0]; j++)
				if (!strcmp(up, op_names[j]))
					b->op = (int8_t)j;
			if (b->op == 0)
				return kctl_error("unknown operation '%s'", v);
			i++;
		} else
			return usage();
	}
	if (filter && b->name)
		b->pat = 2; /* MATCH: every binding that applies to the resource */
	if (!filter && (!b->principal || !b->name || !b->op))
		return usage();
	return 0;
}

static void put_filter(struct kaas_kw *w, const struct binding *b)
{
	kaas_kw_i8(w, b->res);
	kaas_kw_str(w, 0, b->name);
	kaas_kw_i8(w, b->pat);
	kaas_kw_str(w, 0, b->principal);
	kaas_kw_str(w, 0, b->host);
	kaas_kw_i8(w, b->op);
	kaas_kw_i8(w, b->perm);
}

static cJSON *binding_json(int8_t res, struct kaas_kslice name, int8_t pat, struct kaas_kslice pr,
			   struct kaas_kslice host, int8_t op, int8_t perm)
{
	cJSON *o = cJSON_CreateObject();
	char *s;
	cJSON_AddStringToObject(o, "resource_type", NAME(res_names, res));
	kctl_add_text(o, "resource_name", (s = kaas_kslice_dup(name)) ? s : "");
	free(s);
	cJSON_AddStringToObject(o, "pattern_type", NAME(pat_names, pat));
	kctl_add_text(o, "principal", (s = kaas_kslice_dup(pr)) ? s : "");
	free(s);
	kctl_add_text(o, "host", (s = kaas_kslice_dup(host)) ? s : "");
	free(s);
	cJSON_AddStringToObject(o, "operation", NAME(op_names, op));
	cJSON_AddStringToObject(o, "permission", NAME(perm_names, perm));
	return o;
}

static const char *field(const cJSON *o, const char *k)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(s) ? s->valuestring : "?";
}

static int acl_list(struct kctl_admin *a, const struct binding *f)
{
	struct kctl_conn *c = &a->boot;
	if (kctl_conn_pick(c, KAAS_API_DESCRIBE_ACLS, 1, 1) < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_DESCRIBE_ACLS, 1, 0);
	put_filter(&w, f);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("DescribeAcls: %s", c->why);
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	struct kaas_kslice msg = kaas_kr_nstr(&r, 0);
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "acls");
	int32_t nr = kaas_kr_array(&r, 0, 8);
	for (int32_t i = 0; i < nr && kaas_kr_ok(&r); i++) {
		int8_t res = kaas_kr_i8(&r);
		struct kaas_kslice name = kaas_kr_str(&r, 0);
		int8_t pat = kaas_kr_i8(&r);
		int32_t na = kaas_kr_array(&r, 0, 6);
		for (int32_t j = 0; j < na && kaas_kr_ok(&r); j++) {
			struct kaas_kslice pr = kaas_kr_str(&r, 0), host = kaas_kr_str(&r, 0);
			int8_t op = kaas_kr_i8(&r), perm = kaas_kr_i8(&r);
			cJSON_AddItemToArray(arr, binding_json(res, name, pat, pr, host, op, perm));
		}
	}
	int rc = 0;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed DescribeAcls answer", c->addr);
	else if (err)
		rc = kctl_admin_kerr("DescribeAcls", err, &msg);
	free(buf);
	if (rc == 0 && a->json)
		return kctl_json_emit(root);
	if (rc == 0) {
		const cJSON *x;
		cJSON_ArrayForEach(x, arr)
			printf("%-5s %-24s %-16s %-16s %-8s %-24s host %s\n", field(x, "permission"),
			       field(x, "principal"), field(x, "operation"), field(x, "resource_type"),
			       field(x, "pattern_type"), field(x, "resource_name"), field(x, "host"));
		if (cJSON_GetArraySize(arr) == 0)
			printf("no ACL bindings%s\n", f->name || f->principal ? " match" : "");
	}
	cJSON_Delete(root);
	return rc;
}

static int acl_change(struct kctl_admin *a, const struct binding *b, int add)
{
	struct kctl_conn *c = &a->boot;
	int16_t api = add ? KAAS_API_CREATE_ACLS : KAAS_API_DELETE_ACLS;
	if (kctl_conn_pick(c, api, 1, 1) < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, api, 1, 0);
	kaas_kw_array(&w, 0, 1);
	put_filter(&w, b); /* a creation has a filter's fields, all exact */
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("%s: %s", add ? "CreateAcls" : "DeleteAcls", c->why);
	(void)kaas_kr_i32(&r);
	int32_t n = kaas_kr_array(&r, 0, 4);
	int16_t err = n == 1 ? 0 : -1;
	struct kaas_kslice msg = { NULL, -1 };
	int32_t removed = 0;
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		err = kaas_kr_i16(&r);
		msg = kaas_kr_nstr(&r, 0);
		if (add)
			continue;
		int32_t nm = kaas_kr_array(&r, 0, 12);
		for (int32_t j = 0; j < nm && kaas_kr_ok(&r); j++) {
			(void)kaas_kr_i16(&r);
			(void)kaas_kr_nstr(&r, 0);
			(void)kaas_kr_i8(&r);
			(void)kaas_kr_str(&r, 0);
			(void)kaas_kr_i8(&r);
			(void)kaas_kr_str(&r, 0);
			(void)kaas_kr_str(&r, 0);
			(void)kaas_kr_i8(&r);
			(void)kaas_kr_i8(&r);
			removed++;
		}
	}
	int rc = 0;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed answer", c->addr);
	else if (err)
		rc = kctl_admin_kerr(add ? "acl add" : "acl remove", err, &msg);
	free(buf);
	if (rc)
		return rc;
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		if (add)
			cJSON_AddBoolToObject(o, "added", 1);
		else
			cJSON_AddNumberToObject(o, "removed", removed);
		return kctl_json_emit(o);
	}
	if (add)
		printf("added: %s %s %s on %s %s %s\n", NAME(perm_names, b->perm), b->principal,
		       NAME(op_names, b->op), NAME(res_names, b->res), NAME(pat_names, b->pat), b->name);
	else
		printf("removed %d binding(s)\n", (int)removed);
	return 0;
}

int kctl_admin_acl(struct kctl_admin *a, int argc, char **argv)
{
	struct binding b;
	if (argc < 2)
		return usage();
	int list = !strcmp(argv[1], "list"), add = !strcmp(argv[1], "add");
	if (!list && !add && strcmp(argv[1], "remove"))
		return usage();
	if (parse(argc, argv, list, &b))
		return KCTL_EXIT_ERROR;
	return list ? acl_list(a, &b) : acl_change(a, &b, add);
}
