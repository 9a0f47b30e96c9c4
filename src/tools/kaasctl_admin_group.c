/* kaasctl_admin_group.c — `kaasctl group describe|delete` (and the
 * dispatcher of `group`) through the Kafka protocol: FindCoordinator,
 * DescribeGroups, OffsetFetch, Metadata, ListOffsets, DeleteGroups — what
 * kafka-consumer-groups --describe shows: members, assignments, committed
 * offsets, log-end offsets and lag. */
#include "tools/kaasctl_admin_group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"

static const char usage_group[] =
	"usage: kaasctl [--bootstrap HOST:PORT] group describe GROUP\n"
	"       kaasctl group reset-offsets GROUP --topic T (--to-earliest | --to-latest |\n"
	"           --to-offset N) [--dry-run]\n"
	"       kaasctl group delete GROUP\n";

static int usage(void)
{
	fputs(usage_group, stderr);
	return KCTL_EXIT_ERROR;
}

int kctl_admin_coordinator(struct kctl_admin *a, const char *key, int8_t key_type,
			   struct kctl_conn *c, int32_t *node)
{
	struct kctl_conn *b = &a->boot;
	memset(c, 0, sizeof *c);
	c->fd = -1;
	int v = kctl_conn_pick(b, KAAS_API_FIND_COORDINATOR, 1, 2);
	if (v < 0)
		return kctl_error("%s", b->why);
	struct kaas_kw w;
	kctl_req_begin(b, &w, KAAS_API_FIND_COORDINATOR, (int16_t)v, 0);
	kaas_kw_str(&w, 0, key);
	kaas_kw_i8(&w, key_type);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(b, &w, 0, &buf, &r) < 0)
		return kctl_error("FindCoordinator: %s", b->why);
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	struct kaas_kslice msg = kaas_kr_nstr(&r, 0);
	*node = kaas_kr_i32(&r);
	char *host = kaas_kslice_dup(kaas_kr_str(&r, 0));
	int32_t port = kaas_kr_i32(&r);
	int rc;
	char what[400];
	snprintf(what, sizeof what, "the coordinator of %s %s",
		 key_type == 0 ? "group" : "transactional id", key);
	if (!kaas_kr_ok(&r) || !host)
		rc = kctl_error("%s: a malformed FindCoordinator answer", b->addr);
	else if (err)
		rc = kctl_admin_kerr(what, err, &msg);
	else
		rc = kctl_admin_dial(a, host, port, c);
	free(host);
	free(buf);
	return rc;
}

int kctl_group_coordinator(struct kctl_admin *a, const char *group, struct kctl_conn *c,
			   int32_t *node)
{
	return kctl_admin_coordinator(a, group, 0, c, node);
}

/* The topics and partitions of a consumer protocol assignment. */
static cJSON *assignment_json(struct kaas_kslice s)
{
	cJSON *arr = cJSON_CreateArray();
	if (s.len < 2)
		return arr;
	struct kaas_kr r;
	kaas_kr_init(&r, s.p, (size_t)s.len);
	(void)kaas_kr_i16(&r); /* version */
	int32_t nt = kaas_kr_array(&r, 0, 6);
	for (int32_t i = 0; i < nt && kaas_kr_ok(&r); i++) {
		char *t = kaas_kslice_dup(kaas_kr_str(&r, 0));
		int32_t np = kaas_kr_array(&r, 0, 4);
		cJSON *o = cJSON_CreateObject(), *ps = cJSON_CreateArray();
		for (int32_t j = 0; j < np && kaas_kr_ok(&r); j++)
			cJSON_AddItemToArray(ps, cJSON_CreateNumber(kaas_kr_i32(&r)));
		cJSON_AddStringToObject(o, "topic", t ? t : "");
		cJSON_AddItemToObject(o, "partitions", ps);
		cJSON_AddItemToArray(arr, o);
		free(t);
	}
	return arr;
}

static void add_slice(cJSON *o, const char *key, struct kaas_kslice s)
{
	char *e = kaas_kslice_dup(s);
	if (e)
		kctl_add_text(o, key, e);
	else
		cJSON_AddNullToObject(o, key);
	free(e);
}

