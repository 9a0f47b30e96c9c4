/*
 * discover.c — a coordinator that takes a slot over finds the slot's groups
 * on the volume, as Kafka's coordinator loads the groups of an offsets
 * partition it becomes leader of (issue 33).  Without it a group nobody
 * touched since the takeover was not in memory: Dead in DescribeGroups and
 * missing from ListGroups although its offsets were committed, and its
 * offsets never expired.
 *
 * The loop thread notes the epoch of every coordinator slot (the timer,
 * and each question below); a slot led at an epoch its groups were not
 * found at is "loading".  One discovery at a time runs on the work queue:
 * it lists groups/, names each directory (kaas_group_name_of_dir), keeps
 * the groups of the loading slots whose newest offsets document holds a
 * commit (kaas_group_has_state: read-only, nothing taken over), and hands
 * them to the loop, which queues each one's load at the slot's epoch
 * (offsets.c; the load claims the group's fence as any first operation
 * does) and counts it in ListGroups at once.  DescribeGroups and ListGroups
 * wait (kaas_groups_await_load) while a slot they may name is loading, and
 * answer COORDINATOR_LOAD_IN_PROGRESS, as Kafka does, if it takes longer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "broker/groups/internal.h"
#include "contract/contract.h"
#include "util/logger.h"
#include "util/status.h"

#define DISCOVER_RETRY_MS 1000

struct found {
	char *name;
	int32_t slot;
	size_t noffs;
};

struct discovery {
	struct kaas_groups *g;
	uint64_t *epochs;         /* per slot: the epoch found at (0: not in this one) */
	struct found *found;
	size_t n, cap;
	int rc;
};

static void discovery_free(struct discovery *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->found[i].name);
	free(d->found);
	free(d->epochs);
	free(d);
}

/* Work queue: the groups of the discovery's slots that hold commits. */
static void discover_work(void *arg)
{
	struct discovery *d = arg;
	struct kaas_broker *b = d->g->b;
	struct kaas_dirlist l = { 0 };
	/* Fresh: a cached "no such name" for groups/ (this host looked before
	 * the first commit) would lose every group of the slots. */
	int rc = kaas_list_fresh(b->cluster, KAAS_GROUPS_DIR, &l);
	if (rc == -ENOENT)
		rc = 0; /* no group ever */
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		char *name = NULL;
		if (l.types[i] == KAAS_FT_FILE || l.names[i][0] == '.' ||
		    kaas_group_name_of_dir(b->cluster, l.names[i], &name) < 0)
			continue; /* a temp, a stray, a cut name never committed to */
		int32_t slot = kaas_agent_coordinator_slot(b->agent, name, strlen(name));
		size_t n = 0;
		int st = slot >= 0 && slot < d->g->nslots && d->epochs[slot]
				 ? kaas_group_has_state(b->cluster, name, &n)
				 : 0;
		if (st < 0)
			kaas_warn("group %s: cannot read its committed offsets at takeover: %s (%s)",
				  name, kaas_strerror(st), kaas_sub_errdetail());
		if (st <= 0 || n == 0) {
			free(name);
			continue;
		}
		if (d->n == d->cap) {
			size_t cap = d->cap ? 2 * d->cap : 16;
			struct found *f = realloc(d->found, cap * sizeof(*f));
			if (!f) {
				free(name);
				rc = -ENOMEM;
				break;
			}
			d->found = f;
			d->cap = cap;
		}
		d->found[d->n++] = (struct found){ .name = name, .slot = slot, .noffs = n };
	}
	kaas_dirlist_free(&l);
	if (rc < 0)
		kaas_warn("groups: cannot list %s to find the groups of the coordinator slots taken "
			  "over: %s (%s); retried in %d ms", KAAS_GROUPS_DIR, kaas_strerror(rc),
			  kaas_sub_errdetail(), DISCOVER_RETRY_MS);
	d->rc = rc;
}

static int loading_any(struct kaas_groups *g)
{
	for (int32_t s = 0; s < g->nslots; s++)
		if (g->slots[s].epoch && g->slots[s].loaded_epoch != g->slots[s].epoch)
			return 1;
	return 0;
}

/* Answer the waiters: every one when `all`, else those whose deadline
 * passed (or every one once nothing loads). */
static void wake(struct kaas_groups *g, int all)
{
	uint64_t now = kaas_now_ms();
	int done = all || !loading_any(g);
	struct group_load_waiter *ready = NULL, **pp = &g->waiters;
	while (*pp) {
		struct group_load_waiter *w = *pp;
		if (done || now >= w->deadline_ms) {
			*pp = w->next;
			w->next = ready;
			ready = w;
		} else {
			pp = &w->next;
		}
	}
	while (ready) { /* a waiter may add another: the list is detached */
		struct group_load_waiter *w = ready;
		ready = w->next;
		w->fn(w->ctx);
		free(w);
	}
}

