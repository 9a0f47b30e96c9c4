/* kaasctl_admin_user.c — `kaasctl --bootstrap HOST:PORT user list|add|
 * delete`: SASL/SCRAM users through the Kafka protocol
 * (DescribeUserScramCredentials, AlterUserScramCredentials), what
 * kafka-configs --alter --add-config SCRAM-SHA-512=[...] --entity-type
 * users does.  add reads the password from stdin's first line and sends
 * only a fresh salt, the iterations and SaltedPassword (PBKDF2 here). */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/scram.h"
#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"

static int usage(void)
{
	fputs("usage: kaasctl --bootstrap HOST:PORT user list\n"
	      "       kaasctl --bootstrap HOST:PORT user add NAME [--mechanism SCRAM-SHA-256|"
	      "SCRAM-SHA-512] [--iterations N]\n"
	      "       kaasctl --bootstrap HOST:PORT user delete NAME [--mechanism M]\n", stderr);
	return KCTL_EXIT_ERROR;
}

/* DescribeUserScramCredentials for user (NULL: every user) into arr:
 * [{user, mechanism, iterations}]. */
static int describe(struct kctl_conn *c, const char *user, cJSON *arr)
{
	if (kctl_conn_pick(c, KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0) < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 1);
	kaas_kw_array(&w, 1, user ? 1 : -1);
	if (user) {
		kaas_kw_str(&w, 1, user);
		kaas_kw_tags(&w, 1);
	}
	kaas_kw_tags(&w, 1);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 1, &buf, &r) < 0)
		return kctl_error("DescribeUserScramCredentials: %s", c->why);
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	struct kaas_kslice msg = kaas_kr_nstr(&r, 1);
	int rc = 0;
	int32_t n = kaas_kr_array(&r, 1, 5);
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		char *name = kaas_kslice_dup(kaas_kr_str(&r, 1));
		int16_t uerr = kaas_kr_i16(&r);
		struct kaas_kslice umsg = kaas_kr_nstr(&r, 1);
		int32_t nc = kaas_kr_array(&r, 1, 6);
		for (int32_t j = 0; j < nc && kaas_kr_ok(&r); j++) {
			int8_t m = kaas_kr_i8(&r);
			int32_t it = kaas_kr_i32(&r);
			kaas_kr_tags(&r, 1);
			const char *mn = kaas_scram_mech_name((enum kaas_scram_mech)m);
			cJSON *o = cJSON_CreateObject();
			kctl_add_text(o, "user", name ? name : "");
			cJSON_AddStringToObject(o, "mechanism", mn ? mn : "unknown");
			cJSON_AddNumberToObject(o, "iterations", it);
			cJSON_AddItemToArray(arr, o);
		}
		kaas_kr_tags(&r, 1);
		if (uerr && rc == 0) {
			char what[400];
			snprintf(what, sizeof what, "user %s", name ? name : "?");
			rc = kctl_admin_kerr(what, uerr, &umsg);
		}
		free(name);
	}
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed DescribeUserScramCredentials answer", c->addr);
	else if (err && rc == 0)
		rc = kctl_admin_kerr("DescribeUserScramCredentials", err, &msg);
	free(buf);
	return rc;
}

/* One AlterUserScramCredentials: a deletion (password NULL) or an upsert. */
static int alter(struct kctl_conn *c, const char *user, enum kaas_scram_mech m,
		 const char *password, int32_t iterations)
{
	uint8_t salt[KAAS_SCRAM_SALT_LEN], salted[KAAS_SCRAM_KEY_MAX];
	size_t kl = kaas_scram_key_len(m);
	if (kctl_conn_pick(c, KAAS_API_ALTER_USER_SCRAM_CREDENTIALS, 0, 0) < 0)
		return kctl_error("%s", c->why);
	if (password &&
	    (kaas_scram_random(salt, sizeof salt) < 0 ||
	     PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)sizeof salt, iterations,
			       m == KAAS_SCRAM_SHA_256 ? EVP_sha256() : EVP_sha512(), (int)kl,
			       salted) != 1))
		return kctl_error("user add: libcrypto failed");
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_ALTER_USER_SCRAM_CREDENTIALS, 0, 1);
	kaas_kw_array(&w, 1, password ? 0 : 1); /* deletions */
	if (!password) {
		kaas_kw_str(&w, 1, user);
		kaas_kw_i8(&w, (int8_t)m);
		kaas_kw_tags(&w, 1);
	}
	kaas_kw_array(&w, 1, password ? 1 : 0); /* upsertions */
	if (password) {
		kaas_kw_str(&w, 1, user);
		kaas_kw_i8(&w, (int8_t)m);
		kaas_kw_i32(&w, iterations);
		kaas_kw_bytes(&w, 1, salt, (int32_t)sizeof salt);
		kaas_kw_bytes(&w, 1, salted, (int32_t)kl);
		kaas_kw_tags(&w, 1);
	}
	kaas_kw_tags(&w, 1);
	OPENSSL_cleanse(salted, sizeof salted);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 1, &buf, &r) < 0)
		return kctl_error("AlterUserScramCredentials: %s", c->why);
	(void)kaas_kr_i32(&r);
	int32_t n = kaas_kr_array(&r, 1, 4);
	int16_t err = n == 1 ? 0 : -1;
	struct kaas_kslice msg = { NULL, -1 };
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		(void)kaas_kr_str(&r, 1);
		err = kaas_kr_i16(&r);
		msg = kaas_kr_nstr(&r, 1);
		kaas_kr_tags(&r, 1);
	}
	int rc = 0;
	char what[400];
	snprintf(what, sizeof what, "user %s %s", password ? "add" : "delete", user);
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed AlterUserScramCredentials answer", c->addr);
	else if (err)
		rc = kctl_admin_kerr(what, err, &msg);
	free(buf);
	return rc;
}

