/*
 * groups.c — group membership: JoinGroup 0–5, SyncGroup 0–3, Heartbeat 0–3,
 * LeaveGroup 0–3, the rebalance state machine and the expiry timer.  All on
 * the loop thread.  See groups.h.
 */
#include "broker/groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "util/logger.h"
#include "cluster/assignment.h"
#include "kafka/protocol.h"

#define GROUPS_TICK_MS 100
#define MIN_SESSION_MS 1000
#define MAX_SESSION_MS 1800000

/* ------------------------------------------------------------ registry */

const char *kaas_group_state_name(enum group_state s)
{
	switch (s) {
	case GROUP_EMPTY: return "Empty";
	case GROUP_PREPARING: return "PreparingRebalance";
	case GROUP_COMPLETING: return "CompletingRebalance";
	case GROUP_STABLE: return "Stable";
	default: return "Dead";
	}
}

/* Who coordinates `group` now: 0 with *epoch when this broker leads the
 * group's slot (and has taken its assignment up), else the Kafka error. */
static int16_t slot_owner(struct kaas_groups *g, const char *group, uint64_t *epoch)
{
	struct kaas_broker *b = g->b;
	int32_t leader;
	uint32_t e;
	*epoch = 0;
	if (!b->agent || kaas_agent_coordinator(b->agent, group, strlen(group), &leader, &e) < 0)
		return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	if (leader != b->cfg.broker_id)
		return KAAS_KERR_NOT_COORDINATOR;
	/* Led by this broker id: the lease says whether this life may serve it
	 * (a restarted broker waits for an assignment naming its new epoch). */
	int32_t slot = kaas_agent_coordinator_slot(b->agent, group, strlen(group));
	if (!kaas_agent_lease(b->agent, KAAS_COORDINATOR_TOPIC, slot, &e) ||
	    kaas_agent_fenced(b->agent))
		return KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
	*epoch = e;
	return 0;
}

uint64_t kaas_groups_coordinator_epoch(struct kaas_groups *g, const char *group)
{
	uint64_t epoch;
	return slot_owner(g, group, &epoch) == 0 ? epoch : 0;
}

struct group *kaas_group_lookup(struct kaas_groups *g, const char *id, int create)
{
	for (struct group *gr = g->list; gr; gr = gr->next)
		if (strcmp(gr->id, id) == 0)
			return gr;
	if (!create)
		return NULL;
	struct group *gr = calloc(1, sizeof(*gr));
	if (!gr || !(gr->id = strdup(id))) {
		free(gr);
		return NULL;
	}
	gr->reg = g;
	gr->epoch = kaas_groups_coordinator_epoch(g, id);
	gr->next = g->list;
	g->list = gr;
	return gr;
}

struct group_member *kaas_group_member(struct group *gr, const char *id)
{
	for (struct group_member *m = gr->members; m; m = m->next)
		if (strcmp(m->id, id) == 0)
			return m;
	return NULL;
}

/* The member registered under instance id `iid` (a static member). */
static struct group_member *static_member(struct group *gr, struct kaas_kslice iid)
{
	if (iid.len < 0)
		return NULL;
	for (struct group_member *m = gr->members; m; m = m->next)
		if (m->instance_id && !m->pending && kaas_kslice_eq(iid, m->instance_id))
			return m;
	return NULL;
}

int16_t kaas_group_member_check(struct group *gr, const char *member_id,
				struct kaas_kslice instance_id, struct group_member **out)
{
	*out = NULL;
	if (instance_id.len >= 0) {
		/* Kafka's order: the instance id must be registered, and to
		 * this member id. */
		struct group_member *st = static_member(gr, instance_id);
		if (!st)
			return KAAS_KERR_UNKNOWN_MEMBER_ID;
		if (strcmp(st->id, member_id) != 0)
			return KAAS_KERR_FENCED_INSTANCE_ID;
		*out = st;
		return 0;
	}
	struct group_member *m = kaas_group_member(gr, member_id);
	if (!m || m->pending)
		return KAAS_KERR_UNKNOWN_MEMBER_ID;
	*out = m;
	return 0;
}

static void protocols_free(struct group_member *m)
{
	for (int i = 0; i < m->nprot; i++) {
		free(m->prot[i].name);
		free(m->prot[i].meta);
	}
	free(m->prot);
	m->prot = NULL;
	m->nprot = 0;
}

static void member_free(struct group_member *m)
{
	protocols_free(m);
	free(m->id);
	free(m->instance_id);
	free(m->client_id);
	free(m->client_host);
	free(m->assignment);
	free(m);
}

