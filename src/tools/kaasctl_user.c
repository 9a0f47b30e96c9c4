/*
 * kaasctl_user.c — `kaasctl user add|list|delete`: the SASL users' SCRAM
 * credentials in the cluster directory (cluster/credential_store.h).  The
 * one kaasctl command that writes: a credential document by kaas_replace,
 * or its removal.  The password is read from stdin (its first line) and
 * only its salted keys are stored; every broker sees the change within a
 * heartbeat.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cluster/credential_store.h"
#include "tools/kaasctl.h"
#include "util/status.h"

#define USAGE                                                                                  \
	"usage: kaasctl user add NAME [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] [--iterations N]\n" \
	"       kaasctl user delete NAME [--mechanism M]\n"                                        \
	"       kaasctl user list\n"                                                               \
	"  add: the password is the first line of stdin (default mechanism SCRAM-SHA-512,\n"     \
	"  iterations 8192)."

/* The password: stdin's first line without its line end. */
static int read_password(char *buf, size_t size)
{
	if (!fgets(buf, (int)size, stdin))
		return kctl_error("user add: no password on stdin");
	size_t n = strcspn(buf, "\r\n");
	if (n == size - 1 && buf[n] == '\0')
		return kctl_error("user add: password longer than %zu bytes", size - 2);
	buf[n] = '\0';
	if (n == 0)
		return kctl_error("user add: empty password");
	return 0;
}

static int user_add(struct kctl *k, const char *name, enum kaas_scram_mech mech,
		    unsigned long iterations)
{
	char pw[1024];
	if (read_password(pw, sizeof(pw)) != 0)
		return KCTL_EXIT_ERROR;
	struct kaas_scram_cred cred = { 0 };
	int rc = kaas_scram_from_password(mech, pw, strlen(pw), (uint32_t)iterations, &cred);
	OPENSSL_cleanse(pw, sizeof(pw));
	if (rc == 0)
		rc = kaas_cred_put(k->cluster, name, &cred);
	OPENSSL_cleanse(&cred, sizeof(cred));
	if (rc < 0)
		return kctl_error("user add %s: %s (%s)", name, kaas_strerror(rc), kaas_sub_errdetail());
	printf("user %s: %s credential stored (%lu iterations)\n", name, kaas_scram_mech_name(mech),
	       iterations);
	return KCTL_EXIT_OK;
}

static int user_delete(struct kctl *k, const char *name, enum kaas_scram_mech only)
{
	int removed = 0;
	for (enum kaas_scram_mech m = KAAS_SCRAM_SHA_256; m <= KAAS_SCRAM_SHA_512; m++) {
		if (only != KAAS_SCRAM_UNKNOWN && m != only)
			continue;
		int rc = kaas_cred_delete(k->cluster, name, m);
		if (rc == -ENOENT)
			continue;
		if (rc < 0)
			return kctl_error("user delete %s: %s (%s)", name, kaas_strerror(rc),
					  kaas_sub_errdetail());
		printf("user %s: %s credential deleted\n", name, kaas_scram_mech_name(m));
		removed++;
	}
	if (!removed)
		return kctl_error("user delete: %s has no such credential", name);
	return KCTL_EXIT_OK;
}

static int list_row(void *arg, const char *user, const struct kaas_scram_cred *cred)
{
	cJSON *arr = arg;
	if (!arr) {
		printf("%-32s %-14s %u\n", user, kaas_scram_mech_name(cred->mech), cred->iterations);
		return 0;
	}
	cJSON *o = cJSON_CreateObject();
	if (!o || kctl_add_text(o, "user", user) < 0 ||
	    !cJSON_AddStringToObject(o, "mechanism", kaas_scram_mech_name(cred->mech)) ||
	    !cJSON_AddNumberToObject(o, "iterations", cred->iterations)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	cJSON_AddItemToArray(arr, o);
	return 0;
}

static int user_list(struct kctl *k)
{
	cJSON *arr = k->json ? cJSON_CreateArray() : NULL;
	if (k->json && !arr)
		return kctl_error("out of memory");
	if (!k->json)
		printf("%-32s %-14s %s\n", "USER", "MECHANISM", "ITERATIONS");
	int rc = kaas_cred_each(k->cluster, list_row, arr);
	if (rc < 0) {
		cJSON_Delete(arr);
		return kctl_error("user list: %s (%s)", kaas_strerror(rc), kaas_sub_errdetail());
	}
	if (!k->json)
		return KCTL_EXIT_OK;
	cJSON *root = cJSON_CreateObject(); /* an object, as every other command's */
	if (root)
		cJSON_AddItemToObject(root, "users", arr);
	else
		cJSON_Delete(arr);
	return kctl_json_emit(root);
}

int kctl_cmd_user(struct kctl *k, int argc, char **argv)
{
	if (argc < 2)
		return kctl_error(USAGE);
	const char *verb = argv[1];
	if (strcmp(verb, "list") == 0 && argc == 2)
		return user_list(k);
	if ((strcmp(verb, "add") != 0 && strcmp(verb, "delete") != 0) || argc < 3)
		return kctl_error(USAGE);
	const char *name = argv[2];
	enum kaas_scram_mech mech = KAAS_SCRAM_UNKNOWN;
	unsigned long iterations = KAAS_SCRAM_DEFAULT_ITERATIONS;
	for (int i = 3; i < argc; i++) {
		if (i + 1 >= argc)
			return kctl_error(USAGE);
		if (strcmp(argv[i], "--mechanism") == 0) {
			mech = kaas_scram_mech_by_name(argv[++i]);
			if (mech == KAAS_SCRAM_UNKNOWN)
				return kctl_error("--mechanism: SCRAM-SHA-256 or SCRAM-SHA-512, not '%s'",
						  argv[i]);
		} else if (strcmp(argv[i], "--iterations") == 0 && verb[0] == 'a') {
			char *e;
			iterations = strtoul(argv[++i], &e, 10);
			if (*e || iterations < KAAS_SCRAM_MIN_ITERATIONS ||
			    iterations > KAAS_SCRAM_MAX_ITERATIONS)
				return kctl_error("--iterations: %d to %d", KAAS_SCRAM_MIN_ITERATIONS,
						  KAAS_SCRAM_MAX_ITERATIONS);
		} else {
			return kctl_error(USAGE);
		}
	}
	if (!*name || strlen(name) > KAAS_CRED_USER_MAX)
		return kctl_error("user name: 1 to %d bytes", KAAS_CRED_USER_MAX);
	if (verb[0] == 'a')
		return user_add(k, name, mech == KAAS_SCRAM_UNKNOWN ? KAAS_SCRAM_SHA_512 : mech,
				iterations);
	return user_delete(k, name, mech);
}
