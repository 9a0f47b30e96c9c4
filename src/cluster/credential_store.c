/* credential_store.c — SCRAM credentials as documents on the cluster
 * volume.  See credential_store.h. */
#include "cluster/credential_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/group_store.h"
#include "contract/contract.h"
#include "contract/doc.h"
#include "util/logger.h"

#define DOC_KIND "scram-credential"
#define DOC_VERSION 1

static const enum kaas_scram_mech mechs[] = { KAAS_SCRAM_SHA_256, KAAS_SCRAM_SHA_512 };

static int user_ok(const char *user)
{
	size_t n = strlen(user);
	return n > 0 && n <= KAAS_CRED_USER_MAX;
}

/* The directory of a mechanism's documents. */
static int mech_dir(enum kaas_scram_mech mech, char *out, size_t size)
{
	const char *name = kaas_scram_mech_name(mech);
	if (!name)
		return -EINVAL;
	snprintf(out, size, KAAS_CRED_DIR "/%s", name);
	return 0;
}

static int cred_path(const char *user, enum kaas_scram_mech mech, char *out, size_t size)
{
	char dir[64], enc[256];
	if (!user_ok(user))
		return -EINVAL;
	int rc = mech_dir(mech, dir, sizeof(dir));
	if (rc == 0)
		rc = kaas_group_dirname(user, enc, sizeof(enc));
	if (rc < 0)
		return rc;
	snprintf(out, size, "%s/%s.json", dir, enc);
	return 0;
}

static int add_b64(cJSON *o, const char *name, const uint8_t *p, size_t n)
{
	char b[2 * KAAS_SCRAM_SALT_MAX + 8];
	if (kaas_b64_encode(p, n, b, sizeof(b)) < 0 || !cJSON_AddStringToObject(o, name, b))
		return -ENOMEM;
	return 0;
}

int kaas_cred_put(struct kaas_substrate *cluster, const char *user,
		  const struct kaas_scram_cred *cred)
{
	char path[512], dir[64];
	size_t klen = kaas_scram_key_len(cred->mech);
	int rc = cred_path(user, cred->mech, path, sizeof(path));
	if (rc < 0)
		return rc;
	if (cred->salt_len == 0 || cred->salt_len > KAAS_SCRAM_SALT_MAX)
		return -EINVAL;
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "user", user) ||
	    !cJSON_AddStringToObject(o, "mechanism", kaas_scram_mech_name(cred->mech)) ||
	    add_b64(o, "salt", cred->salt, cred->salt_len) < 0 ||
	    kaas_json_add_u64(o, "iterations", cred->iterations) < 0 ||
	    add_b64(o, "stored_key", cred->stored_key, klen) < 0 ||
	    add_b64(o, "server_key", cred->server_key, klen) < 0) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	(void)mech_dir(cred->mech, dir, sizeof(dir));
	/* Secrets: the directories 0700, the documents 0600 (issue 35). */
	rc = kaas_sub_mkdirs(cluster, dir, KAAS_SECRET_DIR_MODE);
	if (rc == 0 || rc == -EEXIST)
		rc = kaas_doc_write_mode(cluster, path, DOC_KIND, DOC_VERSION, o,
					 KAAS_SECRET_FILE_MODE);
	cJSON_Delete(o);
	return rc;
}

/* A base64 member of exactly `want` bytes (0: 1..max). */
static int get_b64(const cJSON *o, const char *name, uint8_t *out, size_t max, size_t want,
		   size_t *got)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!cJSON_IsString(s))
		return -EBADMSG;
	int n = kaas_b64_decode(s->valuestring, strlen(s->valuestring), out, max);
	if (n <= 0 || (want && (size_t)n != want))
		return -EBADMSG;
	if (got)
		*got = (size_t)n;
	return 0;
}

/* The credential in a document's body, for `user` (NULL: any) and `mech`
 * (UNKNOWN: the one named).  *name points into body. */
