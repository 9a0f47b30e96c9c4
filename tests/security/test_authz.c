/* The authorizer (issue 17): every served API has an entry in the
 * authorization table (an API without one fails closed), the ACL store's
 * documents (content-named, idempotent add, convergent remove, a corrupt
 * one refuses everyone but super users), and Kafka's decision rules:
 * deny wins, implied operations, literal/prefixed/"*" patterns, "User:*",
 * hosts, super.users, allow.everyone.if.no.acl.found and its default. */
#include "tests/unit/unit.h"

#include <errno.h>

#include "broker/authorizer.h"
#include "broker/config.h"
#include "cluster/acl_store.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"

static void every_served_api_has_an_entry(void **state)
{
	(void)state;
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++) {
		if (!kaas_authz_api_find(a->key))
			fail_msg("API %s (%d) has no entry in src/kafka/authz_table.c", a->name, a->key);
	}
	assert_null(kaas_authz_api_find(9999));
}

static struct kaas_acl binding(int type, int pattern, const char *name, const char *who,
			       const char *host, int op, int perm)
{
	return (struct kaas_acl){ (int8_t)type, (int8_t)pattern, (char *)name, (char *)who,
				  (char *)host, (int8_t)op, (int8_t)perm };
}

static void config(struct kaas_config *c, enum kaas_sec_protocol proto, const char *supers)
{
	memset(c, 0, sizeof(*c));
	c->heartbeat_ms = 50;
	c->sec.n = 1;
	c->sec.l[0].protocol = proto;
	c->authz.super_users = (char *)supers;
}

#define ALLOWED(az, who, host, op, type, name) \
	kaas_authz_allowed(az, who, host, op, type, name, strlen(name))