int kctl_group_describe(struct kctl_conn *c, const char *group, cJSON *o)
{
	int v = kctl_conn_pick(c, KAAS_API_DESCRIBE_GROUPS, 0, 2);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_DESCRIBE_GROUPS, (int16_t)v, 0);
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, group);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("DescribeGroups: %s", c->why);
	if (v >= 1)
		(void)kaas_kr_i32(&r);
	int32_t n = kaas_kr_array(&r, 0, 2);
	int16_t err = n == 1 ? 0 : -1;
	for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
		err = kaas_kr_i16(&r);
		(void)kaas_kr_str(&r, 0);
		add_slice(o, "state", kaas_kr_str(&r, 0));
		struct kaas_kslice ptype = kaas_kr_str(&r, 0);
		add_slice(o, "protocol_type", ptype);
		add_slice(o, "protocol", kaas_kr_str(&r, 0));
		int consumer = kaas_kslice_eq(ptype, "consumer");
		cJSON *ms = cJSON_AddArrayToObject(o, "members");
		int32_t nm = kaas_kr_array(&r, 0, 14);
		for (int32_t j = 0; j < nm && kaas_kr_ok(&r); j++) {
			cJSON *m = cJSON_CreateObject();
			cJSON_AddItemToArray(ms, m);
			add_slice(m, "member_id", kaas_kr_str(&r, 0));
			add_slice(m, "client_id", kaas_kr_str(&r, 0));
			add_slice(m, "client_host", kaas_kr_str(&r, 0));
			(void)kaas_kr_nbytes(&r, 0); /* metadata */
			struct kaas_kslice as = kaas_kr_nbytes(&r, 0);
			if (consumer)
				cJSON_AddItemToObject(m, "assignment", assignment_json(as));
		}
	}
	int rc = 0;
	char what[400];
	snprintf(what, sizeof what, "group %s", group);
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed DescribeGroups answer", c->addr);
	else if (err)
		rc = kctl_admin_kerr(what, err, NULL);
	free(buf);
	return rc;
}

struct row {
	char *topic;
	int32_t partition;
	int64_t committed;       /* -1: none */
	int64_t end;             /* -1: unknown */
	const cJSON *member;     /* NULL: unassigned */
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static struct row *row_get(struct rows *rs, const char *topic, int32_t p)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].partition == p && !strcmp(rs->v[i].topic, topic))
			return &rs->v[i];
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct row *nv = realloc(rs->v, cap * sizeof *nv);
		if (!nv)
			return NULL;
		rs->v = nv;
		rs->cap = cap;
	}
	char *t = strdup(topic);
	if (!t)
		return NULL;
	rs->v[rs->n] = (struct row){ t, p, -1, -1, NULL };
	return &rs->v[rs->n++];
}

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = strcmp(a->topic, b->topic);
	return c ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

/* OffsetFetch of every committed offset of group into rs. */
static int offset_fetch(struct kctl_conn *c, const char *group, struct rows *rs)
{
	int v = kctl_conn_pick(c, KAAS_API_OFFSET_FETCH, 2, 5);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_OFFSET_FETCH, (int16_t)v, 0);
	kaas_kw_str(&w, 0, group);
	kaas_kw_array(&w, 0, -1); /* every topic */
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("OffsetFetch: %s", c->why);
	if (v >= 3)
		(void)kaas_kr_i32(&r);
	int rc = 0;
	int32_t nt = kaas_kr_array(&r, 0, 6);
	for (int32_t i = 0; i < nt && kaas_kr_ok(&r) && rc == 0; i++) {
		char *t = kaas_kslice_dup(kaas_kr_str(&r, 0));
		int32_t np = kaas_kr_array(&r, 0, 16);
		for (int32_t j = 0; j < np && kaas_kr_ok(&r); j++) {
			int32_t p = kaas_kr_i32(&r);
			int64_t off = kaas_kr_i64(&r);
			if (v >= 5)
				(void)kaas_kr_i32(&r);
			(void)kaas_kr_nstr(&r, 0);
			int16_t err = kaas_kr_i16(&r);
			if (!t || err || off < 0)
				continue;
			struct row *row = row_get(rs, t, p);
			if (!row) {
				rc = kctl_error("out of memory");
				break;
			}
			row->committed = off;
		}
		free(t);
	}
	int16_t err = kaas_kr_i16(&r);
	char what[400];
	snprintf(what, sizeof what, "the offsets of group %s", group);
	if (rc == 0 && !kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed OffsetFetch answer", c->addr);
	else if (rc == 0 && err)
		rc = kctl_admin_kerr(what, err, NULL);
	free(buf);
	return rc;
}

