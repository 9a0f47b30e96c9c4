/*
 * api_client_quotas.c — DescribeClientQuotas (48) and AlterClientQuotas
 * (49), versions 0..1 (1 flexible): KIP-546.
 *
 * Entities are users and client ids (entity types "user" and
 * "client-id"), a name or the default (null); Kafka's third type, "ip"
 * (connection_creation_rate, KIP-612), is refused: kaas limits
 * connections by max.connections.per.ip instead.  The quotas are
 * documents on the cluster volume (cluster/quota_store.h), one per
 * (entity, key), cached by every broker (broker/quotas.h); this broker
 * re-reads them before a describe and after an alter, so it answers and
 * enforces its own change at once, and the others within a heartbeat.
 *
 * Authorization, as Kafka: DescribeClientQuotas needs DESCRIBE_CONFIGS on
 * the cluster, AlterClientQuotas ALTER_CONFIGS
 * (CLUSTER_AUTHORIZATION_FAILED).  Anything malformed in an entity, a key
 * or a value is INVALID_REQUEST with a message, as Kafka answers it.
 * An entry's operations are all validated before any is written; each is
 * then one document, so a volume failure part way leaves the earlier
 * ones done (UNKNOWN_SERVER_ERROR: a retry of the whole entry is safe).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/quotas.h"
#include "cluster/acl_store.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/logger.h"

#define ENTITY_USER "user"
#define ENTITY_CLIENT "client-id"
#define ENTITY_IP "ip"

static double kr_f64(struct kaas_kr *r)
{
	uint64_t bits = (uint64_t)kaas_kr_i64(r);
	double d;
	memcpy(&d, &bits, sizeof d);
	return d;
}

static void kw_f64(struct kaas_kw *w, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	kaas_kw_i64(w, (int64_t)bits);
}

/* Which entity type a name is: 1 user, 2 client-id, 3 ip, 0 other. */
static int entity_type(struct kaas_kslice t)
{
	if (kaas_kslice_eq(t, ENTITY_USER))
		return 1;
	if (kaas_kslice_eq(t, ENTITY_CLIENT))
		return 2;
	if (kaas_kslice_eq(t, ENTITY_IP))
		return 3;
	return 0;
}

/* The entity parts of a response or describe entry. */
static void write_entity(struct kaas_kw *w, int f, const struct kaas_quota_entity *e)
{
	kaas_kw_array(w, f, e->has_user + e->has_client);
	if (e->has_user) {
		kaas_kw_str(w, f, ENTITY_USER);
		kaas_kw_str(w, f, e->user);
		kaas_kw_tags(w, f);
	}
	if (e->has_client) {
		kaas_kw_str(w, f, ENTITY_CLIENT);
		kaas_kw_str(w, f, e->client);
		kaas_kw_tags(w, f);
	}
}

/* ------------------------------------------------------------ describe */

/* A filter: per type (user, client-id) whether it is constrained, and how. */
struct filter {
	int want[3];         /* [1] user, [2] client-id: 0 any, 1 exact, 2 default, 3 specified */
	char *name[3];       /* exact: the name */
	int ip;              /* the filter names ip: nothing kaas keeps matches */
	int strict;
};

/* Does e pass f (Kafka's matching: exact and default compare the part,
 * "specified" asks only that the part exists; strict: no other parts)? */
static int filter_match(const struct filter *f, const struct kaas_quota_entity *e)
{
	if (f->ip)
		return 0;
	int has[3] = { 0, e->has_user, e->has_client };
	const char *nm[3] = { NULL, e->user, e->client };
	for (int t = 1; t <= 2; t++) {
		switch (f->want[t]) {
		case 0:
			if (f->strict && has[t])
				return 0;
			break;
		case 1:
			if (!has[t] || !nm[t] || strcmp(nm[t], f->name[t]) != 0)
				return 0;
			break;
		case 2:
			if (!has[t] || nm[t])
				return 0;
			break;
		default:
			if (!has[t])
				return 0;
		}
	}
	return 1;
}

