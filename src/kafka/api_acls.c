/*
 * api_acls.c — CreateAcls, DescribeAcls, DeleteAcls 0..3 (2+ flexible).
 *
 * The bindings are documents on the cluster volume (cluster/acl_store.h);
 * the broker's authorizer caches them (broker/authorizer.h) and is
 * refreshed before a describe or delete and after every change made here,
 * so this broker enforces a change before it answers.  CreateAcls and
 * DeleteAcls need ALTER on the cluster, DescribeAcls DESCRIBE
 * (CLUSTER_AUTHORIZATION_FAILED); without an authorizer they answer
 * SECURITY_DISABLED, as Kafka does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/authorizer.h"
#include "broker/broker.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/logger.h"
#include "util/grow.h"

/* The error every item gets before it is looked at: 0, or the code and
 * *why. */
static int16_t gate(struct kaas_req *req, int op, const char **why)
{
	if (!kaas_authz_enabled(req->broker->authz)) {
		*why = "no authorizer is configured (authorizer.class.name is empty)";
		return KAAS_KERR_SECURITY_DISABLED;
	}
	if (!kaas_req_allowed_cluster(req, op)) {
		*why = "not authorized on the cluster";
		return KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
	}
	return 0;
}

/* A filter as read from the wire (strings copied: NULL = null). */
struct wire_filter {
	struct kaas_acl_filter f;
	char *name, *principal, *host;
};

static void read_filter(struct kaas_kr *r, int v, int f, struct wire_filter *wf)
{
	wf->f.resource_type = kaas_kr_i8(r);
	wf->f.name = wf->name = kaas_kslice_dup(kaas_kr_nstr(r, f));
	wf->f.pattern_type = v >= 1 ? kaas_kr_i8(r) : KAAS_PAT_LITERAL;
	wf->f.principal = wf->principal = kaas_kslice_dup(kaas_kr_nstr(r, f));
	wf->f.host = wf->host = kaas_kslice_dup(kaas_kr_nstr(r, f));
	wf->f.operation = kaas_kr_i8(r);
	wf->f.permission = kaas_kr_i8(r);
}

static void free_filter(struct wire_filter *wf)
{
	free(wf->name);
	free(wf->principal);
	free(wf->host);
}

static const char *filter_invalid(const struct kaas_acl_filter *f)
{
	if (f->resource_type < KAAS_RES_ANY || f->resource_type > KAAS_RES_USER)
		return "unknown resource type";
	if (f->pattern_type < KAAS_PAT_ANY || f->pattern_type > KAAS_PAT_PREFIXED)
		return "unknown pattern type";
	if (f->operation < KAAS_OP_ANY || f->operation > KAAS_OP_DESCRIBE_TOKENS)
		return "unknown operation";
	if (f->permission < KAAS_PERM_ANY || f->permission > KAAS_PERM_ALLOW)
		return "unknown permission type";
	return NULL;
}

/* The bindings a filter matched (copies), in a stable order. */
struct matches {
	struct kaas_acl *v;
	size_t n, cap;
	int err;
};

static void collect(void *arg, const struct kaas_acl *a)
{
	struct matches *m = arg;
	if (m->err)
		return;
	struct kaas_acl *nv = kaas_grow(m->v, &m->cap, m->n, sizeof(*nv), 16);
	if (!nv) {
		m->err = -ENOMEM;
		return;
	}
	m->v = nv;
	if (kaas_acl_copy(&m->v[m->n], a) < 0)
		m->err = -ENOMEM;
	else
		m->n++;
}

static int by_resource(const void *x, const void *y)
{
	const struct kaas_acl *a = x, *b = y;
	if (a->resource_type != b->resource_type)
		return a->resource_type - b->resource_type;
	if (a->pattern_type != b->pattern_type)
		return a->pattern_type - b->pattern_type;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	c = strcmp(a->principal, b->principal);
	if (c)
		return c;
	c = strcmp(a->host, b->host);
	if (c)
		return c;
	return a->operation != b->operation ? a->operation - b->operation
					    : a->permission - b->permission;
}

static int same_resource(const struct kaas_acl *a, const struct kaas_acl *b)
{
	return a->resource_type == b->resource_type && a->pattern_type == b->pattern_type &&
	       strcmp(a->name, b->name) == 0;
}

static void matches_find(struct kaas_broker *b, const struct kaas_acl_filter *f,
			 struct matches *m)
{
	memset(m, 0, sizeof(*m));
	if (kaas_authz_refresh(b->authz) < 0)
		m->err = -EIO;
	if (!m->err)
		kaas_authz_foreach(b->authz, f, collect, m);
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), by_resource);
}

