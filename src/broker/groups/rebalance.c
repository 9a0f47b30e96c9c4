/*
 * rebalance.c — the group's membership state machine: members and their
 * lookup, the rebalance (Empty → PreparingRebalance → CompletingRebalance →
 * Stable), choosing the protocol and the leader, and completing the joins
 * and syncs that wait on it.  Loop thread.  See groups.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/groups/internal.h"
#include "util/logger.h"
#include "util/status.h"

struct group_member *kaas_groups_member(struct group *gr, const char *id)
{
	for (struct group_member *m = gr->members; m; m = m->next)
		if (strcmp(m->id, id) == 0)
			return m;
	return NULL;
}

struct group_member *kaas_groups_static_member(struct group *gr, const char *iid)
{
	if (!iid)
		return NULL;
	for (struct group_member *m = gr->members; m; m = m->next)
		if (m->instance_id && !m->pending && strcmp(iid, m->instance_id) == 0)
			return m;
	return NULL;
}

int kaas_groups_member_check(struct group *gr, const char *member_id, const char *instance_id,
			     struct group_member **out)
{
	*out = NULL;
	if (instance_id) {
		/* Kafka's order: the instance id must be registered, and to
		 * this member id. */
		struct group_member *st = kaas_groups_static_member(gr, instance_id);
		if (!st)
			return KAAS_EUNKNOWN_MEMBER;
		if (strcmp(st->id, member_id) != 0)
			return KAAS_EFENCED_INSTANCE;
		*out = st;
		return 0;
	}
	struct group_member *m = kaas_groups_member(gr, member_id);
	if (!m || m->pending)
		return KAAS_EUNKNOWN_MEMBER;
	*out = m;
	return 0;
}

int kaas_groups_count_members(const struct group *gr)
{
	int n = 0;
	for (const struct group_member *m = gr->members; m; m = m->next)
		n += !m->pending;
	return n;
}

void kaas_group_protocols_free(struct kaas_group_protocol *p, int n)
{
	for (int i = 0; p && i < n; i++) {
		free(p[i].name);
		free(p[i].meta);
	}
	free(p);
}

void kaas_groups_member_free(struct group_member *m)
{
	char *owned[] = { m->id, m->instance_id, m->client_id, m->client_host };
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		free(owned[i]);
	kaas_group_protocols_free(m->prot, m->nprot);
	free(m->assignment);
	free(m);
}

/* ------------------------------------------------------------ answers */

void kaas_groups_answer_join(kaas_group_join_done done, void *ctx, const struct group *gr,
			     int status, const char *member_id, int with_members,
			     const char *leader)
{
	struct kaas_group_joined res = { .status = status, .member_id = member_id ? member_id : "",
					 .generation = -1 };
	struct kaas_group_member_info *v = NULL;
	assert(with_members >= GROUP_JOIN_ALONE && with_members <= GROUP_JOIN_SKIP);
	if (!status) {
		res.generation = gr->generation;
		res.protocol = gr->protocol;
		res.leader = leader ? leader : gr->leader;
		res.skip_assignment = with_members == GROUP_JOIN_SKIP;
	}
	if (!status && with_members) {
		assert(gr->protocol); /* chosen at the rebalance that made the leader */
		v = calloc((size_t)kaas_groups_count_members(gr) + 1, sizeof(*v));
		if (!v)
			res = (struct kaas_group_joined){ .status = -ENOMEM, .member_id = res.member_id,
							  .generation = -1 };
		for (const struct group_member *m = v ? gr->members : NULL; m; m = m->next) {
			if (m->pending)
				continue;
			struct kaas_group_member_info *x = &v[res.nmembers++];
			x->id = m->id;
			x->instance_id = m->instance_id;
			for (int i = 0; i < m->nprot; i++)
				if (strcmp(m->prot[i].name, gr->protocol) == 0) {
					x->meta = m->prot[i].meta;
					x->meta_len = m->prot[i].meta_len;
				}
		}
		res.members = v;
	}
	done(ctx, &res);
	free(v);
}