/* Every row's log-end offset (Metadata for their topics, ListOffsets -1). */
static int fill_ends(struct kctl_admin *a, struct rows *rs)
{
	if (rs->n == 0)
		return 0;
	const char **names = calloc(rs->n, sizeof *names);
	int32_t *parts = calloc(rs->n, sizeof *parts);
	int64_t *ends = calloc(rs->n, sizeof *ends);
	int nn = 0, rc = names && parts && ends ? 0 : kctl_error("out of memory");
	for (size_t i = 0; i < rs->n && rc == 0; i++)
		if (i == 0 || strcmp(rs->v[i].topic, rs->v[i - 1].topic))
			names[nn++] = rs->v[i].topic;
	struct kctl_md md = {0};
	if (rc == 0)
		rc = kctl_metadata(&a->boot, names, nn, &md);
	for (size_t i = 0; i < rs->n && rc == 0;) {
		size_t j = i;
		int k = 0;
		while (j < rs->n && !strcmp(rs->v[j].topic, rs->v[i].topic))
			parts[k++] = rs->v[j++].partition;
		rc = kctl_list_offsets(a, &md, rs->v[i].topic, parts, k, -1, ends);
		for (int x = 0; x < k && rc == 0; x++)
			rs->v[i + (size_t)x].end = ends[x];
		i = j;
	}
	kctl_md_free(&md);
	free(names);
	free(parts);
	free(ends);
	return rc;
}

static const char *text(const cJSON *o, const char *key)
{
	const cJSON *s = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsString(s) && s->valuestring[0] ? s->valuestring : "-";
}

static void num_or_dash(char *buf, size_t sz, int64_t v)
{
	if (v < 0)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%lld", (long long)v);
}