static void matches_free(struct matches *m)
{
	for (size_t i = 0; i < m->n; i++)
		kaas_acl_clear(&m->v[i]);
	free(m->v);
}

/* The request's top-level array (creations, filters): zeroed room for
 * its *n elements, or NULL (close: malformed or out of memory). */
static void *read_array(struct kaas_req *req, size_t size, int32_t *n)
{
	*n = kaas_kr_array(&req->r, req->hdr.flex, 7);
	if (!kaas_kr_ok(&req->r) || *n < 0)
		return NULL;
	return calloc((size_t)*n + 1, size);
}

/* After a Create/DeleteAcls request's items: its end, and the answer's
 * start (throttle, the array of n results); *gerr, *gwhy: the error every
 * item gets (gate).  1, or 0 when the request is malformed (close). */
static int answer_start(struct kaas_req *req, int op, int32_t n, int16_t *gerr,
			const char **gwhy)
{
	kaas_kr_tags(&req->r, req->hdr.flex);
	if (!kaas_kr_ok(&req->r))
		return 0;
	*gerr = gate(req, op, gwhy);
	kaas_kw_i32(&req->w, 0);
	kaas_kw_array(&req->w, req->hdr.flex, n);
	return 1;
}

/* A binding's principal, host, operation and permission, and the end of
 * its element (DescribeAcls' acls, DeleteAcls' matching_acls). */
static void write_who(struct kaas_kw *w, int f, const struct kaas_acl *a)
{
	kaas_kw_str(w, f, a->principal);
	kaas_kw_str(w, f, a->host);
	kaas_kw_i8(w, a->operation);
	kaas_kw_i8(w, a->permission);
	kaas_kw_tags(w, f);
}

int kaas_api_create_acls(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	int32_t n;
	struct kaas_acl *items = read_array(req, sizeof(*items), &n);
	if (!items)
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		items[i].resource_type = kaas_kr_i8(r);
		items[i].name = kaas_kslice_dup(kaas_kr_str(r, f));
		items[i].pattern_type = v >= 1 ? kaas_kr_i8(r) : KAAS_PAT_LITERAL;
		items[i].principal = kaas_kslice_dup(kaas_kr_str(r, f));
		items[i].host = kaas_kslice_dup(kaas_kr_str(r, f));
		items[i].operation = kaas_kr_i8(r);
		items[i].permission = kaas_kr_i8(r);
		kaas_kr_tags(r, f);
	}
	const char *gwhy = NULL;
	int16_t gerr = 0;
	int ok = answer_start(req, KAAS_OP_ALTER, n, &gerr, &gwhy);
	int changed = 0;
	for (int32_t i = 0; ok && i < n; i++) {
		struct kaas_acl *a = &items[i];
		const char *why = gwhy;
		int16_t err = gerr;
		if (!err && (!a->name || !a->principal || !a->host)) {
			err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
			why = "out of memory";
		} else if (!err && (why = kaas_acl_invalid(a)) != NULL) {
			err = KAAS_KERR_INVALID_REQUEST;
		} else if (!err) {
			int rc = kaas_acl_store_add(req->broker->cluster, a);
			if (rc < 0) {
				err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
				why = kaas_sub_errdetail();
				kaas_warn("CreateAcls: %s", why);
			} else {
				changed = 1;
				kaas_info("ACL added by %s: %s %s %s %s:%s %s host %s",
					  kaas_conn_peer(req->conn), kaas_acl_perm_name(a->permission),
					  a->principal, kaas_acl_op_name(a->operation),
					  kaas_acl_resource_name(a->resource_type),
					  kaas_acl_pattern_name(a->pattern_type), a->name,
					  a->host);
			}
		}
		kaas_kw_i16(w, err);
		kaas_kw_str(w, f, err ? why : NULL);
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	if (changed)
		(void)kaas_authz_refresh(req->broker->authz);
	for (int32_t i = 0; i < n; i++)
		kaas_acl_clear(&items[i]);
	free(items);
	return ok ? KAAS_REQ_RESPOND : KAAS_REQ_CLOSE;
}