static void discover_done(void *arg, int status)
{
	struct discovery *d = arg;
	struct kaas_groups *g = d->g;
	GROUPS_ON_LOOP(g);
	g->discovering = 0;
	int ok = status >= 0 && d->rc == 0;
	for (int32_t s = 0; s < g->nslots; s++) {
		if (!d->epochs[s] || g->slots[s].job_epoch != d->epochs[s])
			continue;
		g->slots[s].job_epoch = 0;
		if (ok && g->slots[s].epoch == d->epochs[s])
			g->slots[s].loaded_epoch = d->epochs[s];
	}
	if (!ok)
		g->discover_after_ms = kaas_now_ms() + DISCOVER_RETRY_MS;
	size_t loaded = 0;
	for (size_t i = 0; ok && i < d->n; i++) {
		const struct found *f = &d->found[i];
		if (g->slots[f->slot].loaded_epoch != d->epochs[f->slot] ||
		    g->slots[f->slot].epoch != d->epochs[f->slot])
			continue; /* the slot moved on meanwhile */
		if (kaas_groups_check(g, f->name) != 0)
			continue;
		struct group *gr = kaas_groups_lookup(g, f->name, 1);
		if (gr && !gr->loaded) {
			kaas_groups_load(gr, f->noffs);
			loaded++;
		}
	}
	if (ok && loaded)
		kaas_info("groups: %zu group(s) with committed offsets found in the coordinator "
			  "slots taken over; loading them", loaded);
	discovery_free(d);
	kaas_groups_discover_tick(g); /* a slot taken over meanwhile: at once */
	wake(g, 0);
}

void kaas_groups_discover_tick(struct kaas_groups *g)
{
	GROUPS_ON_LOOP(g);
	int need = 0;
	for (int32_t s = 0; s < g->nslots; s++) {
		uint64_t e;
		struct group_slot *sl = &g->slots[s];
		if (g->b->draining || kaas_groups_slot_owner(g, s, &e) != 0)
			e = 0;
		if (e != sl->epoch) {
			sl->epoch = e;
			sl->loaded_epoch = 0;
		}
		need |= e && sl->loaded_epoch != e && sl->job_epoch != e;
	}
	if (need && !g->discovering && kaas_now_ms() >= g->discover_after_ms) {
		struct discovery *d = calloc(1, sizeof(*d));
		if (d && !(d->epochs = calloc((size_t)g->nslots, sizeof(*d->epochs)))) {
			free(d);
			d = NULL;
		}
		if (d) {
			d->g = g;
			for (int32_t s = 0; s < g->nslots; s++) {
				struct group_slot *sl = &g->slots[s];
				if (sl->epoch && sl->loaded_epoch != sl->epoch)
					d->epochs[s] = sl->job_epoch = sl->epoch;
			}
			g->discovering = 1;
			if (kaas_pool_queue(g->b, discover_work, discover_done, d) < 0) {
				g->discovering = 0;
				for (int32_t s = 0; s < g->nslots; s++)
					g->slots[s].job_epoch = 0;
				g->discover_after_ms = kaas_now_ms() + DISCOVER_RETRY_MS;
				discovery_free(d);
			}
		}
	}
	wake(g, 0);
}

void kaas_groups_discover_flush(struct kaas_groups *g)
{
	wake(g, 1);
}

int kaas_groups_loading(struct kaas_groups *g, const char *group)
{
	GROUPS_ON_LOOP(g);
	if (g->b->draining || !g->b->agent)
		return 0;
	kaas_groups_discover_tick(g);
	if (!group)
		return loading_any(g);
	int32_t s = kaas_agent_coordinator_slot(g->b->agent, group, strlen(group));
	return s >= 0 && s < g->nslots && g->slots[s].epoch &&
	       g->slots[s].loaded_epoch != g->slots[s].epoch;
}

int kaas_groups_await_load(struct kaas_groups *g, void (*fn)(void *ctx), void *ctx,
			   int timeout_ms)
{
	GROUPS_ON_LOOP(g);
	struct group_load_waiter *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct group_load_waiter){ .next = g->waiters, .fn = fn, .ctx = ctx,
					 .deadline_ms = kaas_now_ms() + (uint64_t)timeout_ms };
	g->waiters = w;
	return 0;
}
