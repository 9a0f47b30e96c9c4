/*
 * api_scram_users.c — DescribeUserScramCredentials v0 and
 * AlterUserScramCredentials v0 (both flexible), over the credential
 * documents on the cluster volume (cluster/credential_store.h).  Work
 * pool.  A client sends SaltedPassword, salt and iterations; the broker
 * keeps StoredKey and ServerKey only.  Answers: one result per user named,
 * RESOURCE_NOT_FOUND for a credential that does not exist,
 * DUPLICATE_RESOURCE for a user named twice (Describe) or twice for one
 * mechanism (Alter), UNSUPPORTED_SASL_MECHANISM, UNACCEPTABLE_CREDENTIAL
 * (iterations outside [4096, 16384], an empty name or salt).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "broker/broker.h"
#include "broker/credentials.h"
#include "cluster/credential_store.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/logger.h"
#include "util/status.h"
#include "util/grow.h"

/* ---------------------------------------------------------- Describe */

struct user_row {
	char *name;
	int16_t err;
	const char *msg;
	int32_t iterations[3];     /* by enum kaas_scram_mech; 0: none */
};

struct rows {
	struct user_row *r;
	size_t n, cap;
};

static struct user_row *row_for(struct rows *rs, const char *name, int add)
{
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->r[i].name, name) == 0)
			return &rs->r[i];
	if (!add)
		return NULL;
	struct user_row *grown = kaas_grow(rs->r, &rs->cap, rs->n, sizeof(*grown), 16);
	if (!grown)
		return NULL;
	rs->r = grown;
	struct user_row *u = &rs->r[rs->n];
	memset(u, 0, sizeof(*u));
	u->name = strdup(name);
	if (!u->name)
		return NULL;
	rs->n++;
	return u;
}

static void rows_free(struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].name);
	free(rs->r);
}

static int collect(void *arg, const char *user, const struct kaas_scram_cred *cred)
{
	struct user_row *u = row_for(arg, user, 1);
	if (!u)
		return -ENOMEM;
	u->iterations[cred->mech] = (int32_t)cred->iterations;
	return 0;
}