/* The quotas matched, grouped by entity. */
struct found {
	struct kaas_quota_entity e;   /* borrowed from a copy of the cache */
	int nvals;
	int key[KAAS_QK_COUNT];
	double value[KAAS_QK_COUNT];
};

struct collect {
	const struct filter *f;
	struct found *v;
	size_t n, cap;
	int err;
};

static void collect_one(void *arg, const struct kaas_quota *qt)
{
	struct collect *c = arg;
	if (c->err || !filter_match(c->f, &qt->e))
		return;
	struct found *fd = NULL;
	for (size_t i = 0; i < c->n && !fd; i++)
		if (kaas_quota_entity_same(&c->v[i].e, &qt->e))
			fd = &c->v[i];
	if (!fd) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 8;
			struct found *nv = realloc(c->v, cap * sizeof(*nv));
			if (!nv) {
				c->err = -ENOMEM;
				return;
			}
			c->v = nv;
			c->cap = cap;
		}
		fd = &c->v[c->n];
		memset(fd, 0, sizeof(*fd));
		if (kaas_quota_entity_copy(&fd->e, &qt->e) < 0) {
			c->err = -ENOMEM;
			return;
		}
		c->n++;
	}
	if (fd->nvals < KAAS_QK_COUNT) {
		fd->key[fd->nvals] = qt->key;
		fd->value[fd->nvals] = qt->value;
		fd->nvals++;
	}
}

/* Read the components into *flt: NULL, or why they are not a valid
 * filter. */
static const char *read_filter(struct kaas_kr *r, int f, struct filter *flt)
{
	const char *why = NULL;
	int32_t n = kaas_kr_array(r, f, 3);
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		struct kaas_kslice type = kaas_kr_str(r, f);
		int8_t mt = kaas_kr_i8(r);
		struct kaas_kslice match = kaas_kr_nstr(r, f);
		kaas_kr_tags(r, f);
		if (why || !kaas_kr_ok(r))
			continue;
		int t = entity_type(type);
		if (t == 0) {
			why = "unknown entity type in the filter (user, client-id or ip)";
		} else if (mt < 0 || mt > 2) {
			why = "unknown match type in the filter (0 exact, 1 default, 2 specified)";
		} else if (mt == 0 && match.len < 0) {
			why = "an exact match needs a name";
		} else if (mt != 0 && match.len >= 0) {
			why = "a default or specified match takes no name";
		} else if (t == 3) {
			if (flt->ip)
				why = "the entity type ip appears twice in the filter";
			flt->ip = 1;
		} else if (flt->want[t]) {
			why = "an entity type appears twice in the filter";
		} else {
			flt->want[t] = mt == 0 ? 1 : mt == 1 ? 2 : 3;
			if (mt == 0 && !(flt->name[t] = kaas_kslice_dup(match)))
				why = "out of memory";
		}
	}
	flt->strict = kaas_kr_i8(r) != 0;
	kaas_kr_tags(r, f);
	if (!why && flt->ip && (flt->want[1] || flt->want[2]))
		why = "the entity type ip cannot be combined with user or client-id";
	return why;
}