int kaas_api_describe_acls(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct wire_filter wf = { 0 };
	read_filter(r, v, f, &wf);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r)) {
		free_filter(&wf);
		return KAAS_REQ_CLOSE;
	}
	const char *why = NULL;
	int16_t err = gate(req, KAAS_OP_DESCRIBE, &why);
	if (!err && (why = filter_invalid(&wf.f)) != NULL)
		err = KAAS_KERR_INVALID_REQUEST;
	struct matches m = { 0 };
	if (!err) {
		matches_find(req->broker, &wf.f, &m);
		if (m.err) {
			err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
			why = "cannot read the ACL bindings";
		}
	}
	kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_str(w, f, err ? why : NULL);
	/* Resources: runs of bindings with one (type, pattern, name). */
	size_t nres = 0;
	for (size_t i = 0; !err && i < m.n; i++)
		nres += i == 0 || !same_resource(&m.v[i], &m.v[i - 1]);
	kaas_kw_array(w, f, (int32_t)nres);
	for (size_t i = 0; !err && i < m.n;) {
		size_t j = i;
		while (j < m.n && same_resource(&m.v[j], &m.v[i]))
			j++;
		kaas_kw_i8(w, m.v[i].resource_type);
		kaas_kw_str(w, f, m.v[i].name);
		if (v >= 1)
			kaas_kw_i8(w, m.v[i].pattern_type);
		kaas_kw_array(w, f, (int32_t)(j - i));
		for (size_t k = i; k < j; k++)
			write_who(w, f, &m.v[k]);
		kaas_kw_tags(w, f);
		i = j;
	}
	kaas_kw_tags(w, f);
	matches_free(&m);
	free_filter(&wf);
	return KAAS_REQ_RESPOND;
}

/* One filter of a DeleteAcls: remove what it matches and answer it. */
static void delete_one(struct kaas_req *req, struct wire_filter *wf, int16_t gerr,
		       const char *gwhy, int *changed)
{
	KAAS_REQ_IO(req);
	const char *why = gwhy;
	int16_t err = gerr;
	if (!err && (why = filter_invalid(&wf->f)) != NULL)
		err = KAAS_KERR_INVALID_REQUEST;
	struct matches m = { 0 };
	if (!err) {
		matches_find(req->broker, &wf->f, &m);
		if (m.err) {
			err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
			why = "cannot read the ACL bindings";
		}
	}
	kaas_kw_i16(w, err);
	kaas_kw_str(w, f, err ? why : NULL);
	kaas_kw_array(w, f, err ? 0 : (int32_t)m.n);
	for (size_t i = 0; !err && i < m.n; i++) {
		const struct kaas_acl *a = &m.v[i];
		int rc = kaas_acl_store_remove(req->broker->cluster, a);
		*changed |= rc == 0;
		if (rc < 0)
			kaas_warn("DeleteAcls: %s", kaas_sub_errdetail());
		else
			kaas_info("ACL removed by %s: %s %s %s %s:%s %s host %s",
				  kaas_conn_peer(req->conn), kaas_acl_perm_name(a->permission),
				  a->principal, kaas_acl_op_name(a->operation),
				  kaas_acl_resource_name(a->resource_type),
				  kaas_acl_pattern_name(a->pattern_type), a->name, a->host);
		kaas_kw_i16(w, rc < 0 ? KAAS_KERR_UNKNOWN_SERVER_ERROR : 0);
		kaas_kw_str(w, f, rc < 0 ? "the binding's document could not be removed" : NULL);
		kaas_kw_i8(w, a->resource_type);
		kaas_kw_str(w, f, a->name);
		if (v >= 1)
			kaas_kw_i8(w, a->pattern_type);
		write_who(w, f, a);
	}
	kaas_kw_tags(w, f);
	matches_free(&m);
}

int kaas_api_delete_acls(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	int32_t n;
	struct wire_filter *fs = read_array(req, sizeof(*fs), &n);
	if (!fs)
		return KAAS_REQ_CLOSE;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		read_filter(r, v, f, &fs[i]);
		kaas_kr_tags(r, f);
	}
	const char *gwhy = NULL;
	int16_t gerr = 0;
	int ok = answer_start(req, KAAS_OP_ALTER, n, &gerr, &gwhy);
	int changed = 0;
	for (int32_t i = 0; ok && i < n; i++)
		delete_one(req, &fs[i], gerr, gwhy, &changed);
	kaas_kw_tags(w, f);
	if (changed)
		(void)kaas_authz_refresh(req->broker->authz);
	for (int32_t i = 0; i < n; i++)
		free_filter(&fs[i]);
	free(fs);
	return ok ? KAAS_REQ_RESPOND : KAAS_REQ_CLOSE;
}
