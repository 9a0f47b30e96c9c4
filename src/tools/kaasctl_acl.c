/* kaasctl_acl.c — `kaasctl acl add|list|remove`: the ACL bindings on the
 * cluster volume (cluster/acl_store.h), so an operator can grant without a
 * Kafka client (the first super user's grants, say).  Brokers pick a change
 * up within a heartbeat interval.
 *
 *   acl add    --principal P (--topic T | --group G | --cluster |
 *              --transactional-id X) --operation OP [--prefixed]
 *              [--host H] [--deny]
 *   acl remove (the same: exactly that binding)
 *   acl list   [--principal P] [--topic T | --group G | --cluster |
 *              --transactional-id X]  (X: the bindings that apply to X) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/acl_store.h"
#include "tools/kaasctl.h"

#define ACL_USAGE                                                                          \
	"usage: kaasctl acl add|remove --principal User:NAME (--topic T | --group G |\n"   \
	"           --cluster | --transactional-id X) --operation OP [--prefixed]\n"     \
	"           [--host H] [--deny]\n"                                                 \
	"       kaasctl acl list [--principal P] [--topic T | --group G | --cluster |\n"   \
	"           --transactional-id X]\n"                                               \
	"OP: all read write create delete alter describe cluster_action describe_configs\n" \
	"    alter_configs idempotent_write\n"

struct acl_args {
	struct kaas_acl a;
	int have_resource, have_op;
};

/* Parse argv[1..] into *x: 0, or KCTL_EXIT_ERROR (printed). */
static int parse(int argc, char **argv, struct acl_args *x)
{
	memset(x, 0, sizeof(*x));
	x->a.pattern_type = KAAS_PAT_LITERAL;
	x->a.permission = KAAS_PERM_ALLOW;
	x->a.host = "*";
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int type = !strcmp(o, "--topic") ? KAAS_RES_TOPIC
			   : !strcmp(o, "--group") ? KAAS_RES_GROUP
			   : !strcmp(o, "--transactional-id") ? KAAS_RES_TRANSACTIONAL_ID : 0;
		if (!strcmp(o, "--prefixed")) {
			x->a.pattern_type = KAAS_PAT_PREFIXED;
		} else if (!strcmp(o, "--deny")) {
			x->a.permission = KAAS_PERM_DENY;
		} else if (!strcmp(o, "--cluster")) {
			x->a.resource_type = KAAS_RES_CLUSTER;
			x->a.name = KAAS_ACL_CLUSTER_NAME;
			x->have_resource = 1;
		} else if (!v) {
			return kctl_error("%s: unknown option or missing value\n%s", o, ACL_USAGE);
		} else if (type) {
			x->a.resource_type = (int8_t)type;
			x->a.name = (char *)v;
			x->have_resource = 1;
			i++;
		} else if (!strcmp(o, "--principal")) {
			x->a.principal = (char *)v;
			i++;
		} else if (!strcmp(o, "--host")) {
			x->a.host = (char *)v;
			i++;
		} else if (!strcmp(o, "--operation")) {
			int op = kaas_acl_op_parse(v);
			if (op < KAAS_OP_ALL)
				return kctl_error("unknown operation '%s'\n%s", v, ACL_USAGE);
			x->a.operation = (int8_t)op;
			x->have_op = 1;
			i++;
		} else {
			return kctl_error("unknown option %s\n%s", o, ACL_USAGE);
		}
	}
	return 0;
}

static void print_binding(const struct kaas_acl *a)
{
	char doc[48];
	kaas_acl_doc_name(a, doc, sizeof doc);
	printf("%-5s %-24s %-16s %-16s %-8s %-24s host %-15s %s\n",
	       kaas_acl_perm_name(a->permission), a->principal, kaas_acl_op_name(a->operation),
	       kaas_acl_resource_name(a->resource_type), kaas_acl_pattern_name(a->pattern_type),
	       a->name, a->host, doc);
}

