/* kaasctl_admin_meta.c — Metadata (v1-v8) and ListOffsets (v1-v5) for
 * kaasctl's broker commands (see kaasctl_admin.h). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"

static int cmp_part(const void *x, const void *y)
{
	const struct kctl_md_part *a = x, *b = y;
	return (a->id > b->id) - (a->id < b->id);
}

static int cmp_topic(const void *x, const void *y)
{
	const struct kctl_md_topic *a = x, *b = y;
	return strcmp(a->name, b->name);
}

static int cmp_broker(const void *x, const void *y)
{
	const struct kctl_md_broker *a = x, *b = y;
	return (a->id > b->id) - (a->id < b->id);
}

static int32_t *read_ids(struct kaas_kr *r, int32_t *n)
{
	int32_t *ids = NULL;
	*n = kaas_kr_array_alloc(r, 0, 4, sizeof *ids, (void **)&ids);
	for (int32_t i = 0; i < *n && kaas_kr_ok(r); i++)
		ids[i] = kaas_kr_i32(r);
	if (*n < 0)
		*n = 0;
	return ids;
}

static void parse(struct kaas_kr *r, int v, struct kctl_md *md)
{
	if (v >= 3)
		(void)kaas_kr_i32(r); /* throttle */
	md->nbrokers = kaas_kr_array_alloc(r, 0, 10, sizeof *md->brokers, (void **)&md->brokers);
	for (int32_t i = 0; i < md->nbrokers && kaas_kr_ok(r); i++) {
		struct kctl_md_broker *b = &md->brokers[i];
		b->id = kaas_kr_i32(r);
		b->host = kaas_kslice_dup(kaas_kr_str(r, 0));
		b->port = kaas_kr_i32(r);
		b->rack = kaas_kslice_dup(kaas_kr_nstr(r, 0));
	}
	if (v >= 2)
		md->cluster_id = kaas_kslice_dup(kaas_kr_nstr(r, 0));
	md->controller = kaas_kr_i32(r);
	md->ntopics = kaas_kr_array_alloc(r, 0, 9, sizeof *md->topics, (void **)&md->topics);
	for (int32_t i = 0; i < md->ntopics && kaas_kr_ok(r); i++) {
		struct kctl_md_topic *t = &md->topics[i];
		t->err = kaas_kr_i16(r);
		t->name = kaas_kslice_dup(kaas_kr_str(r, 0));
		t->internal = kaas_kr_i8(r) != 0;
		t->nparts = kaas_kr_array_alloc(r, 0, 18, sizeof *t->parts, (void **)&t->parts);
		for (int32_t j = 0; j < t->nparts && kaas_kr_ok(r); j++) {
			struct kctl_md_part *p = &t->parts[j];
			p->err = kaas_kr_i16(r);
			p->id = kaas_kr_i32(r);
			p->leader = kaas_kr_i32(r);
			p->leader_epoch = v >= 7 ? kaas_kr_i32(r) : -1;
			p->replicas = read_ids(r, &p->nreplicas);
			p->isr = read_ids(r, &p->nisr);
			if (v >= 5) {
				int32_t n;
				free(read_ids(r, &n)); /* offline replicas */
			}
		}
		if (t->nparts < 0)
			t->nparts = 0;
		if (v >= 8)
			(void)kaas_kr_i32(r); /* authorized operations */
		if (!t->name)
			kaas_kr_fail(r);
		else if (t->nparts > 1)
			qsort(t->parts, (size_t)t->nparts, sizeof *t->parts, cmp_part);
	}
	if (md->nbrokers < 0)
		md->nbrokers = 0;
	if (md->ntopics < 0)
		md->ntopics = 0;
	for (int32_t i = 0; i < md->nbrokers; i++)
		if (!md->brokers[i].host)
			kaas_kr_fail(r);
}

int kctl_metadata(struct kctl_conn *c, const char *const *topics, int ntopics, struct kctl_md *md)
{
	memset(md, 0, sizeof *md);
	int v = kctl_conn_pick(c, KAAS_API_METADATA, 1, 8);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_METADATA, (int16_t)v, 0);
	kaas_kw_array(&w, 0, ntopics < 0 ? -1 : ntopics);
	for (int i = 0; i < ntopics; i++)
		kaas_kw_str(&w, 0, topics[i]);
	if (v >= 4)
		kaas_kw_i8(&w, 0); /* never auto-create */
	if (v >= 8) {
		kaas_kw_i8(&w, 0);
		kaas_kw_i8(&w, 0);
	}
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("Metadata: %s", c->why);
	parse(&r, v, md);
	int ok = kaas_kr_ok(&r);
	free(buf);
	if (!ok) {
		kctl_md_free(md);
		return kctl_error("%s: a malformed Metadata answer", c->addr);
	}
	if (md->ntopics > 1)
		qsort(md->topics, (size_t)md->ntopics, sizeof *md->topics, cmp_topic);
	if (md->nbrokers > 1)
		qsort(md->brokers, (size_t)md->nbrokers, sizeof *md->brokers, cmp_broker);
	return 0;
}

