/*
 * api_group_offsets.c — the wire side of committed offsets: OffsetCommit
 * 0–8 and OffsetFetch 0–8 (flexible from 8 and 6; OffsetFetch 8 asks for
 * several groups at once: they are fetched one after another).  OffsetCommit v0 names
 * no member: it commits as a client outside the group (generation -1), as
 * do later versions that send generation -1.  Each handler parses the request into a batch
 * of topics and partitions, calls the group coordinator
 * (broker/groups/groups.h), and encodes the answer when the coordinator's
 * completion runs — later on the loop thread, once the volume answered, or
 * at once.  Loop thread.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/groups/groups.h"
#include "kafka/group_wire.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/status.h"

#define METADATA_MAX 4096

/* One OffsetCommit or OffsetFetch in flight. */
struct offsets_call {
	struct kaas_req *req;
	int commit;                    /* OffsetCommit: the metadata strings are ours */
	int all;                       /* OffsetFetch of every topic */
	struct kaas_kslice *names;     /* the topics' names as sent */
	struct kaas_group_commit rq;   /* group, member, batch (fetch: group, batch) */
	/* OffsetFetch v8+: the groups asked for, read one at a time */
	struct kaas_kr groups;         /* at the next group of the request */
	int32_t ngroups, gi;           /* their count, the one being fetched */
	struct kaas_kslice gid;        /* its id as sent */
	struct kaas_completion next;   /* the next group, started from the loop */
	int require_stable;            /* OffsetFetch v7+: pending transactional
	                                  offsets answer UNSTABLE_OFFSET_COMMIT */
};

/* Free what c holds of one group's batch (c is reused for the next group
 * of an OffsetFetch v8). */
static void batch_reset(struct offsets_call *c)
{
	struct kaas_offset_batch *b = &c->rq.batch;
	for (int32_t i = 0; i < b->nt; i++) {
		for (int32_t j = 0; j < b->topics[i].n; j++)
			if (c->commit)
				free((char *)b->topics[i].parts[j].metadata);
		free(b->topics[i].parts);
		free((char *)b->topics[i].name);
	}
	free(b->topics);
	free(c->names);
	free((char *)c->rq.group);
	memset(b, 0, sizeof(*b));
	c->names = NULL;
	c->rq.group = NULL;
	c->all = 0;
}

static void call_free(void *arg)
{
	struct offsets_call *c = arg;
	batch_reset(c);
	free((char *)c->rq.member_id);
	free((char *)c->rq.instance_id);
	free(c);
}

/* A call for req, freed with it; NULL when out of memory (the connection
 * is closed). */
static struct offsets_call *call_new(struct kaas_req *req, int commit)
{
	struct offsets_call *c = kaas_req_ctx_new(req, sizeof(*c), call_free);
	if (c) {
		c->req = req;
		c->commit = commit;
	}
	return c;
}

/* A commit's metadata: 0 and *out (NULL: none), or the status refusing the
 * partition (-EMSGSIZE too large, -EINVAL holding a NUL, -ENOMEM). */
static int parse_metadata(struct kaas_kslice meta, const char **out)
{
	*out = NULL;
	if (meta.len > METADATA_MAX)
		return -EMSGSIZE;
	if (meta.len > 0 && memchr(meta.p, 0, (size_t)meta.len))
		return -EINVAL;
	if (meta.len >= 0 && !(*out = kaas_kslice_dup(meta)))
		return -ENOMEM;
	return 0;
}

/* Parse topics[name, partitions[...]] of a commit (commit = 1) or a fetch
 * into c: 0, or -1 when malformed (or out of memory). */
static int parse_topics(struct kaas_kr *r, struct offsets_call *c, int commit, int16_t v, int f)
{
	struct kaas_offset_batch *b = &c->rq.batch;
	int32_t nt = kaas_kr_array(r, f, f ? 3 : 6);
	if (!kaas_kr_ok(r))
		return -1;
	if (nt < 0) {
		if (commit || v < 2)
			return -1;
		c->all = 1;
		return 0;
	}
	b->topics = calloc((size_t)nt + 1, sizeof(*b->topics));
	c->names = calloc((size_t)nt + 1, sizeof(*c->names));
	if (!b->topics || !c->names)
		return -1;
	b->nt = nt;
	for (int32_t i = 0; i < nt && kaas_kr_ok(r); i++) {
		struct kaas_offset_topic *t = &b->topics[i];
		c->names[i] = kaas_kr_str(r, f);
		int32_t np = kaas_kr_array(r, f, 4);
		if (!kaas_kr_ok(r) || np < 0)
			return -1;
		if (!(t->parts = calloc((size_t)np + 1, sizeof(*t->parts))))
			return -1;
		t->n = np;
		struct kaas_kslice name = c->names[i];
		if (name.len > 0 && !memchr(name.p, 0, (size_t)name.len))
			t->name = kaas_kslice_dup(name); /* else NULL: no such topic */
		for (int32_t j = 0; j < np && kaas_kr_ok(r); j++) {
			struct kaas_offset_part *p = &t->parts[j];
			p->partition = kaas_kr_i32(r);
			p->offset = -1;
			p->leader_epoch = -1;
			if (commit) {
				p->offset = kaas_kr_i64(r);
				if (v >= 6)
					p->leader_epoch = kaas_kr_i32(r);
				if (v == 1)
					(void)kaas_kr_i64(r); /* commit_timestamp: the broker's time is kept */
				p->status = parse_metadata(kaas_kr_nstr(r, f), &p->metadata);
				kaas_kr_tags(r, f);
			} /* a fetch's partitions are a plain []int32: no tags */
		}
		kaas_kr_tags(r, f);
	}
	return kaas_kr_ok(r) ? 0 : -1;
}