static void rules(void **state)
{
	(void)state;
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_config cfg;
	config(&cfg, KAAS_SEC_SSL, "User:root; User:CN=ops,O=x");
	struct kaas_authz *az;
	assert_int_equal(kaas_authz_new(s, &cfg, &az), 0);
	/* No binding at all, SSL listener: allow.everyone.if.no.acl.found is false. */
	assert_false(ALLOWED(az, "User:a", "1.2.3.4", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	assert_true(ALLOWED(az, "User:root", "1.2.3.4", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	assert_true(ALLOWED(az, "User:CN=ops,O=x", "h", KAAS_OP_ALTER, KAAS_RES_CLUSTER,
			    KAAS_ACL_CLUSTER_NAME));

	struct kaas_acl adds[] = {
		binding(KAAS_RES_TOPIC, KAAS_PAT_LITERAL, "t", "User:a", "*", KAAS_OP_READ,
			KAAS_PERM_ALLOW),
		binding(KAAS_RES_TOPIC, KAAS_PAT_LITERAL, "t", "User:a", "10.0.0.9", KAAS_OP_READ,
			KAAS_PERM_DENY),
		binding(KAAS_RES_TOPIC, KAAS_PAT_PREFIXED, "logs.", "User:*", "*", KAAS_OP_WRITE,
			KAAS_PERM_ALLOW),
		binding(KAAS_RES_TOPIC, KAAS_PAT_LITERAL, "cfg", "User:b", "*",
			KAAS_OP_ALTER_CONFIGS, KAAS_PERM_ALLOW),
		binding(KAAS_RES_GROUP, KAAS_PAT_LITERAL, "*", "User:b", "*", KAAS_OP_ALL,
			KAAS_PERM_ALLOW),
		binding(KAAS_RES_GROUP, KAAS_PAT_LITERAL, "secret", "User:b", "*", KAAS_OP_DELETE,
			KAAS_PERM_DENY),
	};
	for (size_t i = 0; i < sizeof adds / sizeof adds[0]; i++) {
		assert_int_equal(kaas_acl_store_add(s, &adds[i]), 0);
		assert_int_equal(kaas_acl_store_add(s, &adds[i]), 0); /* idempotent */
	}
	struct kaas_dirlist l;
	assert_int_equal(kaas_acl_store_list(s, &l), 0);
	assert_int_equal(l.n, 6);
	kaas_dirlist_free(&l);
	assert_int_equal(kaas_authz_refresh(az), 0);

	/* Literal, implied DESCRIBE, host-specific deny wins. */
	assert_true(ALLOWED(az, "User:a", "1.2.3.4", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	assert_true(ALLOWED(az, "User:a", "1.2.3.4", KAAS_OP_DESCRIBE, KAAS_RES_TOPIC, "t"));
	assert_false(ALLOWED(az, "User:a", "1.2.3.4", KAAS_OP_WRITE, KAAS_RES_TOPIC, "t"));
	assert_false(ALLOWED(az, "User:a", "10.0.0.9", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	/* A deny of READ does not deny DESCRIBE (only the operation or ALL). */
	assert_true(ALLOWED(az, "User:a", "10.0.0.9", KAAS_OP_DESCRIBE, KAAS_RES_TOPIC, "t"));
	assert_false(ALLOWED(az, "User:c", "1.2.3.4", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	/* Prefixed, any principal. */
	assert_true(ALLOWED(az, "User:z", "h", KAAS_OP_WRITE, KAAS_RES_TOPIC, "logs.app"));
	assert_false(ALLOWED(az, "User:z", "h", KAAS_OP_WRITE, KAAS_RES_TOPIC, "logs"));
	assert_false(ALLOWED(az, "User:z", "h", KAAS_OP_READ, KAAS_RES_TOPIC, "logs.app"));
	/* DESCRIBE_CONFIGS implied by ALTER_CONFIGS, not DESCRIBE. */
	assert_true(ALLOWED(az, "User:b", "h", KAAS_OP_DESCRIBE_CONFIGS, KAAS_RES_TOPIC, "cfg"));
	assert_false(ALLOWED(az, "User:b", "h", KAAS_OP_DESCRIBE, KAAS_RES_TOPIC, "cfg"));
	/* "*" literal with ALL; a literal deny on one group wins. */
	assert_true(ALLOWED(az, "User:b", "h", KAAS_OP_DELETE, KAAS_RES_GROUP, "g1"));
	assert_false(ALLOWED(az, "User:b", "h", KAAS_OP_DELETE, KAAS_RES_GROUP, "secret"));
	assert_true(ALLOWED(az, "User:b", "h", KAAS_OP_READ, KAAS_RES_GROUP, "secret"));
	/* Some topic to WRITE (idempotent InitProducerId). */
	assert_true(kaas_authz_allowed_any(az, "User:q", "h", KAAS_OP_WRITE, KAAS_RES_TOPIC));
	assert_false(kaas_authz_allowed_any(az, "User:q", "h", KAAS_OP_READ, KAAS_RES_TOPIC));

	/* Remove: convergent, and the decision follows after a refresh. */
	assert_int_equal(kaas_acl_store_remove(s, &adds[1]), 0);
	assert_int_equal(kaas_acl_store_remove(s, &adds[1]), 0);
	assert_int_equal(kaas_authz_refresh(az), 0);
	assert_true(ALLOWED(az, "User:a", "10.0.0.9", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));

	/* A corrupt document: everyone but super users refused until removed. */
	char name[48], path[64];
	kaas_acl_doc_name(&adds[0], name, sizeof name);
	snprintf(path, sizeof path, "%s/%s", KAAS_ACLS_DIR, name);
	unit_put(s, path, "garbage");
	struct kaas_authz *az2;
	assert_int_equal(kaas_authz_new(s, &cfg, &az2), 0);
	assert_false(ALLOWED(az2, "User:a", "1.2.3.4", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	assert_true(ALLOWED(az2, "User:root", "1.2.3.4", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	assert_int_equal(kaas_acl_store_remove(s, &adds[0]), 0);
	assert_int_equal(kaas_authz_refresh(az2), 0);
	assert_true(ALLOWED(az2, "User:z", "h", KAAS_OP_WRITE, KAAS_RES_TOPIC, "logs.x"));
	kaas_authz_free(az2);
	kaas_authz_free(az);

	/* PLAINTEXT only: allow.everyone.if.no.acl.found defaults to true (for
	 * resources without bindings), and the key overrides it. */
	config(&cfg, KAAS_SEC_PLAINTEXT, NULL);
	assert_int_equal(kaas_authz_new(s, &cfg, &az), 0);
	assert_true(ALLOWED(az, "User:ANONYMOUS", "h", KAAS_OP_DELETE, KAAS_RES_TOPIC, "free"));
	assert_false(ALLOWED(az, "User:ANONYMOUS", "h", KAAS_OP_READ, KAAS_RES_TOPIC, "cfg"));
	kaas_authz_free(az);
	cfg.authz.allow_if_no_acl_set = 1;
	cfg.authz.allow_if_no_acl = 0;
	assert_int_equal(kaas_authz_new(s, &cfg, &az), 0);
	assert_false(ALLOWED(az, "User:ANONYMOUS", "h", KAAS_OP_DELETE, KAAS_RES_TOPIC, "free"));
	kaas_authz_free(az);
	/* authorizer.class.name empty: off. */
	cfg.authz.disabled = 1;
	assert_int_equal(kaas_authz_new(s, &cfg, &az), 0);
	assert_false(kaas_authz_enabled(az));
	assert_true(ALLOWED(az, "User:c", "h", KAAS_OP_READ, KAAS_RES_TOPIC, "t"));
	kaas_authz_free(az);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void invalid_bindings(void **state)
{
	(void)state;
	struct kaas_acl a = binding(KAAS_RES_TOPIC, KAAS_PAT_MATCH, "t", "User:a", "*",
				    KAAS_OP_READ, KAAS_PERM_ALLOW);
	assert_non_null(kaas_acl_invalid(&a));
	a.pattern_type = KAAS_PAT_LITERAL;
	assert_null(kaas_acl_invalid(&a));
	a.principal = "alice";
	assert_non_null(kaas_acl_invalid(&a));
	a.principal = "User:a";
	a.operation = KAAS_OP_ANY;
	assert_non_null(kaas_acl_invalid(&a));
	a.operation = KAAS_OP_READ;
	a.resource_type = KAAS_RES_CLUSTER;
	assert_non_null(kaas_acl_invalid(&a)); /* the cluster is "kafka-cluster" */
	assert_int_equal(kaas_acl_op_parse("Idempotent-Write"), KAAS_OP_IDEMPOTENT_WRITE);
	assert_int_equal(kaas_acl_resource_parse("transactional_id"), KAAS_RES_TRANSACTIONAL_ID);
	assert_int_equal(kaas_acl_perm_parse("nope"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_served_api_has_an_entry),
		cmocka_unit_test(rules),
		cmocka_unit_test(invalid_bindings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