void kctl_md_free(struct kctl_md *md)
{
	for (int32_t i = 0; i < md->ntopics; i++) {
		for (int32_t j = 0; j < md->topics[i].nparts; j++) {
			free(md->topics[i].parts[j].replicas);
			free(md->topics[i].parts[j].isr);
		}
		free(md->topics[i].parts);
		free(md->topics[i].name);
	}
	for (int32_t i = 0; i < md->nbrokers; i++) {
		free(md->brokers[i].host);
		free(md->brokers[i].rack);
	}
	free(md->topics);
	free(md->brokers);
	free(md->cluster_id);
	memset(md, 0, sizeof *md);
}

const struct kctl_md_broker *kctl_md_broker(const struct kctl_md *md, int32_t id)
{
	for (int32_t i = 0; i < md->nbrokers; i++)
		if (md->brokers[i].id == id)
			return &md->brokers[i];
	return NULL;
}

const struct kctl_md_topic *kctl_md_topic(const struct kctl_md *md, const char *name)
{
	for (int32_t i = 0; i < md->ntopics; i++)
		if (!strcmp(md->topics[i].name, name))
			return &md->topics[i];
	return NULL;
}

/* One ListOffsets request to c for the partitions of topic led by `leader`
 * (idx[] into parts/out). */
static int list_from(struct kctl_conn *c, const char *topic, const int32_t *parts,
		     const int *idx, int n, int64_t ts, int64_t *out)
{
	int v = kctl_conn_pick(c, KAAS_API_LIST_OFFSETS, 1, 5);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_LIST_OFFSETS, (int16_t)v, 0);
	kaas_kw_i32(&w, -1); /* replica id: a consumer */
	if (v >= 2)
		kaas_kw_i8(&w, 0); /* read_uncommitted: the log end as Kafka's tools show it */
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_array(&w, 0, n);
	for (int i = 0; i < n; i++) {
		kaas_kw_i32(&w, parts[idx[i]]);
		if (v >= 4)
			kaas_kw_i32(&w, -1); /* current leader epoch: unknown */
		kaas_kw_i64(&w, ts);
	}
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("ListOffsets: %s", c->why);
	if (v >= 2)
		(void)kaas_kr_i32(&r);
	int32_t nt = kaas_kr_array(&r, 0, 6);
	for (int32_t t = 0; t < nt && kaas_kr_ok(&r); t++) {
		(void)kaas_kr_str(&r, 0);
		int32_t np = kaas_kr_array(&r, 0, 22);
		for (int32_t j = 0; j < np && kaas_kr_ok(&r); j++) {
			int32_t p = kaas_kr_i32(&r);
			int16_t err = kaas_kr_i16(&r);
			(void)kaas_kr_i64(&r); /* timestamp */
			int64_t off = kaas_kr_i64(&r);
			if (v >= 4)
				(void)kaas_kr_i32(&r);
			for (int i = 0; i < n; i++) {
				if (parts[idx[i]] != p)
					continue;
				out[idx[i]] = err ? -1 : off;
				if (err) {
					char what[300];
					snprintf(what, sizeof what, "ListOffsets %s/%d", topic, (int)p);
					(void)kctl_admin_kerr(what, err, NULL);
				}
			}
		}
	}
	int ok = kaas_kr_ok(&r);
	free(buf);
	return ok ? 0 : kctl_error("%s: a malformed ListOffsets answer", c->addr);
}

int kctl_list_offsets(struct kctl_admin *a, const struct kctl_md *md, const char *topic,
		      const int32_t *parts, int n, int64_t ts, int64_t *out)
{
	assert(n >= 0);
	const struct kctl_md_topic *t = kctl_md_topic(md, topic);
	int32_t *leader = calloc((size_t)n + 1, sizeof *leader);
	int *idx = calloc((size_t)n + 1, sizeof *idx);
	char *done = calloc((size_t)n + 1, 1);
	int rc = leader && idx && done ? 0 : kctl_error("out of memory");
	for (int i = 0; i < n && rc == 0; i++) {
		out[i] = -1;
		leader[i] = -1;
		for (int32_t j = 0; t && j < t->nparts; j++)
			if (t->parts[j].id == parts[i])
				leader[i] = t->parts[j].leader;
		if (leader[i] < 0)
			done[i] = 1; /* no leader known: no offset */
	}
	for (int i = 0; i < n && rc == 0; i++) {
		if (done[i])
			continue;
		int k = 0;
		for (int j = i; j < n; j++)
			if (!done[j] && leader[j] == leader[i]) {
				idx[k++] = j;
				done[j] = 1;
			}
		const struct kctl_md_broker *b = kctl_md_broker(md, leader[i]);
		if (!b) {
			rc = kctl_error("%s/%d: leader %d is not among the brokers", topic,
					(int)parts[i], (int)leader[i]);
			break;
		}
		struct kctl_conn c;
		rc = kctl_admin_dial(a, b->host, b->port, &c);
		if (rc == 0)
			rc = list_from(&c, topic, parts, idx, k, ts, out);
		kctl_conn_close(&c);
	}
	free(leader);
	free(idx);
	free(done);
	return rc;
}