/* ------------------------------------------------------------ OffsetCommit */

static int16_t part_kerr(int status)
{
	if (status == -EMSGSIZE)
		return KAAS_KERR_OFFSET_METADATA_TOO_LARGE;
	if (status == -EINVAL)
		return KAAS_KERR_INVALID_REQUEST;
	return kaas_group_kerr(status);
}

/* Answer a commit: each partition's own error, else `top`. */
static void write_commit(struct offsets_call *c, int16_t top)
{
	struct kaas_req *req = c->req;
	KAAS_REQ_IO(req);
	const struct kaas_offset_batch *b = &c->rq.batch;
	if (req->hdr.api_version >= 3)
		kaas_kw_i32(w, 0);
	kaas_kw_array(w, f, b->nt);
	for (int32_t i = 0; i < b->nt; i++) {
		kaas_kw_strn(w, f, c->names[i].p, c->names[i].len);
		kaas_kw_array(w, f, b->topics[i].n);
		for (int32_t j = 0; j < b->topics[i].n; j++) {
			const struct kaas_offset_part *p = &b->topics[i].parts[j];
			kaas_kw_i32(w, p->partition);
			kaas_kw_i16(w, p->status ? part_kerr(p->status) : top);
			kaas_kw_tags(w, f);
		}
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void commit_done(void *ctx, int status, struct kaas_offset_batch *batch)
{
	(void)batch; /* the call's own */
	write_commit(ctx, kaas_group_kerr(status));
}

void kaas_api_offset_commit(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct offsets_call *c = call_new(req, 1);
	if (!c)
		return;
	struct kaas_group_member_ref ref;
	if (v >= 1) {
		kaas_group_read_member(r, v, req->hdr.flex, 7, &ref);
	} else {
		/* v0: no member, no generation: a commit from outside the group. */
		ref = (struct kaas_group_member_ref){ .group = kaas_kr_str(r, 0), .generation = -1,
						      .member = { (const uint8_t *)"", 0 },
						      .instance = { NULL, -1 } };
	}
	if (v >= 2 && v <= 4)
		(void)kaas_kr_i64(r); /* retention_time_ms: offsets are kept */
	int bad = !kaas_kr_ok(r) || parse_topics(r, c, 1, v, req->hdr.flex) < 0;
	kaas_kr_tags(r, req->hdr.flex);
	if (bad || !kaas_kr_ok(r)) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	int16_t err = 0;
	int oom = 0;
	c->rq.generation = ref.generation;
	c->rq.member_id = kaas_kslice_dup(ref.member);
	c->rq.instance_id = kaas_group_opt_dup(ref.instance, &oom);
	c->rq.group = kaas_group_id_dup(ref.group, &err);
	if (!err && (!c->rq.member_id || oom))
		err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	if (err) {
		write_commit(c, err);
		return;
	}
	kaas_groups_commit(req->broker->groups, &c->rq, commit_done, c);
}

/* ------------------------------------------------------------ OffsetFetch */

static void fetch_part(struct kaas_kw *w, int16_t v, int f, const struct kaas_offset_part *p,
		       int16_t err)
{
	kaas_kw_i32(w, p->partition);
	kaas_kw_i64(w, !err ? p->offset : -1);
	if (v >= 5)
		kaas_kw_i32(w, !err ? p->leader_epoch : -1);
	kaas_kw_str(w, f, !err && p->metadata ? p->metadata : "");
	kaas_kw_i16(w, err);
	kaas_kw_tags(w, f);
}

/* A fetch's topics: `b` is what the coordinator filled in (for a fetch of
 * every topic, its own list); perr goes on every partition (v0-1, which
 * have no group-level error). */
static void write_fetch_topics(struct offsets_call *c, int16_t perr,
			       const struct kaas_offset_batch *b)
{
	KAAS_REQ_IO(c->req);
	kaas_kw_array(w, f, b->nt);
	for (int32_t i = 0; i < b->nt; i++) {
		const struct kaas_offset_topic *t = &b->topics[i];
		if (c->all)
			kaas_kw_str(w, f, t->name);
		else
			kaas_kw_strn(w, f, c->names[i].p, c->names[i].len);
		kaas_kw_array(w, f, t->n);
		for (int32_t j = 0; j < t->n; j++) {
			int16_t e = c->all ? 0 : perr;
			if (!e && c->require_stable && t->parts[j].status == KAAS_EUNSTABLE_OFFSET)
				e = KAAS_KERR_UNSTABLE_OFFSET_COMMIT; /* KIP-447 */
			fetch_part(w, v, f, &t->parts[j], e);
		}
		kaas_kw_tags(w, f);
	}
}

/* Answer a fetch (v8+: one group's entry, then the next group). */
static void write_fetch(struct offsets_call *c, int16_t err, const struct kaas_offset_batch *b)
{
	struct kaas_req *req = c->req;
	KAAS_REQ_IO(req);
	if (v >= 8) {
		kaas_kw_strn(w, f, c->gid.p, c->gid.len);
		write_fetch_topics(c, 0, b);
		kaas_kw_i16(w, err);
		kaas_kw_tags(w, f);
		if (++c->gi < c->ngroups) {
			/* Not from inside the coordinator's completion (nor by
			 * recursion when it answers at once): from the loop. */
			kaas_broker_complete(req->broker, &c->next);
			return;
		}
		kaas_kw_tags(w, f);
		kaas_req_finish(req, KAAS_REQ_RESPOND);
		return;
	}
	if (v >= 3)
		kaas_kw_i32(w, 0);
	write_fetch_topics(c, v >= 2 ? 0 : err, b);
	if (v >= 2)
		kaas_kw_i16(w, err);
	kaas_kw_tags(w, f);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void fetch_done(void *ctx, int status, struct kaas_offset_batch *batch)
{
	write_fetch(ctx, kaas_group_kerr(status), batch);
}

/* Fetch one group's offsets (its id and topics read from in): answered by
 * write_fetch, at once or when the coordinator completes. */
static void fetch_group(struct offsets_call *c, struct kaas_kr *in)
{
	int16_t v = c->req->hdr.api_version;
	int f = c->req->hdr.flex;
	c->gid = kaas_kr_str(in, f);
	(void)parse_topics(in, c, 0, v, f); /* checked whole before */
	kaas_kr_tags(in, f);
	int16_t err = 0;
	if (!(c->rq.group = kaas_group_id_dup(c->gid, &err))) {
		struct kaas_offset_batch none = { 0 };
		write_fetch(c, err, c->all ? &none : &c->rq.batch);
		return;
	}
	kaas_groups_fetch(c->req->broker->groups, c->rq.group, c->all ? NULL : &c->rq.batch,
			  fetch_done, c);
}

/* The next group of a v8 request (loop thread). */
static void next_group(struct kaas_completion *done)
{
	struct offsets_call *c =
		(struct offsets_call *)((char *)done - offsetof(struct offsets_call, next));
	batch_reset(c);
	fetch_group(c, &c->groups);
}

/* Walk a v8 request's groups without keeping anything: 0 and the count, or
 * -1 when malformed. */
static int32_t check_groups(struct offsets_call *c, struct kaas_kr *r, int16_t v, int f)
{
	int32_t n = kaas_kr_array(r, f, 3);
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		(void)kaas_kr_str(r, f);
		int bad = parse_topics(r, c, 0, v, f) < 0;
		batch_reset(c);
		kaas_kr_tags(r, f);
		if (bad)
			kaas_kr_fail(r);
	}
	return kaas_kr_ok(r) && n >= 0 ? n : -1;
}

void kaas_api_offset_fetch(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	struct offsets_call *c = call_new(req, 0);
	if (!c)
		return;
	c->groups = *r;
	if (v >= 8) {
		c->ngroups = check_groups(c, r, v, f);
		(void)kaas_kr_array(&c->groups, f, 3); /* positioned at the first group */
	} else if (kaas_kr_ok(r)) {
		(void)kaas_kr_str(r, f);
		if (parse_topics(r, c, 0, v, f) < 0)
			kaas_kr_fail(r);
		batch_reset(c);
	}
	if (v >= 7)
		c->require_stable = kaas_kr_i8(r) != 0;
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || c->ngroups < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	if (v < 8) {
		fetch_group(c, &c->groups);
		return;
	}
	kaas_kw_i32(w, 0); /* throttle */
	kaas_kw_array(w, f, c->ngroups);
	if (c->ngroups == 0) {
		kaas_kw_tags(w, f);
		kaas_req_finish(req, KAAS_REQ_RESPOND);
		return;
	}
	c->next.fn = next_group;
	fetch_group(c, &c->groups);
}