static int parse_body(const cJSON *body, const char *user, enum kaas_scram_mech mech,
		      struct kaas_scram_cred *cred, const char **name)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(body, "user");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(body, "mechanism");
	uint64_t it = 0;
	if (!cJSON_IsString(u) || !cJSON_IsString(m) ||
	    kaas_json_get_u64(body, "iterations", &it) < 0 || it < 1 || it > UINT32_MAX)
		return -EBADMSG;
	memset(cred, 0, sizeof(*cred));
	cred->mech = kaas_scram_mech_by_name(m->valuestring);
	if (cred->mech == KAAS_SCRAM_UNKNOWN || (mech != KAAS_SCRAM_UNKNOWN && cred->mech != mech))
		return -EBADMSG;
	if (user && strcmp(u->valuestring, user) != 0)
		return -ENOENT; /* another name with the same cut encoding */
	cred->iterations = (uint32_t)it;
	size_t klen = kaas_scram_key_len(cred->mech);
	if (get_b64(body, "salt", cred->salt, sizeof(cred->salt), 0, &cred->salt_len) < 0 ||
	    get_b64(body, "stored_key", cred->stored_key, sizeof(cred->stored_key), klen, NULL) < 0 ||
	    get_b64(body, "server_key", cred->server_key, sizeof(cred->server_key), klen, NULL) < 0)
		return -EBADMSG;
	*name = u->valuestring;
	return 0;
}

int kaas_cred_get(struct kaas_substrate *cluster, const char *user, enum kaas_scram_mech mech,
		  struct kaas_scram_cred *cred)
{
	char path[512];
	int rc = cred_path(user, mech, path, sizeof(path));
	if (rc < 0)
		return rc;
	cJSON *body = NULL;
	int version;
	rc = kaas_doc_read(cluster, path, DOC_KIND, DOC_VERSION, &body, &version);
	if (rc < 0)
		return rc;
	const char *name;
	rc = parse_body(body, user, mech, cred, &name);
	if (rc == -EBADMSG)
		kaas_sub_fail(EBADMSG, "%s: not a valid SCRAM credential", path);
	cJSON_Delete(body);
	return rc;
}

int kaas_cred_delete(struct kaas_substrate *cluster, const char *user, enum kaas_scram_mech mech)
{
	char path[512];
	struct kaas_scram_cred cur;
	/* Only a document that is this user's (not another name cut to the
	 * same encoding). */
	int rc = kaas_cred_get(cluster, user, mech, &cur);
	if (rc < 0 && rc != -EBADMSG)
		return rc;
	rc = cred_path(user, mech, path, sizeof(path));
	if (rc == 0)
		rc = kaas_sub_unlink(cluster, path);
	return rc;
}

int kaas_cred_each(struct kaas_substrate *cluster, kaas_cred_each_fn cb, void *arg)
{
	for (size_t i = 0; i < sizeof(mechs) / sizeof(mechs[0]); i++) {
		char dir[64], path[512];
		(void)mech_dir(mechs[i], dir, sizeof(dir));
		struct kaas_dirlist l;
		int rc = kaas_sub_list(cluster, dir, &l);
		if (rc == -ENOENT)
			continue;
		if (rc < 0)
			return rc;
		for (size_t j = 0; rc == 0 && j < l.n; j++) {
			size_t n = strlen(l.names[j]);
			if (kaas_is_temp_name(l.names[j]) || kaas_is_excl_name(l.names[j]) || n < 6 ||
			    strcmp(l.names[j] + n - 5, ".json") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, l.names[j]);
			cJSON *body = NULL;
			int version;
			rc = kaas_doc_read(cluster, path, DOC_KIND, DOC_VERSION, &body, &version);
			if (rc == -ENOENT) {
				rc = 0; /* removed meanwhile */
				continue;
			}
			struct kaas_scram_cred cred;
			const char *name = NULL;
			if (rc == 0 && (rc = parse_body(body, NULL, mechs[i], &cred, &name)) < 0)
				kaas_sub_fail(-rc, "%s: not a valid SCRAM credential", path);
			if (rc == -EBADMSG || rc == -EPROTO) {
				kaas_warn("credentials: skipping %s: %s", path, kaas_sub_errdetail());
				rc = 0;
			} else if (rc == 0) {
				rc = cb(arg, name, &cred);
			}
			cJSON_Delete(body);
		}
		kaas_dirlist_free(&l);
		if (rc != 0)
			return rc;
	}
	return 0;
}
