/*
 * membership.c — the membership operations of the group coordinator:
 * JoinGroup (new, returning and static members), SyncGroup, Heartbeat and
 * LeaveGroup, each checked against the coordinator slot, the member and the
 * generation before it moves the state machine (rebalance.c).  Loop thread.
 * See groups.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/broker.h"
#include "broker/groups/internal.h"
#include "util/logger.h"
#include "util/status.h"

/* A fresh member id: "<client id>-<wall clock>-<sequence>". */
static char *new_member_id(struct kaas_groups *g, const char *client_id)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	size_t len = strlen(client_id);
	int cl = len > 100 ? 100 : (int)len;
	char buf[200];
	snprintf(buf, sizeof(buf), "%.*s-%llx-%llx-%llu", cl, client_id,
		 (unsigned long long)ts.tv_sec, (unsigned long long)ts.tv_nsec,
		 (unsigned long long)++g->member_seq);
	return strdup(buf);
}

static int same_protocols(const struct group_member *m, const struct kaas_group_protocol *p, int n)
{
	if (m->nprot != n)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(m->prot[i].name, p[i].name) || m->prot[i].meta_len != p[i].meta_len ||
		    (p[i].meta_len && memcmp(m->prot[i].meta, p[i].meta, (size_t)p[i].meta_len)))
			return 0;
	return 1;
}

/* Does the group (its members but `self`) share a protocol with the list? */
static int compatible(const struct group *gr, const char *ptype, const struct kaas_group_protocol *p,
		      int n, const struct group_member *self)
{
	int count = kaas_groups_count_members(gr);
	if (count == 0 || (count == 1 && self && !self->pending))
		return 1;
	if (!gr->protocol_type || strcmp(gr->protocol_type, ptype) != 0)
		return 0;
	for (int i = 0; i < n; i++) {
		int all = 1;
		for (const struct group_member *m = gr->members; m && all; m = m->next) {
			if (m->pending || m == self)
				continue;
			int has = 0;
			for (int j = 0; j < m->nprot; j++)
				if (strcmp(m->prot[j].name, p[i].name) == 0)
					has = 1;
			all = has;
		}
		if (all)
			return 1;
	}
	return 0;
}

/* Take the join's protocols, timeouts and client into member m. */
static void member_update(struct group_member *m, struct kaas_group_join *rq)
{
	kaas_group_protocols_free(m->prot, m->nprot);
	m->prot = rq->prot;
	m->nprot = rq->nprot;
	rq->prot = NULL;
	m->session_ms = rq->session_ms;
	m->rebalance_ms = rq->rebalance_ms > 0 ? rq->rebalance_ms : rq->session_ms;
	m->last_seen_ms = kaas_now_ms();
}

/* A static member comes back (a join with no member id, its instance id
 * registered to `m`): it takes m's place under a new member id, keeping
 * m's assignment; the old member id is fenced (its waiting requests get
 * KAAS_EFENCED_INSTANCE now, later ones by kaas_groups_member_check); a
 * leader's new id leads the group.  In a Stable group whose chosen protocol
 * does not change it is answered at once with the current generation; the
 * others see nothing.  A returning leader whose client understands
 * SkipAssignment (JoinGroup v9+, KIP-814) is answered as the leader, with
 * the members and SkipAssignment (it keeps the current assignment but
 * watches for metadata changes, as Kafka); an older client is answered, as
 * Kafka does, with the leader id from before the replacement and no
 * members (so it does not compute an assignment a Stable group would not
 * hand out).  Otherwise it rebalances. */