static void group_free(struct group *gr)
{
	while (gr->members) {
		struct group_member *m = gr->members;
		gr->members = m->next;
		member_free(m);
	}
	kaas_group_offsets_free(&gr->offs);
	free(gr->id);
	free(gr->protocol_type);
	free(gr->protocol);
	free(gr->leader);
	free(gr);
}

void kaas_group_maybe_free(struct group *gr)
{
	if (gr->members || gr->loaded || gr->ops_head || gr->op_running)
		return;
	struct kaas_groups *g = gr->reg;
	for (struct group **pp = &g->list; *pp; pp = &(*pp)->next) {
		if (*pp == gr) {
			*pp = gr->next;
			group_free(gr);
			return;
		}
	}
}

static int count_members(const struct group *gr)
{
	int n = 0;
	for (const struct group_member *m = gr->members; m; m = m->next)
		n += !m->pending;
	return n;
}

/* ------------------------------------------------------------ responses */

/* A JoinGroup answer; `leader` is the leader id to name (NULL: the
 * group's). */
static void finish_join_as(struct kaas_req *req, const struct group *gr, int16_t err,
			   const char *member_id, int with_members, const char *leader)
{
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	if (!leader && !err)
		leader = gr->leader;
	if (v >= 2)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_i32(w, err ? -1 : gr->generation);
	kaas_kw_str(w, 0, err || !gr->protocol ? "" : gr->protocol);
	kaas_kw_str(w, 0, err || !leader ? "" : leader);
	kaas_kw_str(w, 0, member_id ? member_id : "");
	if (!with_members || err) {
		kaas_kw_array(w, 0, 0);
	} else {
		kaas_kw_array(w, 0, count_members(gr));
		for (const struct group_member *m = gr->members; m; m = m->next) {
			if (m->pending)
				continue;
			const struct group_protocol *p = NULL;
			for (int i = 0; i < m->nprot; i++)
				if (strcmp(m->prot[i].name, gr->protocol) == 0)
					p = &m->prot[i];
			kaas_kw_str(w, 0, m->id);
			if (v >= 5)
				kaas_kw_str(w, 0, m->instance_id);
			kaas_kw_bytes(w, 0, p ? p->meta : (const uint8_t *)"", p ? p->meta_len : 0);
		}
	}
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void finish_join(struct kaas_req *req, const struct group *gr, int16_t err,
			const char *member_id, int with_members)
{
	finish_join_as(req, gr, err, member_id, with_members, NULL);
}

static void finish_sync(struct kaas_req *req, int16_t err, const uint8_t *a, int32_t len)
{
	struct kaas_kw *w = &req->w;
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_bytes(w, 0, err ? (const uint8_t *)"" : (a ? a : (const uint8_t *)""),
		      err ? 0 : (a ? len : 0));
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

static void finish_error(struct kaas_req *req, int16_t err)
{
	struct kaas_kw *w = &req->w;
	if (req->hdr.api_version >= 1)
		kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
}

/* ------------------------------------------------------------ rebalance */

static void answer_parked(struct group_member *m, int16_t err)
{
	if (m->join) {
		struct kaas_req *r = m->join;
		m->join = NULL;
		finish_join(r, NULL, err, m->id, 0);
	}
	if (m->sync) {
		struct kaas_req *r = m->sync;
		m->sync = NULL;
		finish_sync(r, err, NULL, 0);
	}
}

static void remove_member(struct group *gr, struct group_member *m, int16_t err)
{
	for (struct group_member **pp = &gr->members; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	answer_parked(m, err);
	if (gr->leader && strcmp(gr->leader, m->id) == 0) {
		free(gr->leader);
		gr->leader = NULL;
	}
	member_free(m);
}

/* The protocol every member supports, by the members' first preferences. */
static const char *choose_protocol(const struct group *gr)
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

static void complete_join(struct group *gr)
{
	/* Dynamic members that did not rejoin in time leave the group; static
	 * ones stay until their session times out (KIP-345: the leader
	 * assigns them as before, and they get it back when they return). */
	gr->initial_delay = 0;
	gr->new_member_added = 0;
	for (struct group_member *m = gr->members, *n; m; m = n) {
		n = m->next;
		if (!m->pending && !m->join && !m->instance_id) {
			kaas_info("group %s: member %s did not rejoin; removed", gr->id, m->id);
			remove_member(gr, m, KAAS_KERR_UNKNOWN_MEMBER_ID);
		}
	}
	gr->generation++;
	free(gr->protocol);
	gr->protocol = NULL;
	if (count_members(gr) == 0) {
		gr->state = GROUP_EMPTY;
		free(gr->protocol_type);
		gr->protocol_type = NULL;
		kaas_info("group %s: generation %d, empty", gr->id, gr->generation);
		return;
	}
	const char *p = choose_protocol(gr);
	gr->protocol = p ? strdup(p) : NULL;
	/* A static leader that did not rejoin cannot assign: as Kafka, hand
	 * the leadership to a member that did. */
	struct group_member *lm = gr->leader ? kaas_group_member(gr, gr->leader) : NULL;
	if (lm && !lm->join) {
		for (struct group_member *m = gr->members; m; m = m->next) {
			char *id = m->join ? strdup(m->id) : NULL;
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
	if (!gr->protocol || !gr->leader) {
		/* Out of memory or no common protocol: nobody can proceed. */
		for (struct group_member *m = gr->members; m; m = m->next)
			answer_parked(m, KAAS_KERR_INCONSISTENT_GROUP_PROTOCOL);
		gr->state = GROUP_PREPARING;
		gr->rebalance_deadline_ms = kaas_now_ms() + 1000;
		return;
	}
	gr->state = GROUP_COMPLETING;
	kaas_info("group %s: generation %d with %d member(s), protocol %s, leader %s", gr->id,
		  gr->generation, count_members(gr), gr->protocol, gr->leader);
	uint64_t now = kaas_now_ms();
	for (struct group_member *m = gr->members; m; m = m->next) {
		if (m->pending || !m->join)
			continue;
		free(m->assignment);
		m->assignment = NULL;
		m->assignment_len = 0;
		m->last_seen_ms = now;
		struct kaas_req *r = m->join;
		m->join = NULL;
		finish_join(r, gr, 0, m->id, strcmp(m->id, gr->leader) == 0);
	}
}

static void try_complete(struct group *gr)
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
		if (!m->pending && !m->join)
			all = 0;
	if (all || kaas_now_ms() >= gr->rebalance_deadline_ms)
		complete_join(gr);
}

static void prepare_rebalance(struct group *gr)
{
	if (gr->state == GROUP_COMPLETING)
		for (struct group_member *m = gr->members; m; m = m->next)
			if (m->sync) {
				struct kaas_req *r = m->sync;
				m->sync = NULL;
				finish_sync(r, KAAS_KERR_REBALANCE_IN_PROGRESS, NULL, 0);
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
	try_complete(gr);
}

/* Park member m's JoinGroup req until the rebalance answers it: a group
 * already preparing may now be complete; any other starts a rebalance. */
static void park_join(struct group *gr, struct group_member *m, struct kaas_req *req)
{
	m->join = req;
	if (gr->state == GROUP_PREPARING)
		try_complete(gr);
	else
		prepare_rebalance(gr);
}

static void member_left(struct group *gr)
{
	if (gr->state == GROUP_STABLE || gr->state == GROUP_COMPLETING)
		prepare_rebalance(gr);
	else
		try_complete(gr);
	if (count_members(gr) == 0 && gr->state == GROUP_EMPTY)
		kaas_group_maybe_free(gr);
}

/* ------------------------------------------------------------ coordination */

/* Forget the in-memory state of a group this broker no longer coordinates
 * at `epoch`: parked requests get NOT_COORDINATOR, members are removed (they
 * rejoin), committed offsets are reloaded at the current epoch by the next
 * operation.  May free the group. */
static void group_drop(struct group *gr, uint64_t epoch)
{
	if (gr->members || gr->loaded)
		kaas_info("group %s: coordinator epoch %llu -> %llu; dropping its in-memory state",
			  gr->id, (unsigned long long)gr->epoch, (unsigned long long)epoch);
	while (gr->members)
		remove_member(gr, gr->members, KAAS_KERR_NOT_COORDINATOR);
	gr->state = GROUP_EMPTY;
	gr->initial_delay = 0;
	free(gr->protocol_type);
	free(gr->protocol);
	gr->protocol_type = gr->protocol = NULL;
	if (gr->op_running) {
		gr->reload = 1; /* the work thread owns offs: op_done unloads */
	} else {
		gr->loaded = 0;
		kaas_group_offsets_free(&gr->offs);
		memset(&gr->offs, 0, sizeof(gr->offs));
	}
	gr->epoch = epoch;
	kaas_group_maybe_free(gr);
}

int16_t kaas_groups_check(struct kaas_groups *g, const char *id)
{
	uint64_t epoch = 0;
	int16_t err = g->b->draining ? KAAS_KERR_NOT_COORDINATOR : slot_owner(g, id, &epoch);
	struct group *gr = kaas_group_lookup(g, id, 0);
	if (gr && (err || gr->epoch != epoch))
		group_drop(gr, epoch);
	return err;
}

/* ------------------------------------------------------------ the timer */

static void answer_all_for_shutdown(struct kaas_groups *g)
{
	for (struct group *gr = g->list; gr; gr = gr->next)
		for (struct group_member *m = gr->members; m; m = m->next)
			answer_parked(m, KAAS_KERR_NOT_COORDINATOR);
}

static void on_tick(uv_timer_t *t)
{
	struct kaas_groups *g = t->data;
	if (g->b->draining) {
		answer_all_for_shutdown(g);
		if (!g->closed) {
			g->closed = 1;
			uv_close((uv_handle_t *)&g->tick, NULL);
		}
		return;
	}
	/* Groups whose slot moved away or changed epoch lose their state. */
	for (struct group *gr = g->list, *gn; gr; gr = gn) {
		gn = gr->next;
		(void)kaas_groups_check(g, gr->id);
	}
	uint64_t now = kaas_now_ms();
	for (struct group *gr = g->list, *gn; gr; gr = gn) {
		gn = gr->next;
		int left = 0;
		for (struct group_member *m = gr->members, *n; m; m = n) {
			n = m->next;
			if (m->join && gr->state == GROUP_PREPARING)
				continue; /* waiting for the rebalance: alive */
			if (now - m->last_seen_ms > (uint64_t)m->session_ms) {
				kaas_info("group %s: member %s session timed out after %d ms; removed",
					  gr->id, m->id, m->session_ms);
				left += !m->pending;
				remove_member(gr, m, KAAS_KERR_UNKNOWN_MEMBER_ID);
			}
		}
		if (left)
			member_left(gr);
		else
			try_complete(gr);
	}
}

int kaas_groups_init(struct kaas_broker *b, struct kaas_groups **out)
{
	struct kaas_groups *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->b = b;
	g->initial_delay_ms = b->cfg.group_initial_rebalance_delay_ms;
	*out = g;
	return 0;
}

void kaas_groups_start(struct kaas_groups *g)
{
	uv_timer_init(g->b->loop, &g->tick);
	g->tick.data = g;
	g->started = 1;
	uv_timer_start(&g->tick, on_tick, GROUPS_TICK_MS, GROUPS_TICK_MS);
}

void kaas_groups_destroy(struct kaas_groups *g)
{
	if (!g)
		return;
	while (g->list) {
		struct group *gr = g->list;
		g->list = gr->next;
		group_free(gr);
	}
	free(g);
}

/* ------------------------------------------------------------ requests */

/* Copy a group id out of the request; NULL (and *err) if invalid. */
static char *group_id_dup(struct kaas_kslice s, int16_t *err)
{
	if (s.len <= 0 || memchr(s.p, 0, (size_t)s.len)) {
		*err = KAAS_KERR_INVALID_GROUP_ID;
		return NULL;
	}
	char *id = kaas_kslice_dup(s);
	if (!id)
		*err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	return id;
}

static char *new_member_id(struct kaas_groups *g, struct kaas_req *req)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int cl = req->hdr.client_id.len > 0 ? req->hdr.client_id.len : 0;
	if (cl > 100)
		cl = 100;
	char buf[200];
	snprintf(buf, sizeof(buf), "%.*s-%llx-%llx-%llu", cl,
		 cl ? (const char *)req->hdr.client_id.p : "", (unsigned long long)ts.tv_sec,
		 (unsigned long long)ts.tv_nsec, (unsigned long long)++g->member_seq);
	return strdup(buf);
}

static int same_protocols(const struct group_member *m, const struct group_protocol *p, int n)
{
	if (m->nprot != n)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(m->prot[i].name, p[i].name) || m->prot[i].meta_len != p[i].meta_len ||
		    (p[i].meta_len && memcmp(m->prot[i].meta, p[i].meta, (size_t)p[i].meta_len)))
			return 0;
	return 1;
}

static void free_protocol_list(struct group_protocol *p, int n)
{
	for (int i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].meta);
	}
	free(p);
}

/* Does the group (its members) share a protocol with the list? */
static int compatible(const struct group *gr, const char *ptype, const struct group_protocol *p,
		      int n, const struct group_member *self)
{
	if (count_members(gr) == 0 || (count_members(gr) == 1 && self && !self->pending))
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

/* Where a member's client connects from, as Kafka shows it: "/ip". */
static char *client_host(struct kaas_req *req)
{
	char host[80];
	snprintf(host, sizeof(host), "/%s", kaas_conn_peer(req->conn));
	char *colon = strrchr(host, ':');
	if (colon && colon != host + 1)
		*colon = '\0';
	return strdup(host);
}

/* A static member comes back (JoinGroup with no member id, its instance id
 * registered to `m`): it takes m's place under a new member id, keeping
 * m's assignment; the old member id is fenced (its parked requests get
 * FENCED_INSTANCE_ID now, later ones by kaas_group_member_check).  In a
 * Stable group whose chosen protocol does not change it is answered at once
 * with the current generation and, as Kafka does, the leader id from before
 * the replacement (so a returning leader does not compute an assignment a
 * Stable group would not hand out); the others see nothing.  Otherwise it
 * rebalances.  Takes `prot`. */
static void static_rejoin(struct kaas_groups *g, struct kaas_req *req, struct group *gr,
			  struct group_member *m, struct group_protocol *prot, int n,
			  int32_t session_ms, int32_t rebalance_ms)
{
	char *new_id = new_member_id(g, req);
	char *old_leader = gr->leader ? strdup(gr->leader) : NULL;
	int was_leader = gr->leader && strcmp(gr->leader, m->id) == 0;
	char *new_leader = was_leader && new_id ? strdup(new_id) : NULL;
	if (!new_id || (gr->leader && !old_leader) || (was_leader && !new_leader)) {
		free(new_id);
		free(old_leader);
		free(new_leader);
		free_protocol_list(prot, n);
		finish_join(req, gr, KAAS_KERR_UNKNOWN_SERVER_ERROR, "", 0);
		return;
	}
	answer_parked(m, KAAS_KERR_FENCED_INSTANCE_ID);
	kaas_info("group %s: static member %s rejoined as %s, replacing %s", gr->id,
		  m->instance_id, new_id, m->id);
	free(m->id);
	m->id = new_id;
	if (was_leader) {
		free(gr->leader);
		gr->leader = new_leader;
	}
	protocols_free(m);
	m->prot = prot;
	m->nprot = n;
	m->session_ms = session_ms;
	m->rebalance_ms = rebalance_ms > 0 ? rebalance_ms : session_ms;
	m->last_seen_ms = kaas_now_ms();
	char *cid = req->hdr.client_id.len > 0 ? kaas_kslice_dup(req->hdr.client_id) : strdup("");
	char *host = client_host(req);
	if (cid && host) {
		free(m->client_id);
		free(m->client_host);
		m->client_id = cid;
		m->client_host = host;
	} else {
		free(cid);
		free(host);
	}
	const char *next = gr->state == GROUP_STABLE ? choose_protocol(gr) : NULL;
	if (next && gr->protocol && strcmp(next, gr->protocol) == 0)
		finish_join_as(req, gr, 0, m->id, 0, old_leader);
	else
		park_join(gr, m, req); /* Completing: the leader may be assigning the
					* old member id; rebalance so the new one
					* gets its share. */
	free(old_leader);
}

void kaas_api_join_group(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kr *r = &req->r;
	int16_t v = req->hdr.api_version;
	struct kaas_kslice gid = kaas_kr_str(r, 0);
	int32_t session_ms = kaas_kr_i32(r);
	int32_t rebalance_ms = v >= 1 ? kaas_kr_i32(r) : session_ms;
	struct kaas_kslice mid = kaas_kr_str(r, 0);
	struct kaas_kslice iid = { NULL, -1 };
	if (v >= 5)
		iid = kaas_kr_nstr(r, 0);
	struct kaas_kslice ptype = kaas_kr_str(r, 0);
	int32_t n = kaas_kr_array(r, 0, 6);
	if (!kaas_kr_ok(r) || n < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	struct group_protocol *prot = calloc((size_t)n + 1, sizeof(*prot));
	int16_t err = prot ? 0 : KAAS_KERR_UNKNOWN_SERVER_ERROR;
	for (int32_t i = 0; prot && i < n && kaas_kr_ok(r); i++) {
		struct kaas_kslice name = kaas_kr_str(r, 0);
		struct kaas_kslice meta = kaas_kr_nbytes(r, 0);
		if (!kaas_kr_ok(r))
			break;
		prot[i].name = kaas_kslice_dup(name);
		prot[i].meta_len = meta.len > 0 ? meta.len : 0;
		prot[i].meta = malloc((size_t)prot[i].meta_len + 1);
		if (!prot[i].name || !prot[i].meta)
			err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
		else if (meta.len > 0)
			memcpy(prot[i].meta, meta.p, (size_t)meta.len);
	}
	if (!kaas_kr_ok(r)) {
		free_protocol_list(prot, n);
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id = err ? NULL : group_id_dup(gid, &err);
	char *member_id = err ? NULL : kaas_kslice_dup(mid);
	char *ptype_s = err ? NULL : kaas_kslice_dup(ptype);
	struct group *gr = NULL;
	struct group_member *m = NULL;
	if (!err && (!member_id || !ptype_s))
		err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	if (!err && (session_ms < MIN_SESSION_MS || session_ms > MAX_SESSION_MS))
		err = KAAS_KERR_INVALID_SESSION_TIMEOUT;
	if (!err && (n == 0 || ptype.len <= 0))
		err = KAAS_KERR_INCONSISTENT_GROUP_PROTOCOL;
	if (!err && iid.len >= 0 && (iid.len == 0 || memchr(iid.p, 0, (size_t)iid.len)))
		err = KAAS_KERR_INVALID_REQUEST; /* an empty or NUL-bearing instance id */
	if (!err)
		err = kaas_groups_check(g, id);
	if (!err && !(gr = kaas_group_lookup(g, id, 1)))
		err = KAAS_KERR_UNKNOWN_SERVER_ERROR;
	struct group_member *st = !err ? static_member(gr, iid) : NULL;
	if (!err && member_id[0]) {
		m = kaas_group_member(gr, member_id);
		if (st && st != m)
			err = KAAS_KERR_FENCED_INSTANCE_ID; /* replaced by a newer incarnation */
		else if (!m)
			err = KAAS_KERR_UNKNOWN_MEMBER_ID;
	}
	if (!err && !compatible(gr, ptype_s, prot, n, m ? m : st))
		err = KAAS_KERR_INCONSISTENT_GROUP_PROTOCOL;
	if (err) {
		if (err == KAAS_KERR_FENCED_INSTANCE_ID)
			kaas_info("group %s: member %s of instance %.*s fenced (the instance is %s now)",
				  gr->id, member_id, iid.len, (const char *)iid.p, st->id);
		finish_join(req, gr, err, member_id, 0);
		goto out;
	}
	if (!m && st) {
		static_rejoin(g, req, gr, st, prot, n, session_ms, rebalance_ms);
		prot = NULL;
		goto out;
	}
	int is_new = 0;
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m || !(m->id = new_member_id(g, req))) {
			free(m);
			finish_join(req, gr, KAAS_KERR_UNKNOWN_SERVER_ERROR, member_id, 0);
			goto out;
		}
		m->client_id = req->hdr.client_id.len > 0 ? kaas_kslice_dup(req->hdr.client_id)
							  : strdup("");
		m->client_host = client_host(req);
		m->next = gr->members;
		gr->members = m;
		m->session_ms = session_ms;
		m->last_seen_ms = kaas_now_ms();
		if (v >= 4 && iid.len < 0) {
			/* KIP-394: hand out the id; the member joins with it. */
			m->pending = 1;
			finish_join(req, gr, KAAS_KERR_MEMBER_ID_REQUIRED, m->id, 0);
			goto out;
		}
		is_new = 1;
	}
	if (m->pending) {
		m->pending = 0;
		is_new = 1;
	}
	if (iid.len >= 0 && !m->instance_id) {
		/* A static member's first join (KIP-345: no MEMBER_ID_REQUIRED
		 * round trip) registers its instance id. */
		m->instance_id = kaas_kslice_dup(iid);
		kaas_info("group %s: static member %s joined as %s", gr->id, m->instance_id, m->id);
	}
	if (is_new && gr->initial_delay)
		gr->new_member_added = 1;
	int changed = is_new || !same_protocols(m, prot, n);
	protocols_free(m);
	m->prot = prot;
	m->nprot = n;
	prot = NULL;
	m->session_ms = session_ms;
	m->rebalance_ms = rebalance_ms > 0 ? rebalance_ms : session_ms;
	m->last_seen_ms = kaas_now_ms();
	if (!gr->protocol_type) {
		gr->protocol_type = ptype_s;
		ptype_s = NULL;
	}
	if (m->join) {
		struct kaas_req *old = m->join;
		m->join = NULL;
		finish_join(old, gr, KAAS_KERR_REBALANCE_IN_PROGRESS, m->id, 0);
	}
	int is_leader = gr->leader && strcmp(gr->leader, m->id) == 0;
	if (gr->state == GROUP_COMPLETING && !changed)
		finish_join(req, gr, 0, m->id, is_leader);
	else if (gr->state == GROUP_STABLE && !changed && !is_leader)
		finish_join(req, gr, 0, m->id, 0);
	else
		park_join(gr, m, req);
out:
	if (prot)
		free_protocol_list(prot, n);
	free(id);
	free(member_id);
	free(ptype_s);
}

/* SyncGroup and Heartbeat: find the member `mid` (instance `iid`, len < 0
 * when absent) of group `gid` and check it is at generation `gen` and the
 * group not rebalancing.  Returns 0 with *gr and *m, or the Kafka error (*m
 * may still be set: the member exists).  *id and *member_id are malloc'd
 * copies (or NULL): the caller frees both. */
static int16_t member_at(struct kaas_groups *g, struct kaas_kslice gid, struct kaas_kslice mid,
			 struct kaas_kslice iid, int32_t gen, char **id, char **member_id,
			 struct group **gr, struct group_member **m)
{
	int16_t err = 0;
	*id = group_id_dup(gid, &err);
	if (*id)
		err = kaas_groups_check(g, *id);
	*member_id = *id ? kaas_kslice_dup(mid) : NULL;
	*gr = *member_id && !err ? kaas_group_lookup(g, *id, 0) : NULL;
	*m = NULL;
	if (err)
		return err;
	if (!*gr)
		return KAAS_KERR_UNKNOWN_MEMBER_ID;
	err = kaas_group_member_check(*gr, *member_id, iid, m);
	if (err)
		return err;
	if (gen != (*gr)->generation)
		return KAAS_KERR_ILLEGAL_GENERATION;
	if ((*gr)->state == GROUP_PREPARING)
		return KAAS_KERR_REBALANCE_IN_PROGRESS;
	return 0;
}

void kaas_api_sync_group(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kr *r = &req->r;
	int16_t v = req->hdr.api_version;
	struct kaas_kslice gid = kaas_kr_str(r, 0);
	int32_t gen = kaas_kr_i32(r);
	struct kaas_kslice mid = kaas_kr_str(r, 0);
	struct kaas_kslice iid = { NULL, -1 };
	if (v >= 3)
		iid = kaas_kr_nstr(r, 0);
	int32_t n = kaas_kr_array(r, 0, 6);
	const uint8_t *assign_at = r->p;
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
		(void)kaas_kr_str(r, 0);
		(void)kaas_kr_nbytes(r, 0);
	}
	if (!kaas_kr_ok(r)) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id = NULL, *member_id = NULL;
	struct group *gr = NULL;
	struct group_member *m = NULL;
	int16_t err = member_at(g, gid, mid, iid, gen, &id, &member_id, &gr, &m);
	if (!err && gr->state != GROUP_COMPLETING && gr->state != GROUP_STABLE)
		err = KAAS_KERR_UNKNOWN_MEMBER_ID;
	if (err) {
		finish_sync(req, err, NULL, 0);
		goto out;
	}
	m->last_seen_ms = kaas_now_ms();
	if (gr->state == GROUP_STABLE) {
		finish_sync(req, 0, m->assignment, m->assignment_len);
		goto out;
	}
	if (m->sync) {
		struct kaas_req *old = m->sync;
		m->sync = NULL;
		finish_sync(old, KAAS_KERR_REBALANCE_IN_PROGRESS, NULL, 0);
	}
	m->sync = req;
	if (!gr->leader || strcmp(gr->leader, m->id) != 0)
		goto out;
	/* The leader's assignments: copy them to the members, go stable. */
	struct kaas_kr ar;
	kaas_kr_init(&ar, assign_at, (size_t)(r->end - assign_at));
	for (int32_t i = 0; i < n; i++) {
		struct kaas_kslice to = kaas_kr_str(&ar, 0);
		struct kaas_kslice a = kaas_kr_nbytes(&ar, 0);
		for (struct group_member *x = gr->members; x; x = x->next) {
			if (x->pending || !kaas_kslice_eq(to, x->id))
				continue;
			free(x->assignment);
			x->assignment = NULL;
			x->assignment_len = 0;
			if (a.len > 0 && (x->assignment = malloc((size_t)a.len))) {
				memcpy(x->assignment, a.p, (size_t)a.len);
				x->assignment_len = a.len;
			}
		}
	}
	gr->state = GROUP_STABLE;
	kaas_info("group %s: generation %d stable", gr->id, gr->generation);
	for (struct group_member *x = gr->members; x; x = x->next) {
		if (x->sync) {
			struct kaas_req *sr = x->sync;
			x->sync = NULL;
			finish_sync(sr, 0, x->assignment, x->assignment_len);
		}
	}
out:
	free(id);
	free(member_id);
}

void kaas_api_heartbeat(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kr *r = &req->r;
	struct kaas_kslice gid = kaas_kr_str(r, 0);
	int32_t gen = kaas_kr_i32(r);
	struct kaas_kslice mid = kaas_kr_str(r, 0);
	struct kaas_kslice iid = { NULL, -1 };
	if (req->hdr.api_version >= 3)
		iid = kaas_kr_nstr(r, 0);
	if (!kaas_kr_ok(r)) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	char *id = NULL, *member_id = NULL;
	struct group *gr = NULL;
	struct group_member *m = NULL;
	int16_t err = member_at(g, gid, mid, iid, gen, &id, &member_id, &gr, &m);
	if (!err && (gr->state == GROUP_EMPTY || gr->state == GROUP_DEAD))
		err = KAAS_KERR_UNKNOWN_MEMBER_ID;
	if (m && (err == 0 || err == KAAS_KERR_REBALANCE_IN_PROGRESS))
		m->last_seen_ms = kaas_now_ms();
	finish_error(req, err);
	free(id);
	free(member_id);
}

void kaas_api_leave_group(struct kaas_req *req)
{
	struct kaas_groups *g = req->broker->groups;
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	struct kaas_kslice gid = kaas_kr_str(r, 0);
	struct kaas_kslice one = { NULL, -1 };
	int32_t n = 1;
	const uint8_t *list_at = NULL;
	if (v >= 3) {
		n = kaas_kr_array(r, 0, 4);
		list_at = r->p;
		for (int32_t i = 0; i < n && kaas_kr_ok(r); i++) {
			(void)kaas_kr_str(r, 0);
			(void)kaas_kr_nstr(r, 0);
		}
	} else {
		one = kaas_kr_str(r, 0);
	}
	if (!kaas_kr_ok(r) || n < 0) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return;
	}
	int16_t err = 0;
	char *id = group_id_dup(gid, &err);
	if (id)
		err = kaas_groups_check(g, id);
	struct group *gr = id && !err ? kaas_group_lookup(g, id, 0) : NULL;
	if (v >= 1)
		kaas_kw_i32(w, 0);
	struct kaas_kr lr;
	if (list_at)
		kaas_kr_init(&lr, list_at, (size_t)(r->end - list_at));
	int left = 0;
	int16_t top = err;
	if (v >= 3) {
		/* v3: per-member errors; the top-level one only for the group id. */
		kaas_kw_i16(w, err);
		kaas_kw_array(w, 0, err ? 0 : n);
	}
	for (int32_t i = 0; !err && i < n; i++) {
		struct kaas_kslice ms = one, is = { NULL, -1 };
		if (list_at) {
			ms = kaas_kr_str(&lr, 0);
			is = kaas_kr_nstr(&lr, 0);
		}
		char *member_id = kaas_kslice_dup(ms);
		struct group_member *m = NULL;
		int16_t e = KAAS_KERR_UNKNOWN_MEMBER_ID;
		if (gr && member_id && is.len >= 0) {
			/* v3+ by instance id (KIP-345): the member id, when
			 * given, must be the instance's current one. */
			m = static_member(gr, is);
			e = !m ? KAAS_KERR_UNKNOWN_MEMBER_ID
			    : member_id[0] && strcmp(member_id, m->id) ? KAAS_KERR_FENCED_INSTANCE_ID
									: 0;
			if (e)
				m = NULL;
		} else if (gr && member_id) {
			m = kaas_group_member(gr, member_id);
			e = m ? 0 : KAAS_KERR_UNKNOWN_MEMBER_ID;
		}
		if (m) {
			kaas_info("group %s: member %s%s%s left", gr->id, m->id,
				  m->instance_id ? " of instance " : "",
				  m->instance_id ? m->instance_id : "");
			left += !m->pending;
			remove_member(gr, m, KAAS_KERR_UNKNOWN_MEMBER_ID);
		}
		if (v >= 3) {
			kaas_kw_strn(w, 0, ms.p, ms.len);
			kaas_kw_strn(w, 0, is.p, is.len);
			kaas_kw_i16(w, e);
		} else {
			top = e;
		}
		free(member_id);
	}
	if (v < 3)
		kaas_kw_i16(w, top);
	kaas_req_finish(req, KAAS_REQ_RESPOND);
	if (gr && left)
		member_left(gr);
	free(id);
}