static int group_describe(struct kctl_admin *a, int argc, char **argv)
{
	if (argc != 3 || argv[2][0] == '-')
		return usage();
	const char *group = argv[2];
	struct kctl_conn c;
	int32_t node;
	int rc = kctl_group_coordinator(a, group, &c, &node);
	cJSON *o = cJSON_CreateObject();
	struct rows rs = {0};
	cJSON_AddStringToObject(o, "group", group);
	cJSON_AddNumberToObject(o, "coordinator", node);
	if (rc == 0)
		rc = kctl_group_describe(&c, group, o);
	if (rc == 0)
		rc = offset_fetch(&c, group, &rs);
	kctl_conn_close(&c);
	const cJSON *members = cJSON_GetObjectItemCaseSensitive(o, "members"), *m;
	cJSON_ArrayForEach(m, members) {
		const cJSON *as = cJSON_GetObjectItemCaseSensitive(m, "assignment"), *t;
		cJSON_ArrayForEach(t, as) {
			const cJSON *p;
			cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(t, "partitions")) {
				struct row *row = rc ? NULL : row_get(&rs, text(t, "topic"), (int32_t)p->valuedouble);
				if (!row && rc == 0)
					rc = kctl_error("out of memory");
				if (row)
					row->member = m;
			}
		}
	}
	if (rc == 0 && rs.n > 1)
		qsort(rs.v, rs.n, sizeof *rs.v, cmp_row);
	if (rc == 0)
		rc = fill_ends(a, &rs);
	cJSON *offs = cJSON_AddArrayToObject(o, "offsets");
	for (size_t i = 0; i < rs.n && rc == 0; i++) {
		const struct row *r = &rs.v[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToArray(offs, x);
		kctl_add_text(x, "topic", r->topic);
		cJSON_AddNumberToObject(x, "partition", r->partition);
		if (r->committed >= 0)
			cJSON_AddNumberToObject(x, "committed", (double)r->committed);
		else
			cJSON_AddNullToObject(x, "committed");
		if (r->end >= 0)
			cJSON_AddNumberToObject(x, "log_end_offset", (double)r->end);
		else
			cJSON_AddNullToObject(x, "log_end_offset");
		if (r->end >= 0 && r->committed >= 0)
			cJSON_AddNumberToObject(x, "lag", (double)(r->end > r->committed ? r->end - r->committed : 0));
		else
			cJSON_AddNullToObject(x, "lag");
		if (r->member)
			cJSON_AddStringToObject(x, "member_id", text(r->member, "member_id"));
		else
			cJSON_AddNullToObject(x, "member_id");
	}
	if (rc == 0 && !a->json) {
		printf("group %s: state %s, protocol %s/%s, coordinator %d, %d member(s)\n\n", group,
		       text(o, "state"), text(o, "protocol_type"), text(o, "protocol"), (int)node,
		       cJSON_GetArraySize(members));
		printf("%-24s %9s %14s %14s %8s  %-40s %-16s %s\n", "TOPIC", "PARTITION",
		       "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
		for (size_t i = 0; i < rs.n; i++) {
			const struct row *r = &rs.v[i];
			char cur[24], end[24], lag[24];
			num_or_dash(cur, sizeof cur, r->committed);
			num_or_dash(end, sizeof end, r->end);
			num_or_dash(lag, sizeof lag, r->end >= 0 && r->committed >= 0
				    ? (r->end > r->committed ? r->end - r->committed : 0) : -1);
			printf("%-24s %9d %14s %14s %8s  %-40s %-16s %s\n", r->topic, (int)r->partition,
			       cur, end, lag, text(r->member, "member_id"),
			       text(r->member, "client_host"), text(r->member, "client_id"));
		}
		if (rs.n == 0)
			printf("(no committed offsets and no assigned partitions)\n");
	}
	for (size_t i = 0; i < rs.n; i++)
		free(rs.v[i].topic);
	free(rs.v);
	if (rc || !a->json) {
		cJSON_Delete(o);
		return rc;
	}
	return kctl_json_emit(o);
}

static int group_delete(struct kctl_admin *a, int argc, char **argv)
{
	if (argc != 3 || argv[2][0] == '-')
		return usage();
	const char *group = argv[2];
	struct kctl_conn c;
	int32_t node;
	int rc = kctl_group_coordinator(a, group, &c, &node);
	int v = rc ? -1 : kctl_conn_pick(&c, KAAS_API_DELETE_GROUPS, 0, 1);
	if (rc == 0 && v < 0)
		rc = kctl_error("%s", c.why);
	uint8_t *buf = NULL;
	struct kaas_kr r;
	if (rc == 0) {
		struct kaas_kw w;
		kctl_req_begin(&c, &w, KAAS_API_DELETE_GROUPS, (int16_t)v, 0);
		kaas_kw_array(&w, 0, 1);
		kaas_kw_str(&w, 0, group);
		if (kctl_conn_call(&c, &w, 0, &buf, &r) < 0)
			rc = kctl_error("DeleteGroups: %s", c.why);
	}
	if (rc == 0) {
		(void)kaas_kr_i32(&r);
		int32_t n = kaas_kr_array(&r, 0, 4);
		int16_t err = n == 1 ? 0 : -1;
		for (int32_t i = 0; i < n && kaas_kr_ok(&r); i++) {
			(void)kaas_kr_str(&r, 0);
			err = kaas_kr_i16(&r);
		}
		char what[400];
		snprintf(what, sizeof what, "group delete %s", group);
		if (!kaas_kr_ok(&r))
			rc = kctl_error("%s: a malformed DeleteGroups answer", c.addr);
		else if (err)
			rc = kctl_admin_kerr(what, err, NULL);
	}
	free(buf);
	kctl_conn_close(&c);
	if (rc)
		return rc;
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "deleted", group);
		return kctl_json_emit(o);
	}
	printf("deleted group %s\n", group);
	return 0;
}

int kctl_admin_group(struct kctl_admin *a, int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "describe"))
		return group_describe(a, argc, argv);
	if (!strcmp(argv[1], "reset-offsets"))
		return kctl_admin_group_reset(a, argc, argv);
	if (!strcmp(argv[1], "delete"))
		return group_delete(a, argc, argv);
	kctl_error("group: unknown subcommand '%s'", argv[1]);
	return usage();
}