static void static_rejoin(struct kaas_groups *g, struct group *gr, struct group_member *m,
			  struct kaas_group_join *rq, kaas_group_join_done done, void *ctx)
{
	char *new_id = new_member_id(g, rq->client_id);
	char *old_leader = gr->leader ? strdup(gr->leader) : NULL;
	int was_leader = gr->leader && strcmp(gr->leader, m->id) == 0;
	char *new_leader = was_leader && new_id ? strdup(new_id) : NULL;
	if (!new_id || (gr->leader && !old_leader) || (was_leader && !new_leader)) {
		free(new_id);
		free(old_leader);
		free(new_leader);
		kaas_groups_answer_join(done, ctx, gr, -ENOMEM, "", 0, NULL);
		return;
	}
	kaas_groups_answer_waiting(m, KAAS_EFENCED_INSTANCE);
	kaas_info("group %s: static member %s rejoined as %s, replacing %s", gr->id,
		  m->instance_id, new_id, m->id);
	free(m->id);
	m->id = new_id;
	if (was_leader) {
		free(gr->leader);
		gr->leader = new_leader;
	}
	member_update(m, rq);
	char *cid = strdup(rq->client_id);
	char *host = strdup(rq->client_host);
	if (cid && host) {
		free(m->client_id);
		free(m->client_host);
		m->client_id = cid;
		m->client_host = host;
	} else {
		free(cid);
		free(host);
	}
	const char *next = gr->state == GROUP_STABLE ? kaas_groups_choose_protocol(gr) : NULL;
	if (next && gr->protocol && strcmp(next, gr->protocol) == 0 && was_leader &&
	    rq->skip_assignment_ok)
		kaas_groups_answer_join(done, ctx, gr, 0, m->id, GROUP_JOIN_SKIP, NULL);
	else if (next && gr->protocol && strcmp(next, gr->protocol) == 0)
		kaas_groups_answer_join(done, ctx, gr, 0, m->id, GROUP_JOIN_ALONE, old_leader);
	else
		kaas_groups_park_join(gr, m, done, ctx); /* Completing: the leader may be
							   * assigning the old member id;
							   * rebalance so the new one
							   * gets its share. */
	free(old_leader);
}

/* A new member: 0 with *out (linked into the group), or the status it was
 * answered with (the join is complete). */
static int new_member(struct kaas_groups *g, struct group *gr, struct kaas_group_join *rq,
		      kaas_group_join_done done, void *ctx, struct group_member **out)
{
	struct group_member *m = calloc(1, sizeof(*m));
	if (!m || !(m->id = new_member_id(g, rq->client_id))) {
		free(m);
		kaas_groups_answer_join(done, ctx, gr, -ENOMEM, rq->member_id, 0, NULL);
		return -ENOMEM;
	}
	m->client_id = strdup(rq->client_id);
	m->client_host = strdup(rq->client_host);
	m->next = gr->members;
	gr->members = m;
	m->session_ms = rq->session_ms;
	m->last_seen_ms = kaas_now_ms();
	if (rq->require_member_id && !rq->instance_id) {
		/* KIP-394: hand out the id; the member joins with it. */
		m->pending = 1;
		kaas_groups_answer_join(done, ctx, gr, KAAS_EMEMBER_ID_REQUIRED, m->id, 0, NULL);
		return KAAS_EMEMBER_ID_REQUIRED;
	}
	*out = m;
	return 0;
}