int kaas_api_describe_user_scram_credentials(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct rows rs = { 0 };
	/* ACLs: DESCRIBE on the cluster, else nothing is read */
	int denied = !kaas_req_allowed_cluster(req, KAAS_OP_DESCRIBE);
	int32_t n = kaas_kr_array(r, f, 2);
	int rc = 0;
	for (int32_t i = 0; i < n && kaas_kr_ok(r) && rc == 0; i++) {
		char *name = kaas_kslice_dup(kaas_kr_str(r, f));
		kaas_kr_tags(r, f);
		if (!name || !kaas_kr_ok(r)) {
			free(name);
			break;
		}
		struct user_row *u = row_for(&rs, name, 0);
		if (u) {
			u->err = KAAS_KERR_DUPLICATE_RESOURCE;
			u->msg = "Cannot describe SCRAM credentials for the same user twice in a single request";
		} else if (!(u = row_for(&rs, name, 1))) {
			rc = -ENOMEM;
		} else if (!denied) {
			for (enum kaas_scram_mech m = KAAS_SCRAM_SHA_256; m <= KAAS_SCRAM_SHA_512; m++) {
				struct kaas_scram_cred cred;
				int g = kaas_cred_get(req->broker->cluster, name, m, &cred);
				if (g == 0)
					u->iterations[m] = (int32_t)cred.iterations;
				else if (g != -ENOENT && !u->err) {
					u->err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
					u->msg = "the credentials could not be read from the volume";
				}
				OPENSSL_cleanse(&cred, sizeof(cred));
			}
			if (!u->err && !u->iterations[1] && !u->iterations[2]) {
				u->err = KAAS_KERR_RESOURCE_NOT_FOUND;
				u->msg = "Attempt to describe a user credential that does not exist";
			}
		}
		free(name);
	}
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r)) {
		rows_free(&rs);
		return KAAS_REQ_CLOSE;
	}
	int16_t top = KAAS_KERR_NONE;
	if (rc == 0 && n <= 0 && !denied) /* null or empty: every user with a credential */
		rc = kaas_cred_each(req->broker->cluster, collect, &rs);
	if (rc < 0) {
		kaas_warn("DescribeUserScramCredentials: %s (%s)", kaas_strerror(rc), kaas_sub_errdetail());
		top = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
	if (denied)
		top = KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
	kaas_kw_i32(w, 0); /* throttle_time_ms */
	kaas_kw_i16(w, top);
	kaas_kw_str(w, f, denied ? "not authorized to DESCRIBE the cluster"
			  : top ? "the credentials could not be listed" : NULL);
	kaas_kw_array(w, f, top ? 0 : (int32_t)rs.n);
	for (size_t i = 0; !top && i < rs.n; i++) {
		struct user_row *u = &rs.r[i];
		kaas_kw_str(w, f, u->name);
		kaas_kw_i16(w, u->err);
		kaas_kw_str(w, f, u->err ? u->msg : NULL);
		int k = u->err ? 0 : (u->iterations[1] != 0) + (u->iterations[2] != 0);
		kaas_kw_array(w, f, k);
		for (int m = 1; !u->err && m <= 2; m++)
			if (u->iterations[m]) {
				kaas_kw_i8(w, (int8_t)m);
				kaas_kw_i32(w, u->iterations[m]);
				kaas_kw_tags(w, f);
			}
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	rows_free(&rs);
	return KAAS_REQ_RESPOND;
}

/* ------------------------------------------------------------- Alter */

struct change {
	char *user;
	int8_t mech;
	int upsert;
	int32_t iterations;
	struct kaas_kslice salt, salted;
};

/* The error of one change before it is made (0: none). */
static int16_t check_change(const struct change *c, const char **msg)
{
	if (!c->user[0]) {
		*msg = "Username must not be empty";
		return KAAS_KERR_UNACCEPTABLE_CREDENTIAL;
	}
	if (strlen(c->user) > KAAS_CRED_USER_MAX) {
		*msg = "Username is too long";
		return KAAS_KERR_UNACCEPTABLE_CREDENTIAL;
	}
	if (!kaas_scram_mech_name((enum kaas_scram_mech)c->mech)) {
		*msg = "Unknown SCRAM mechanism";
		return KAAS_KERR_UNSUPPORTED_SASL_MECHANISM;
	}
	if (!c->upsert)
		return 0;
	if (c->iterations < KAAS_SCRAM_MIN_ITERATIONS || c->iterations > KAAS_SCRAM_MAX_ITERATIONS) {
		*msg = "Iterations must be between 4096 and 16384";
		return KAAS_KERR_UNACCEPTABLE_CREDENTIAL;
	}
	if (c->salt.len <= 0 || c->salt.len > KAAS_SCRAM_SALT_MAX ||
	    (size_t)c->salted.len != kaas_scram_key_len((enum kaas_scram_mech)c->mech)) {
		*msg = "Salt or salted password of the wrong size";
		return KAAS_KERR_UNACCEPTABLE_CREDENTIAL;
	}
	return 0;
}

/* Make one change on the volume: a Kafka error code. */
static int16_t apply_change(struct kaas_broker *b, const struct change *c, const char **msg)
{
	enum kaas_scram_mech m = (enum kaas_scram_mech)c->mech;
	int rc;
	if (c->upsert) {
		struct kaas_scram_cred cred = { .mech = m, .iterations = (uint32_t)c->iterations,
						.salt_len = (size_t)c->salt.len };
		memcpy(cred.salt, c->salt.p, cred.salt_len);
		rc = kaas_scram_from_salted(c->salted.p, (size_t)c->salted.len, &cred);
		if (rc == 0)
			rc = kaas_cred_put(b->cluster, c->user, &cred);
		OPENSSL_cleanse(&cred, sizeof(cred));
	} else {
		rc = kaas_cred_delete(b->cluster, c->user, m);
		if (rc == -ENOENT) {
			*msg = "Attempt to delete a user credential that does not exist";
			return KAAS_KERR_RESOURCE_NOT_FOUND;
		}
	}
	if (b->creds)
		kaas_creds_forget(b->creds, c->user);
	if (rc < 0) {
		kaas_warn("AlterUserScramCredentials: user '%s': %s (%s)", c->user, kaas_strerror(rc),
			  kaas_sub_errdetail());
		*msg = "the credential could not be written to the volume";
		return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
	kaas_info("sasl: %s the %s credential of user '%s'", c->upsert ? "stored" : "deleted",
		  kaas_scram_mech_name(m), c->user);
	return 0;
}

int kaas_api_alter_user_scram_credentials(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct change *ch = NULL;
	size_t nch = 0;
	int ok = 1;
	for (int up = 0; up < 2 && ok; up++) {
		int32_t n = kaas_kr_array(r, f, up ? 8 : 3);
		if (n > 0) {
			struct change *nc = realloc(ch, (nch + (size_t)n) * sizeof(*ch));
			if (!nc) {
				ok = 0;
				break;
			}
			ch = nc;
		}
		for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
			struct change *c = &ch[nch];
			memset(c, 0, sizeof(*c));
			c->upsert = up;
			c->user = kaas_kslice_dup(kaas_kr_str(r, f));
			c->mech = kaas_kr_i8(r);
			if (up) {
				c->iterations = kaas_kr_i32(r);
				c->salt = kaas_kr_nbytes(r, f);
				c->salted = kaas_kr_nbytes(r, f);
			}
			kaas_kr_tags(r, f);
			if (!c->user) {
				ok = 0;
				break;
			}
			nch++;
		}
	}
	kaas_kr_tags(r, f);
	struct rows rs = { 0 };
	for (size_t i = 0; ok && kaas_kr_ok(r) && i < nch; i++)
		if (!row_for(&rs, ch[i].user, 1))
			ok = 0;
	if (!ok || !kaas_kr_ok(r)) {
		for (size_t i = 0; i < nch; i++)
			free(ch[i].user);
		free(ch);
		rows_free(&rs);
		return KAAS_REQ_CLOSE;
	}
	/* A user's changes are refused together when any is bad or two name
	 * one mechanism; otherwise each is made.  ACLs: ALTER on the cluster,
	 * else every change is refused before any is made. */
	int denied = !kaas_req_allowed_cluster(req, KAAS_OP_ALTER);
	for (size_t i = 0; i < nch; i++) {
		struct user_row *u = row_for(&rs, ch[i].user, 0);
		if (denied && !u->err) {
			u->err = KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
			u->msg = "not authorized to ALTER the cluster";
		}
		for (size_t j = 0; !u->err && j < i; j++)
			if (strcmp(ch[j].user, ch[i].user) == 0 && ch[j].mech == ch[i].mech) {
				u->err = KAAS_KERR_DUPLICATE_RESOURCE;
				u->msg = "A user credential cannot be altered twice in the same request";
			}
		if (!u->err)
			u->err = check_change(&ch[i], &u->msg);
	}
	for (size_t i = 0; i < nch; i++) {
		struct user_row *u = row_for(&rs, ch[i].user, 0);
		if (!u->err)
			u->err = apply_change(req->broker, &ch[i], &u->msg);
	}
	kaas_kw_i32(w, 0); /* throttle_time_ms */
	kaas_kw_array(w, f, (int32_t)rs.n);
	for (size_t i = 0; i < rs.n; i++) {
		kaas_kw_str(w, f, rs.r[i].name);
		kaas_kw_i16(w, rs.r[i].err);
		kaas_kw_str(w, f, rs.r[i].err ? rs.r[i].msg : NULL);
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	for (size_t i = 0; i < nch; i++)
		free(ch[i].user);
	free(ch);
	rows_free(&rs);
	return KAAS_REQ_RESPOND;
}