static cJSON *binding_json(const struct kaas_acl *a)
{
	char doc[48];
	kaas_acl_doc_name(a, doc, sizeof doc);
	cJSON *o = cJSON_CreateObject();
	if (o && (kctl_add_text(o, "principal", a->principal) < 0 ||
		  kctl_add_text(o, "host", a->host) < 0 || kctl_add_text(o, "name", a->name) < 0 ||
		  !cJSON_AddStringToObject(o, "permission", kaas_acl_perm_name(a->permission)) ||
		  !cJSON_AddStringToObject(o, "operation", kaas_acl_op_name(a->operation)) ||
		  !cJSON_AddStringToObject(o, "resource_type",
					   kaas_acl_resource_name(a->resource_type)) ||
		  !cJSON_AddStringToObject(o, "pattern_type",
					   kaas_acl_pattern_name(a->pattern_type)) ||
		  !cJSON_AddStringToObject(o, "document", doc))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int list(struct kctl *k, const struct acl_args *x)
{
	struct kaas_acl_filter f = { KAAS_RES_ANY, KAAS_PAT_ANY, NULL, x->a.principal, NULL,
				     KAAS_OP_ANY, KAAS_PERM_ANY };
	if (x->have_resource) {
		f.resource_type = x->a.resource_type;
		f.pattern_type = KAAS_PAT_MATCH;
		f.name = x->a.name;
	}
	struct kaas_dirlist l;
	int rc = kaas_acl_store_list(k->cluster, &l);
	if (rc < 0)
		return kctl_error("cannot list %s: %s", KAAS_ACLS_DIR, kaas_sub_errdetail());
	cJSON *arr = k->json ? cJSON_CreateArray() : NULL;
	int status = KCTL_EXIT_OK;
	size_t shown = 0;
	for (size_t i = 0; i < l.n; i++) {
		struct kaas_acl a;
		rc = kaas_acl_store_read(k->cluster, l.names[i], &a);
		if (rc == -ENOENT)
			continue;
		if (rc < 0) {
			fprintf(stderr, "kaasctl: %s/%s: %s (brokers refuse everyone but super "
				"users while it is there)\n", KAAS_ACLS_DIR, l.names[i],
				kaas_sub_errdetail());
			status = KCTL_EXIT_CORRUPT;
			continue;
		}
		if (kaas_acl_filter_match(&f, &a)) {
			shown++;
			if (arr)
				cJSON_AddItemToArray(arr, binding_json(&a));
			else
				print_binding(&a);
		}
		kaas_acl_clear(&a);
	}
	kaas_dirlist_free(&l);
	if (!arr && shown == 0)
		printf("no ACL bindings%s\n", x->have_resource || x->a.principal ? " match" : "");
	if (arr) {
		cJSON *root = cJSON_CreateObject();
		if (root)
			cJSON_AddItemToObject(root, "acls", arr);
		else
			cJSON_Delete(arr);
		rc = kctl_json_emit(root);
		if (rc)
			return rc;
	}
	return status;
}

int kctl_cmd_acl(struct kctl *k, int argc, char **argv)
{
	if (argc < 2)
		return kctl_error("acl: a subcommand is needed\n%s", ACL_USAGE);
	struct acl_args x;
	int rc = parse(argc - 1, argv + 1, &x);
	if (rc)
		return rc;
	if (!strcmp(argv[1], "list"))
		return list(k, &x);
	int add = !strcmp(argv[1], "add");
	if (!add && strcmp(argv[1], "remove") != 0)
		return kctl_error("acl: unknown subcommand '%s'\n%s", argv[1], ACL_USAGE);
	if (!x.a.principal || !x.have_resource || !x.have_op)
		return kctl_error("acl %s: --principal, a resource and --operation are needed\n%s",
				  argv[1], ACL_USAGE);
	const char *why = kaas_acl_invalid(&x.a);
	if (why)
		return kctl_error("acl %s: %s", argv[1], why);
	rc = add ? kaas_acl_store_add(k->cluster, &x.a) : kaas_acl_store_remove(k->cluster, &x.a);
	if (rc < 0)
		return kctl_error("acl %s: %s", argv[1], kaas_sub_errdetail());
	printf("%s: ", add ? "added" : "removed (or was absent)");
	print_binding(&x.a);
	return KCTL_EXIT_OK;
}