void kaas_groups_join(struct kaas_groups *g, struct kaas_group_join *rq, kaas_group_join_done done,
		      void *ctx)
{
	GROUPS_ON_LOOP(g);
	assert(rq->nprot > 0 && rq->protocol_type[0]);
	struct group *gr = NULL;
	struct group_member *m = NULL;
	int err = kaas_groups_check(g, rq->group);
	if (!err && !(gr = kaas_groups_lookup(g, rq->group, 1)))
		err = -ENOMEM;
	struct group_member *st = !err ? kaas_groups_static_member(gr, rq->instance_id) : NULL;
	if (!err && rq->member_id[0]) {
		m = kaas_groups_member(gr, rq->member_id);
		if (st && st != m)
			err = KAAS_EFENCED_INSTANCE; /* replaced by a newer incarnation */
		else if (!m)
			err = KAAS_EUNKNOWN_MEMBER;
	}
	if (!err && !compatible(gr, rq->protocol_type, rq->prot, rq->nprot, m ? m : st))
		err = KAAS_EPROTOCOL_MISMATCH;
	if (err) {
		if (err == KAAS_EFENCED_INSTANCE)
			kaas_info("group %s: member %s of instance %s fenced (the instance is %s now)",
				  gr->id, rq->member_id, rq->instance_id, st->id);
		kaas_groups_answer_join(done, ctx, gr, err, rq->member_id, 0, NULL);
		goto out;
	}
	if (!m && st) {
		static_rejoin(g, gr, st, rq, done, ctx);
		goto out;
	}
	int is_new = 0;
	if (!m) {
		if (new_member(g, gr, rq, done, ctx, &m) < 0)
			goto out;
		is_new = 1;
	}
	if (m->pending) {
		m->pending = 0;
		is_new = 1;
	}
	if (rq->instance_id && !m->instance_id) {
		/* A static member's first join (KIP-345: no MEMBER_ID_REQUIRED
		 * round trip) registers its instance id. */
		m->instance_id = strdup(rq->instance_id);
		kaas_info("group %s: static member %s joined as %s", gr->id, m->instance_id, m->id);
	}
	if (is_new && gr->initial_delay)
		gr->new_member_added = 1;
	int changed = is_new || !same_protocols(m, rq->prot, rq->nprot);
	member_update(m, rq);
	if (!gr->protocol_type || (is_new && kaas_groups_count_members(gr) == 1)) {
		/* The group's first member sets its protocol type (an Empty
		 * group keeps the last one until then); out of memory: the
		 * old one stays. */
		char *pt = strdup(rq->protocol_type);
		if (pt) {
			free(gr->protocol_type);
			gr->protocol_type = pt;
		}
	}
	if (m->join_done) {
		kaas_group_join_done old = m->join_done;
		m->join_done = NULL;
		kaas_groups_answer_join(old, m->join_ctx, gr, KAAS_EREBALANCING, m->id, 0, NULL);
	}
	int is_leader = gr->leader && strcmp(gr->leader, m->id) == 0;
	if (gr->state == GROUP_COMPLETING && !changed)
		kaas_groups_answer_join(done, ctx, gr, 0, m->id, is_leader, NULL);
	else if (gr->state == GROUP_STABLE && !changed && !is_leader)
		kaas_groups_answer_join(done, ctx, gr, 0, m->id, 0, NULL);
	else
		kaas_groups_park_join(gr, m, done, ctx);
out:
	kaas_group_protocols_free(rq->prot, rq->nprot);
	rq->prot = NULL;
}

/* SyncGroup and Heartbeat: find member `member_id` (instance `iid`) of
 * `group` and check it is at generation `gen` and the group not
 * rebalancing.  0 with *gr and *m, or the status (*m may still be set: the
 * member exists). */
static int member_at(struct kaas_groups *g, const char *group, const char *member_id,
		     const char *iid, int32_t gen, struct group **gr, struct group_member **m)
{
	*m = NULL;
	*gr = NULL;
	int err = kaas_groups_check(g, group);
	if (err)
		return err;
	if (!(*gr = kaas_groups_lookup(g, group, 0)))
		return KAAS_EUNKNOWN_MEMBER;
	err = kaas_groups_member_check(*gr, member_id, iid, m);
	if (err)
		return err;
	if (gen != (*gr)->generation)
		return KAAS_EILLEGAL_GENERATION;
	if ((*gr)->state == GROUP_PREPARING)
		return KAAS_EREBALANCING;
	return 0;
}

/* The leader's assignments: copy them to the members. */
static void take_assignments(struct group *gr, const struct kaas_group_sync *rq)
{
	for (int32_t i = 0; i < rq->nassign; i++) {
		const struct kaas_group_assignment *a = &rq->assign[i];
		for (struct group_member *x = gr->members; x; x = x->next) {
			if (x->pending || a->member_id_len < 0 ||
			    strlen(x->id) != (size_t)a->member_id_len ||
			    memcmp(x->id, a->member_id, (size_t)a->member_id_len) != 0)
				continue;
			free(x->assignment);
			x->assignment = NULL;
			x->assignment_len = 0;
			if (a->len > 0 && (x->assignment = malloc((size_t)a->len))) {
				memcpy(x->assignment, a->data, (size_t)a->len);
				x->assignment_len = a->len;
			}
		}
	}
}