int kaas_api_describe_client_quotas(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct filter flt = { 0 };
	const char *why = read_filter(r, f, &flt);
	if (!kaas_kr_ok(r)) {
		free(flt.name[1]);
		free(flt.name[2]);
		return KAAS_REQ_CLOSE;
	}
	int16_t err = 0;
	if (why) {
		err = KAAS_KERR_INVALID_REQUEST;
	} else if (!kaas_req_allowed_cluster(req, KAAS_OP_DESCRIBE_CONFIGS)) {
		err = KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
		why = "not authorized to describe the cluster's configurations";
	}
	struct collect c = { .f = &flt };
	if (!err) {
		(void)kaas_quotas_refresh(req->broker->quotas); /* a failure keeps the last */
		kaas_quotas_foreach(req->broker->quotas, collect_one, &c);
		if (c.err) {
			err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
			why = "out of memory";
		}
	}
	kaas_kw_i32(w, 0); /* throttle: request_percentage is not enforced */
	kaas_kw_i16(w, err);
	kaas_kw_str(w, f, err ? why : NULL);
	kaas_kw_array(w, f, err ? -1 : (int32_t)c.n);
	for (size_t i = 0; !err && i < c.n; i++) {
		write_entity(w, f, &c.v[i].e);
		kaas_kw_array(w, f, c.v[i].nvals);
		for (int k = 0; k < c.v[i].nvals; k++) {
			kaas_kw_str(w, f, kaas_quota_key_name(c.v[i].key[k]));
			kw_f64(w, c.v[i].value[k]);
			kaas_kw_tags(w, f);
		}
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	for (size_t i = 0; i < c.n; i++)
		kaas_quota_entity_clear(&c.v[i].e);
	free(c.v);
	free(flt.name[1]);
	free(flt.name[2]);
	return KAAS_REQ_RESPOND;
}

/* --------------------------------------------------------------- alter */

struct op {
	int key;           /* -1: unknown */
	double value;
	int remove;
};

struct entry {
	struct kaas_quota_entity e;
	struct kaas_kslice wire_types[2], wire_names[2]; /* as sent, for the answer */
	int nparts;
	struct op *ops;
	int32_t nops;
	const char *why;   /* invalid: why */
};

/* Read one entry (its entity and ops) and validate it. */
static void read_entry(struct kaas_kr *r, int f, struct entry *en)
{
	int32_t n = kaas_kr_array(r, f, 3);
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		struct kaas_kslice type = kaas_kr_str(r, f);
		struct kaas_kslice name = kaas_kr_nstr(r, f);
		kaas_kr_tags(r, f);
		if (i < 2) {
			en->wire_types[i] = type;
			en->wire_names[i] = name;
			en->nparts = i + 1;
		}
		if (en->why || !kaas_kr_ok(r))
			continue;
		int t = entity_type(type);
		if (t == 0)
			en->why = "unknown entity type (user, client-id or ip)";
		else if (t == 3)
			en->why = "kaas keeps no ip quotas (connection_creation_rate): it limits "
				  "connections with max.connections.per.ip";
		else if ((t == 1 && en->e.has_user) || (t == 2 && en->e.has_client))
			en->why = "an entity type appears twice in the entity";
		else if (name.len == 0)
			en->why = "an entity name must not be empty (null is the default)";
		else if (t == 1) {
			en->e.has_user = 1;
			if (name.len > 0 && !(en->e.user = kaas_kslice_dup(name)))
				en->why = "out of memory";
		} else {
			en->e.has_client = 1;
			if (name.len > 0 && !(en->e.client = kaas_kslice_dup(name)))
				en->why = "out of memory";
		}
	}
	if (n > 2 && !en->why)
		en->why = "an entity has at most a user and a client id";
	if (!en->why && kaas_kr_ok(r))
		en->why = kaas_quota_entity_invalid(&en->e);
	en->nops = kaas_kr_array_alloc(r, f, 10, sizeof(struct op), (void **)&en->ops);
	for (int32_t i = 0; i < en->nops && kaas_kr_ok(r); i++) {
		struct kaas_kslice key = kaas_kr_str(r, f);
		struct op *op = &en->ops[i];
		op->value = kr_f64(r);
		op->remove = kaas_kr_i8(r) != 0;
		kaas_kr_tags(r, f);
		op->key = kaas_kr_ok(r) ? kaas_quota_key_parse((const char *)key.p,
							      key.len > 0 ? (size_t)key.len : 0)
					: -1;
		if (en->why || !kaas_kr_ok(r))
			continue;
		if (op->key < 0)
			en->why = "unknown quota key (producer_byte_rate, consumer_byte_rate, "
				  "request_percentage, controller_mutation_rate)";
		else if (!op->remove)
			en->why = kaas_quota_value_invalid(op->key, op->value);
		for (int32_t j = 0; j < i && !en->why; j++)
			if (en->ops[j].key == op->key)
				en->why = "a quota key appears twice in the entry";
	}
	kaas_kr_tags(r, f);
}