void kaas_groups_answer_waiting(struct group_member *m, int status)
{
	if (m->join_done) {
		kaas_group_join_done fn = m->join_done;
		m->join_done = NULL;
		kaas_groups_answer_join(fn, m->join_ctx, NULL, status, m->id, 0, NULL);
	}
	if (m->sync_done) {
		kaas_group_sync_done fn = m->sync_done;
		m->sync_done = NULL;
		fn(m->sync_ctx, status, NULL, 0, NULL, NULL);
	}
}

void kaas_groups_remove_member(struct group *gr, struct group_member *m, int status)
{
	struct group_member **pp = &gr->members;
	while (*pp && *pp != m)
		pp = &(*pp)->next;
	assert(*pp == m);
	*pp = m->next;
	kaas_groups_answer_waiting(m, status);
	assert(!m->join_done && !m->sync_done);
	if (gr->leader && strcmp(gr->leader, m->id) == 0) {
		free(gr->leader);
		gr->leader = NULL;
	}
	kaas_groups_member_free(m);
}

/* ------------------------------------------------------------ rebalance */

const char *kaas_groups_choose_protocol(const struct group *gr)
{
	const char *best = NULL;
	int best_votes = -1;
	const struct group_member *first = NULL;
	for (const struct group_member *m = gr->members; m; m = m->next)
		if (!m->pending) {
			first = m;
			break;
		}
	if (!first)
		return NULL;
	for (int i = 0; i < first->nprot; i++) {
		const char *cand = first->prot[i].name;
		int all = 1, votes = 0;
		for (const struct group_member *m = gr->members; m && all; m = m->next) {
			if (m->pending)
				continue;
			int has = 0;
			for (int j = 0; j < m->nprot; j++)
				if (strcmp(m->prot[j].name, cand) == 0)
					has = 1;
			all = has;
			/* A member votes for its first protocol supported by all;
			 * approximated by its first protocol. */
			if (m->nprot > 0 && strcmp(m->prot[0].name, cand) == 0)
				votes++;
		}
		if (all && votes > best_votes) {
			best = cand;
			best_votes = votes;
		}
	}
	return best;
}

/* A static leader that did not rejoin cannot assign: as Kafka, hand the
 * leadership to a member that did; a group with no leader takes its first
 * joined member. */
static void choose_leader(struct group *gr)
{
	struct group_member *lm = gr->leader ? kaas_groups_member(gr, gr->leader) : NULL;
	if (lm && !lm->join_done) {
		for (struct group_member *m = gr->members; m; m = m->next) {
			char *id = m->join_done ? strdup(m->id) : NULL;
			if (id) {
				free(gr->leader);
				gr->leader = id;
				break;
			}
		}
	}
	if (!gr->leader) {
		for (struct group_member *m = gr->members; m; m = m->next)
			if (!m->pending) {
				gr->leader = strdup(m->id);
				break;
			}
	}
}

static void complete_join(struct group *gr)
{
	assert(gr->state == GROUP_PREPARING);
	/* Dynamic members that did not rejoin in time leave the group; static
	 * ones stay until their session times out (KIP-345: the leader
	 * assigns them as before, and they get it back when they return). */
	gr->initial_delay = 0;
	gr->new_member_added = 0;
	for (struct group_member *m = gr->members, *n; m; m = n) {
		n = m->next;
		if (!m->pending && !m->join_done && !m->instance_id) {
			kaas_info("group %s: member %s did not rejoin; removed", gr->id, m->id);
			kaas_groups_remove_member(gr, m, KAAS_EUNKNOWN_MEMBER);
		}
	}
	gr->generation++;
	free(gr->protocol);
	gr->protocol = NULL;
	if (kaas_groups_count_members(gr) == 0) {
		gr->state = GROUP_EMPTY;
		gr->empty_since_ms = kaas_groups_wall_ms(); /* offsets expire from now on */
		/* The protocol type stays (DescribeGroups, ListGroups), as
		 * Kafka's: the next first member sets it again. */
		kaas_info("group %s: generation %d, empty", gr->id, gr->generation);
		return;
	}
	const char *p = kaas_groups_choose_protocol(gr);
	gr->protocol = p ? strdup(p) : NULL;
	choose_leader(gr);
	if (!gr->protocol || !gr->leader) {
		/* Out of memory or no common protocol: nobody can proceed. */
		for (struct group_member *m = gr->members; m; m = m->next)
			kaas_groups_answer_waiting(m, KAAS_EPROTOCOL_MISMATCH);
		gr->state = GROUP_PREPARING;
		gr->rebalance_deadline_ms = kaas_now_ms() + 1000;
		return;
	}
	gr->state = GROUP_COMPLETING;
	kaas_info("group %s: generation %d with %d member(s), protocol %s, leader %s", gr->id,
		  gr->generation, kaas_groups_count_members(gr), gr->protocol, gr->leader);
	uint64_t now = kaas_now_ms();
	for (struct group_member *m = gr->members; m; m = m->next) {
		if (m->pending || !m->join_done)
			continue;
		free(m->assignment);
		m->assignment = NULL;
		m->assignment_len = 0;
		m->last_seen_ms = now;
		kaas_group_join_done fn = m->join_done;
		m->join_done = NULL;
		kaas_groups_answer_join(fn, m->join_ctx, gr, 0, m->id, strcmp(m->id, gr->leader) == 0,
					NULL);
	}
}