static int user_list(struct kctl_admin *a)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "users");
	int rc = describe(&a->boot, NULL, arr);
	if (rc == 0 && a->json)
		return kctl_json_emit(root);
	if (rc == 0) {
		printf("%-32s %-14s %s\n", "USER", "MECHANISM", "ITERATIONS");
		const cJSON *x;
		cJSON_ArrayForEach(x, arr)
			printf("%-32s %-14s %.0f\n",
			       cJSON_GetObjectItemCaseSensitive(x, "user")->valuestring,
			       cJSON_GetObjectItemCaseSensitive(x, "mechanism")->valuestring,
			       cJSON_GetObjectItemCaseSensitive(x, "iterations")->valuedouble);
	}
	cJSON_Delete(root);
	return rc;
}

int kctl_admin_user(struct kctl_admin *a, int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "list"))
		return user_list(a);
	if (argc < 3 || (strcmp(argv[1], "add") && strcmp(argv[1], "delete")) || argv[2][0] == '-')
		return usage();
	int add = !strcmp(argv[1], "add");
	const char *user = argv[2];
	enum kaas_scram_mech m = add ? KAAS_SCRAM_SHA_512 : KAAS_SCRAM_UNKNOWN;
	long iterations = KAAS_SCRAM_DEFAULT_ITERATIONS;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--mechanism") && i + 1 < argc) {
			m = kaas_scram_mech_by_name(argv[++i]);
			if (m == KAAS_SCRAM_UNKNOWN)
				return kctl_error("unknown mechanism '%s'", argv[i]);
		} else if (add && !strcmp(argv[i], "--iterations") && i + 1 < argc) {
			char *e;
			errno = 0;
			iterations = strtol(argv[++i], &e, 10);
			if (errno || *e || iterations < KAAS_SCRAM_MIN_ITERATIONS ||
			    iterations > KAAS_SCRAM_MAX_ITERATIONS)
				return kctl_error("--iterations must be %d to %d", KAAS_SCRAM_MIN_ITERATIONS,
						  KAAS_SCRAM_MAX_ITERATIONS);
		} else {
			return usage();
		}
	}
	int rc = 0;
	if (add) {
		char pw[1024];
		if (!fgets(pw, sizeof pw, stdin))
			return kctl_error("user add: no password on stdin");
		pw[strcspn(pw, "\r\n")] = '\0';
		if (!pw[0])
			return kctl_error("user add: an empty password");
		rc = alter(&a->boot, user, m, pw, (int32_t)iterations);
		OPENSSL_cleanse(pw, sizeof pw);
	} else if (m != KAAS_SCRAM_UNKNOWN) {
		rc = alter(&a->boot, user, m, NULL, 0);
	} else { /* every mechanism the user has */
		cJSON *arr = cJSON_CreateArray();
		rc = describe(&a->boot, user, arr);
		const cJSON *x;
		cJSON_ArrayForEach(x, arr) {
			if (rc)
				break;
			rc = alter(&a->boot, user, kaas_scram_mech_by_name(cJSON_GetObjectItemCaseSensitive(
							   x, "mechanism")->valuestring), NULL, 0);
		}
		cJSON_Delete(arr);
	}
	if (rc)
		return rc;
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, add ? "added" : "deleted", user);
		return kctl_json_emit(o);
	}
	printf("user %s: %s\n", user, add ? "credential stored" : "credentials deleted");
	return 0;
}