/* Apply a valid entry's ops: 0, or the first -errno (logged). */
static int apply_entry(struct kaas_req *req, const struct entry *en)
{
	for (int32_t i = 0; i < en->nops; i++) {
		const struct op *op = &en->ops[i];
		int rc;
		if (op->remove) {
			rc = kaas_quota_store_remove(req->broker->cluster, &en->e, op->key);
		} else {
			struct kaas_quota q = { .e = en->e, .key = op->key, .value = op->value };
			rc = kaas_quota_store_put(req->broker->cluster, &q);
		}
		if (rc < 0) {
			kaas_warn("AlterClientQuotas: %s", kaas_sub_errdetail());
			return rc;
		}
		const char *u = !en->e.has_user ? "-" : en->e.user ? en->e.user : "<default>";
		const char *c = !en->e.has_client ? "-" : en->e.client ? en->e.client : "<default>";
		if (op->remove)
			kaas_info("client quota removed by %s: user=%s client-id=%s %s",
				  kaas_conn_peer(req->conn), u, c, kaas_quota_key_name(op->key));
		else
			kaas_info("client quota set by %s: user=%s client-id=%s %s=%.17g",
				  kaas_conn_peer(req->conn), u, c, kaas_quota_key_name(op->key),
				  op->value);
	}
	return 0;
}

int kaas_api_alter_client_quotas(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct entry *ens = NULL;
	int32_t n = kaas_kr_array_alloc(r, f, 3, sizeof(*ens), (void **)&ens);
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++)
		read_entry(r, f, &ens[i]);
	int validate_only = kaas_kr_i8(r) != 0;
	kaas_kr_tags(r, f);
	int ok = kaas_kr_ok(r) && n >= 0;
	int allowed = ok && kaas_req_allowed_cluster(req, KAAS_OP_ALTER_CONFIGS);
	int changed = 0;
	if (ok) {
		kaas_kw_i32(w, 0); /* throttle: request_percentage is not enforced */
		kaas_kw_array(w, f, n);
	}
	for (int32_t i = 0; ok && i < n; i++) {
		struct entry *en = &ens[i];
		int16_t err = 0;
		const char *why = NULL;
		if (!allowed) {
			err = KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED;
			why = "not authorized to alter the cluster's configurations";
		} else if (en->why) {
			err = KAAS_KERR_INVALID_REQUEST;
			why = en->why;
		} else if (!validate_only) {
			if (apply_entry(req, en) < 0) {
				err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
				why = "the quota could not be written to the cluster volume";
			}
			changed = 1;
		}
		kaas_kw_i16(w, err);
		kaas_kw_str(w, f, why);
		kaas_kw_array(w, f, en->nparts);
		for (int p = 0; p < en->nparts; p++) {
			struct kaas_kslice t = en->wire_types[p], nm = en->wire_names[p];
			kaas_kw_strn(w, f, t.len > 0 ? (const void *)t.p : "", t.len < 0 ? 0 : t.len);
			kaas_kw_strn(w, f, nm.len > 0 ? (const void *)nm.p : nm.len == 0 ? "" : NULL,
				     nm.len);
			kaas_kw_tags(w, f);
		}
		kaas_kw_tags(w, f);
	}
	if (ok)
		kaas_kw_tags(w, f);
	if (changed)
		(void)kaas_quotas_refresh(req->broker->quotas);
	for (int32_t i = 0; i < n; i++) {
		kaas_quota_entity_clear(&ens[i].e);
		free(ens[i].ops);
	}
	free(ens);
	return ok ? KAAS_REQ_RESPOND : KAAS_REQ_CLOSE;
}
