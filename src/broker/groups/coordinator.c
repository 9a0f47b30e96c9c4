/*
 * coordinator.c — the registry of groups this broker coordinates: which
 * slot (and epoch) a group belongs to, looking groups up and dropping their
 * state when the slot moves or changes epoch, and the expiry timer.  Loop
 * thread, except kaas_groups_coordinator_epoch.  See groups.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "broker/groups/internal.h"
#include "util/logger.h"
#include "cluster/assignment.h"
#include "util/status.h"

#define GROUPS_TICK_MS 100

const char *kaas_groups_state_name(enum group_state s)
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
 * group's slot (and has taken its assignment up), else the status.  Any
 * thread (the agent's accessors lock). */
int kaas_groups_slot_owner(struct kaas_groups *g, int32_t slot, uint64_t *epoch)
{
	struct kaas_broker *b = g->b;
	int32_t leader;
	uint32_t e;
	*epoch = 0;
	if (!b->agent || kaas_agent_leader(b->agent, KAAS_COORDINATOR_TOPIC, slot, &leader, &e) < 0)
		return KAAS_ENO_COORDINATOR;
	if (leader != b->cfg.broker_id)
		return KAAS_ENOT_COORDINATOR;
	/* Led by this broker id: the lease says whether this life may serve it
	 * (a restarted broker waits for an assignment naming its new epoch). */
	if (!kaas_agent_lease(b->agent, KAAS_COORDINATOR_TOPIC, slot, &e) ||
	    kaas_agent_fenced(b->agent))
		return KAAS_ENO_COORDINATOR;
	*epoch = e;
	return 0;
}

static int slot_owner(struct kaas_groups *g, const char *group, uint64_t *epoch)
{
	if (!g->b->agent) {
		*epoch = 0;
		return KAAS_ENO_COORDINATOR;
	}
	return kaas_groups_slot_owner(
		g, kaas_agent_coordinator_slot(g->b->agent, group, strlen(group)), epoch);
}

uint64_t kaas_groups_coordinator_epoch(struct kaas_groups *g, const char *group)
{
	uint64_t epoch;
	return slot_owner(g, group, &epoch) == 0 ? epoch : 0;
}

struct group *kaas_groups_lookup(struct kaas_groups *g, const char *id, int create)
{
	GROUPS_ON_LOOP(g);
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

static void group_free(struct group *gr)
{
	while (gr->members) {
		struct group_member *m = gr->members;
		gr->members = m->next;
		kaas_groups_member_free(m);
	}
	kaas_group_offsets_free(&gr->offs);
	kaas_groups_txn_free(gr);
	free(gr->id);
	free(gr->protocol_type);
	free(gr->protocol);
	free(gr->leader);
	free(gr);
}

void kaas_groups_maybe_free(struct group *gr)
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

/* Forget the in-memory state of a group this broker no longer coordinates
 * at `epoch`: waiting requests complete KAAS_ENOT_COORDINATOR, members are
 * removed (they rejoin), committed offsets are reloaded at the current
 * epoch by the next operation.  May free the group. */
static void group_drop(struct group *gr, uint64_t epoch)
{
	if (gr->members || gr->loaded)
		kaas_info("group %s: coordinator epoch %llu -> %llu; dropping its in-memory state",
			  gr->id, (unsigned long long)gr->epoch, (unsigned long long)epoch);
	while (gr->members)
		kaas_groups_remove_member(gr, gr->members, KAAS_ENOT_COORDINATOR);
	gr->state = GROUP_EMPTY;
	gr->initial_delay = 0;
	free(gr->protocol_type);
	free(gr->protocol);
	gr->protocol_type = gr->protocol = NULL;
	gr->noffs = 0; /* not known at the new epoch (discover.c finds it) */
	if (gr->op_running) {
		gr->reload = 1; /* the work thread owns offs: the op's end unloads */
	} else {
		gr->loaded = 0;
		kaas_group_offsets_free(&gr->offs);
		memset(&gr->offs, 0, sizeof(gr->offs));
	}
	gr->epoch = epoch;
	kaas_groups_maybe_free(gr);
}

int kaas_groups_check(struct kaas_groups *g, const char *id)
{
	GROUPS_ON_LOOP(g);
	uint64_t epoch = 0;
	int err = g->b->draining ? KAAS_ENOT_COORDINATOR : slot_owner(g, id, &epoch);
	struct group *gr = kaas_groups_lookup(g, id, 0);
	if (gr && (err || gr->epoch != epoch))
		group_drop(gr, epoch);
	return err;
}

/* ------------------------------------------------------------ the timer */

static void answer_all_for_shutdown(struct kaas_groups *g)
{
	for (struct group *gr = g->list; gr; gr = gr->next)
		for (struct group_member *m = gr->members; m; m = m->next)
			kaas_groups_answer_waiting(m, KAAS_ENOT_COORDINATOR);
}

static void on_tick(uv_timer_t *t)
{
	struct kaas_groups *g = t->data;
	GROUPS_ON_LOOP(g);
	if (g->b->draining) {
		answer_all_for_shutdown(g);
		kaas_groups_discover_flush(g);
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
	/* Slots taken over: find their groups. */
	kaas_groups_discover_tick(g);
	uint64_t now = kaas_now_ms();
	for (struct group *gr = g->list, *gn; gr; gr = gn) {
		gn = gr->next;
		int left = 0;
		for (struct group_member *m = gr->members, *n; m; m = n) {
			n = m->next;
			if (m->join_done && gr->state == GROUP_PREPARING)
				continue; /* waiting for the rebalance: alive */
			if (now - m->last_seen_ms > (uint64_t)m->session_ms) {
				kaas_info("group %s: member %s session timed out after %d ms; removed",
					  gr->id, m->id, m->session_ms);
				left += !m->pending;
				kaas_groups_remove_member(gr, m, KAAS_EUNKNOWN_MEMBER);
			}
		}
		if (left)
			kaas_groups_member_left(gr);
		else
			kaas_groups_try_complete(gr);
	}
	if (now >= g->next_expiry_ms) { /* once a second */
		g->next_expiry_ms = now + 1000;
		for (struct group *gr = g->list; gr; gr = gr->next)
			kaas_groups_expire_offsets(gr);
	}
}

int kaas_groups_init(struct kaas_broker *b, struct kaas_groups **out)
{
	struct kaas_groups *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->b = b;
	g->initial_delay_ms = b->cfg.group_initial_rebalance_delay_ms;
	g->retention_ms = b->cfg.offsets_retention_ms > 0 ? b->cfg.offsets_retention_ms
							  : 7LL * 24 * 3600 * 1000;
	g->loop_thread = pthread_self();
	g->nslots = b->cfg.coordinator_slots > 0 ? b->cfg.coordinator_slots : 1;
	if (!(g->slots = calloc((size_t)g->nslots, sizeof(*g->slots)))) {
		free(g);
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

void kaas_groups_start(struct kaas_groups *g)
{
	GROUPS_ON_LOOP(g);
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
	while (g->waiters) { /* answered while draining; none is left to call */
		struct group_load_waiter *w = g->waiters;
		g->waiters = w->next;
		free(w);
	}
	free(g->slots);
	free(g);
}