void kaas_groups_try_complete(struct group *gr)
{
	if (gr->state != GROUP_PREPARING)
		return;
	if (gr->initial_delay) {
		/* Kafka's InitialDelayedJoin: complete only when the delay
		 * passed with no newcomer, or the rebalance timeout is spent. */
		uint64_t now = kaas_now_ms();
		if (now < gr->rebalance_deadline_ms)
			return;
		if (gr->new_member_added && gr->initial_remaining_ms > 0) {
			int32_t d = gr->reg->initial_delay_ms;
			if (d > gr->initial_remaining_ms)
				d = gr->initial_remaining_ms;
			gr->initial_remaining_ms -= d;
			gr->new_member_added = 0;
			gr->rebalance_deadline_ms = now + (uint64_t)d;
			return;
		}
		complete_join(gr);
		return;
	}
	int all = 1;
	for (struct group_member *m = gr->members; m; m = m->next)
		if (!m->pending && !m->join_done)
			all = 0;
	if (all || kaas_now_ms() >= gr->rebalance_deadline_ms)
		complete_join(gr);
}

static void prepare_rebalance(struct group *gr)
{
	if (gr->state == GROUP_COMPLETING)
		for (struct group_member *m = gr->members; m; m = m->next)
			if (m->sync_done) {
				kaas_group_sync_done fn = m->sync_done;
				m->sync_done = NULL;
				fn(m->sync_ctx, KAAS_EREBALANCING, NULL, 0, NULL, NULL);
			}
	int32_t max_ms = 0;
	for (struct group_member *m = gr->members; m; m = m->next)
		if (!m->pending && m->rebalance_ms > max_ms)
			max_ms = m->rebalance_ms;
	if (gr->state != GROUP_PREPARING)
		kaas_info("group %s: rebalancing (generation %d)", gr->id, gr->generation);
	int32_t delay = gr->reg->initial_delay_ms;
	if (gr->state == GROUP_EMPTY && delay > 0) {
		/* The first members of an empty group: wait for more. */
		if (delay > max_ms)
			delay = max_ms;
		gr->initial_delay = 1;
		gr->new_member_added = 0;
		gr->initial_remaining_ms = max_ms - delay;
		max_ms = delay;
	}
	gr->state = GROUP_PREPARING;
	gr->rebalance_deadline_ms = kaas_now_ms() + (uint64_t)max_ms;
	kaas_groups_try_complete(gr);
}

void kaas_groups_park_join(struct group *gr, struct group_member *m, kaas_group_join_done done,
			   void *ctx)
{
	assert(!m->join_done && !m->pending);
	m->join_done = done;
	m->join_ctx = ctx;
	if (gr->state == GROUP_PREPARING)
		kaas_groups_try_complete(gr);
	else
		prepare_rebalance(gr);
}

void kaas_groups_member_left(struct group *gr)
{
	if (gr->state == GROUP_STABLE || gr->state == GROUP_COMPLETING)
		prepare_rebalance(gr);
	else
		kaas_groups_try_complete(gr);
	if (kaas_groups_count_members(gr) == 0 && gr->state == GROUP_EMPTY)
		kaas_groups_maybe_free(gr);
}