void kaas_groups_sync(struct kaas_groups *g, const struct kaas_group_sync *rq,
		      kaas_group_sync_done done, void *ctx)
{
	GROUPS_ON_LOOP(g);
	struct group *gr;
	struct group_member *m;
	int err = member_at(g, rq->group, rq->member_id, rq->instance_id, rq->generation, &gr, &m);
	if (!err && gr->state != GROUP_COMPLETING && gr->state != GROUP_STABLE)
		err = KAAS_EUNKNOWN_MEMBER;
	if (err) {
		done(ctx, err, NULL, 0, NULL, NULL);
		return;
	}
	m->last_seen_ms = kaas_now_ms();
	if (gr->state == GROUP_STABLE) {
		done(ctx, 0, m->assignment, m->assignment_len, gr->protocol_type, gr->protocol);
		return;
	}
	assert(gr->state == GROUP_COMPLETING);
	if (m->sync_done) {
		kaas_group_sync_done old = m->sync_done;
		m->sync_done = NULL;
		old(m->sync_ctx, KAAS_EREBALANCING, NULL, 0, NULL, NULL);
	}
	m->sync_done = done;
	m->sync_ctx = ctx;
	if (!gr->leader || strcmp(gr->leader, m->id) != 0)
		return;
	take_assignments(gr, rq);
	gr->state = GROUP_STABLE;
	kaas_info("group %s: generation %d stable", gr->id, gr->generation);
	for (struct group_member *x = gr->members; x; x = x->next) {
		if (x->sync_done) {
			kaas_group_sync_done fn = x->sync_done;
			x->sync_done = NULL;
			fn(x->sync_ctx, 0, x->assignment, x->assignment_len, gr->protocol_type,
			   gr->protocol);
		}
	}
}

int kaas_groups_heartbeat(struct kaas_groups *g, const char *group, const char *member_id,
			  const char *instance_id, int32_t generation)
{
	GROUPS_ON_LOOP(g);
	struct group *gr;
	struct group_member *m;
	int err = member_at(g, group, member_id, instance_id, generation, &gr, &m);
	if (!err && (gr->state == GROUP_EMPTY || gr->state == GROUP_DEAD))
		err = KAAS_EUNKNOWN_MEMBER;
	if (m && (err == 0 || err == KAAS_EREBALANCING))
		m->last_seen_ms = kaas_now_ms();
	return err;
}

int kaas_groups_leave(struct kaas_groups *g, const char *group, struct kaas_group_leaver *v, int n)
{
	GROUPS_ON_LOOP(g);
	int err = kaas_groups_check(g, group);
	if (err)
		return err;
	struct group *gr = kaas_groups_lookup(g, group, 0);
	int left = 0;
	for (int i = 0; i < n; i++) {
		const char *mid = v[i].member_id, *iid = v[i].instance_id;
		struct group_member *m = NULL;
		int e = KAAS_EUNKNOWN_MEMBER;
		if (gr && mid && iid) {
			/* By instance id (KIP-345): the member id, when given,
			 * must be the instance's current one. */
			m = kaas_groups_static_member(gr, iid);
			e = !m ? KAAS_EUNKNOWN_MEMBER
			    : mid[0] && strcmp(mid, m->id) ? KAAS_EFENCED_INSTANCE : 0;
			if (e)
				m = NULL;
		} else if (gr && mid) {
			m = kaas_groups_member(gr, mid);
			e = m ? 0 : KAAS_EUNKNOWN_MEMBER;
		}
		if (m) {
			kaas_info("group %s: member %s%s%s left", gr->id, m->id,
				  m->instance_id ? " of instance " : "",
				  m->instance_id ? m->instance_id : "");
			left += !m->pending;
			kaas_groups_remove_member(gr, m, KAAS_EUNKNOWN_MEMBER);
		}
		v[i].status = e;
	}
	if (gr && left)
		kaas_groups_member_left(gr);
	return 0;
}
