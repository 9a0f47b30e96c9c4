/* agent.c — the cluster agent: its thread and its rounds (see agent.h);
 * the accessors other threads call are in agent_view.c. */
#include "broker/agent.h"
#include "broker/agent_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "contract/epoch_fence.h"
#include "util/lock_rank.h"
#include "util/step.h"

#include "util/logger.h"
#include "cluster/assignment.h"
#include "util/status.h"
#include "util/thread_name.h"

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Is our broker id free?  Its document, if any, must be a clean
 * shutdown's, or show no heartbeat progress for a while: the liveness
 * timeout, but at most four heartbeat intervals (a live owner renews every
 * interval; one whose rounds are slower than that and is missed here is
 * fenced by the incarnation check of round_once instead).  0, or
 * -EADDRINUSE (logged) when another live process has the id. */
static int check_id_free(struct kaas_substrate *vol, const struct kaas_config *cfg)
{
	struct kaas_broker_info first, cur;
	if (kaas_broker_read(vol, cfg->broker_id, &first) < 0 || first.stopped)
		return 0;
	uint64_t wait = cfg->liveness_ms < 4ull * cfg->heartbeat_ms ? cfg->liveness_ms
								     : 4ull * cfg->heartbeat_ms;
	uint64_t end = kaas_mono_ms() + wait;
	while (kaas_mono_ms() < end) {
		sleep_ms(cfg->heartbeat_ms / 2 ? cfg->heartbeat_ms / 2 : 1);
		if (kaas_broker_read(vol, cfg->broker_id, &cur) < 0)
			continue;
		if (cur.stopped)
			return 0;
		if (cur.incarnation != first.incarnation || cur.counter != first.counter) {
			kaas_error("broker id %d is in use by a live broker (incarnation %016llx, advertising %s:%d: "
				   "its heartbeat moved while we watched); refusing to start with the same --broker-id",
				   (int)cfg->broker_id, (unsigned long long)cur.incarnation, cur.host,
				   (int)cur.port);
			return -EADDRINUSE;
		}
	}
	return 0;
}

int kaas_agent_new(struct kaas_substrate *cluster, const struct kaas_config *cfg,
		     struct kaas_agent **out)
{
	int rc = check_id_free(cluster, cfg);
	if (rc < 0)
		return rc;
	struct kaas_agent *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->vol = cluster;
	c->cfg = cfg;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->controller = -1;
	c->lv.timeout_ms = cfg->liveness_ms;
	/* The process's incarnation: the one its temp and private names carry
	 * (substrate.h), so a sweep can tell a live broker's from a dead one's. */
	c->me.incarnation = kaas_incarnation();
	*out = c;
	return 0;
}

/* ------------------------------------------------------------ the round */

/* Remember broker incarnations; returns 1 if `id` was known with another
 * one (it restarted). */
static int note_incarnation(struct kaas_agent *c, int32_t id, uint64_t inc)
{
	for (size_t i = 0; i < c->nincs; i++)
		if (c->incs[i].id == id) {
			int changed = c->incs[i].incarnation != inc;
			c->incs[i].incarnation = inc;
			return changed;
		}
	struct known_inc *v = realloc(c->incs, sizeof(*v) * (c->nincs + 1));
	if (v) {
		c->incs = v;
		c->incs[c->nincs++] = (struct known_inc){ id, inc };
	}
	return 0;
}

/* Should we claim the controller?  `holder` is the live broker announcing
 * the newest claim, or -1. */
static int should_claim(struct kaas_agent *c, int have_latest, uint64_t latest, int32_t holder,
			const struct kaas_broker_info *list, size_t n, uint64_t now)
{
	if (!have_latest)
		return 1;
	if (holder >= 0)
		return 0;
	/* Announced by our own id's previous life: dead by definition. */
	if (c->prev_life_epoch == latest)
		return 1;
	/* Announced by a dead broker, or by nobody for a whole timeout. */
	int announced = 0;
	for (size_t i = 0; i < n; i++)
		if (list[i].controller_epoch == latest && !list[i].stopped)
			announced = 1;
	if (announced)
		return now - c->start_ms >= c->cfg->liveness_ms;
	return now - c->latest_since_ms >= c->cfg->liveness_ms;
}

/* The slots the cluster wants served: every partition of every listed
 * topic, and the coordinator slots.  A topic offline here (its document
 * could not be read: retried every round) keeps the slots `cur` gives it,
 * so their leader epochs carry on when it comes back rather than restart
 * below the partitions' fences.  *names keeps the strings alive. */
static int wanted_slots(struct kaas_agent *c, const struct kaas_assignment *cur,
			struct kaas_slot_want **out, size_t *nout, struct kaas_topic ***list,
			int *nlist)
{
	*list = kaas_topics_list(c->topics, nlist);
	if (!*list)
		return -ENOMEM;
	size_t total = (size_t)c->cfg->coordinator_slots + cur->n;
	for (int i = 0; i < *nlist; i++)
		if (!(*list)[i]->offline)
			total += (size_t)(*list)[i]->npart;
	struct kaas_slot_want *w = calloc(total + 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	size_t n = 0;
	for (int i = 0; i < *nlist; i++) {
		for (int32_t p = 0; !(*list)[i]->offline && p < (*list)[i]->npart; p++)
			w[n++] = (struct kaas_slot_want){ (*list)[i]->name, p };
		for (size_t k = 0; (*list)[i]->offline && k < cur->n; k++)
			if (strcmp(cur->e[k].topic, (*list)[i]->name) == 0)
				w[n++] = (struct kaas_slot_want){ (*list)[i]->name, cur->e[k].partition };
	}
	for (int32_t s = 0; s < c->cfg->coordinator_slots; s++)
		w[n++] = (struct kaas_slot_want){ KAAS_COORDINATOR_TOPIC, s };
	*out = w;
	*nout = n;
	return 0;
}

/* The last good assignment: the one we wrote under our current controller
 * epoch, else the view we serve, else none (an empty plan whose epochs
 * kaas_assignment_claim_epochs raises above every one handed out). */
static int last_good(struct kaas_agent *c, struct kaas_assignment *out)
{
	memset(out, 0, sizeof *out);
	if (c->have_written && c->written.controller_epoch == c->ctrl_epoch)
		return kaas_assignment_copy(out, &c->written);
	int rc = 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	if (c->have_view)
		rc = kaas_assignment_copy(out, &c->view);
	kaas_unlock(&c->mu);
	return rc;
}

/* ------------------------------------------------------------ lost epochs
 *
 * A leader epoch this broker was handed and could not claim in the fence
 * it guards (contract/epoch_fence.h, "lost epochs": e.g. a create whose
 * reply was lost made the claim, and nobody can tell whose it is).  The
 * fenced open is final at that epoch; the broker says so in its document
 * ("lost_epochs", cluster/membership.h) while the assignment still gives it
 * that slot at that epoch, and the controller hands the slot out again
 * with a new epoch (act_as_controller).  Agent thread only. */

/* Decode a kaas_group_dirname encoding into out (size >= 256): 0, or -1
 * for a cut long name ("~" + hash: not decodable) or no such encoding. */
static int dirname_decode(const char *enc, size_t len, char *out, size_t *olen)
{
	size_t n = 0;
	if (len == 1 && enc[0] == '%') {
		*olen = 0;
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		if (n + 1 >= 256 || enc[i] == '~')
			return -1;
		if (enc[i] != '%') {
			out[n++] = enc[i];
			continue;
		}
		if (i + 2 >= len || !isxdigit((unsigned char)enc[i + 1]) ||
		    !isxdigit((unsigned char)enc[i + 2]))
			return -1;
		char hex[3] = { enc[i + 1], enc[i + 2], '\0' };
		out[n++] = (char)strtoul(hex, NULL, 16);
		i += 2;
	}
	*olen = n;
	return 0;
}

/* Remember (topic, partition) lost at epoch unless already (c->me.lost). */
static void lost_add(struct kaas_agent *c, const char *topic, int32_t partition, uint32_t epoch)
{
	for (int i = 0; i < c->me.nlost; i++)
		if (c->me.lost[i].partition == partition && c->me.lost[i].epoch == epoch &&
		    strcmp(c->me.lost[i].topic, topic) == 0)
			return;
	if (c->me.nlost == KAAS_BROKER_LOST_MAX) {
		/* Reported when its claim is refused again (the open's or the
		 * request's retry), once the controller raised some of these. */
		kaas_warn("cluster: more than %d lost epochs at once; %s/%d (epoch %u) is reported at "
			  "its next refused claim", KAAS_BROKER_LOST_MAX, topic, (int)partition,
			  (unsigned)epoch);
		return;
	}
	struct kaas_lost_epoch *e = &c->me.lost[c->me.nlost++];
	snprintf(e->topic, sizeof e->topic, "%s", topic);
	e->partition = partition;
	e->epoch = epoch;
	kaas_warn("cluster: epoch %u of %s/%d cannot be claimed (lost); asking the controller for a new one",
		  (unsigned)epoch, topic, (int)partition);
}

/* Does the view give (topic, partition) to this broker at epoch?  c->mu held. */
static int view_gives(const struct kaas_agent *c, const char *topic, int32_t partition,
		      uint32_t epoch)
{
	for (size_t i = 0; c->have_view && i < c->view.n; i++)
		if (c->view.e[i].partition == partition && strcmp(c->view.e[i].topic, topic) == 0)
			return c->view.e[i].leader == c->cfg->broker_id &&
			       c->view.e[i].leader_epoch == epoch;
	return 0;
}

/* kaas_fence_lost_take's callback: a fence directory to the slot it
 * guards.  On the cluster volume `groups/<enc>/fence` and `txns/<enc>/fence`
 * (a coordinator slot: hash of the decoded id; a cut long name cannot be
 * decoded: every coordinator slot of ours at that epoch); elsewhere
 * `<topic>/<p>/fence` (a partition).  Other fences (the controller's slot
 * epochs, tools' leader epochs) are not handed out by an assignment. */
static void lost_one(void *arg, struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     int unowned)
{
	struct kaas_agent *c = arg;
	(void)unowned;
	if (epoch == 0 || epoch > UINT32_MAX)
		return;
	size_t dl = strlen(dir);
	const char *suffix = "/fence";
	if (dl <= strlen(suffix) || strcmp(dir + dl - strlen(suffix), suffix) != 0)
		return;
	size_t body = dl - strlen(suffix); /* dir[0..body) names the guarded state */
	if (sub == c->vol) {
		size_t pl = strncmp(dir, "groups/", 7) == 0 ? 7 : strncmp(dir, "txns/", 5) == 0 ? 5 : 0;
		if (!pl || body <= pl)
			return;
		char id[256];
		size_t idl;
		if (dirname_decode(dir + pl, body - pl, id, &idl) == 0) {
			lost_add(c, KAAS_COORDINATOR_TOPIC,
				 kaas_coordinator_slot_of(id, idl, c->cfg->coordinator_slots),
				 (uint32_t)epoch);
			return;
		}
		for (int32_t s = 0; s < c->cfg->coordinator_slots; s++) {
			kaas_lock(&c->mu, KAAS_RANK_AGENT);
			int mine = view_gives(c, KAAS_COORDINATOR_TOPIC, s, (uint32_t)epoch);
			kaas_unlock(&c->mu);
			if (mine)
				lost_add(c, KAAS_COORDINATOR_TOPIC, s, (uint32_t)epoch);
		}
		return;
	}
	const char *slash = NULL;
	for (size_t i = 0; i < body; i++)
		if (dir[i] == '/')
			slash = dir + i;
	if (!slash || slash == dir || (size_t)(slash - dir) >= sizeof c->me.lost[0].topic)
		return;
	char topic[256];
	memcpy(topic, dir, (size_t)(slash - dir));
	topic[slash - dir] = '\0';
	if (strchr(topic, '/'))
		return;
	char *end = NULL;
	long p = strtol(slash + 1, &end, 10);
	if (end != dir + body || p < 0 || p > INT32_MAX)
		return;
	lost_add(c, topic, (int32_t)p, (uint32_t)epoch);
}

/* Before each heartbeat: take the lost epochs the fences remembered, and
 * keep only those the view still hands us (a new epoch ends one). */
static void lost_refresh(struct kaas_agent *c)
{
	(void)kaas_fence_lost_take(lost_one, c);
	int k = 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	for (int i = 0; i < c->me.nlost; i++)
		if (view_gives(c, c->me.lost[i].topic, c->me.lost[i].partition, c->me.lost[i].epoch))
			c->me.lost[k++] = c->me.lost[i];
	kaas_unlock(&c->mu);
	c->me.nlost = k;
}

/* Controller: a slot whose leader reports its epoch lost gets a new one
 * (claimed by kaas_assignment_claim_epochs like any other).  Returns how
 * many slots of `next` were raised. */
static int raise_lost(struct kaas_assignment *next, const struct kaas_broker_info *list, size_t n)
{
	int raised = 0;
	for (size_t b = 0; b < n; b++)
		for (int k = 0; k < list[b].nlost; k++) {
			const struct kaas_lost_epoch *l = &list[b].lost[k];
			for (size_t i = 0; i < next->n; i++) {
				struct kaas_assign_entry *e = &next->e[i];
				if (e->leader != list[b].id || e->leader_epoch != l->epoch ||
				    e->partition != l->partition || strcmp(e->topic, l->topic) != 0)
					continue;
				kaas_warn("cluster: broker %d cannot claim epoch %u of %s/%d (lost); handing "
					  "it a new epoch", (int)e->leader, (unsigned)e->leader_epoch,
					  e->topic, (int)e->partition);
				e->leader_epoch++;
				raised++;
			}
		}
	return raised;
}

/* Controller duty: plan and write.  Returns KAAS_EFENCED when fenced. */
static int id_in(const int32_t *ids, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* Agent thread (the only writer of c->alive, so it reads it unlocked):
 * log each peer that left or joined the live set since the last round,
 * and why, so an operator reading a survivor's log sees its peer die. */
static void log_liveness_changes(struct kaas_agent *c, const int32_t *alive, size_t nalive,
				 const struct kaas_broker_info *list, size_t n)
{
	for (size_t k = 0; k < c->nalive; k++) {
		int32_t id = c->alive[k];
		if (id == c->cfg->broker_id || id_in(alive, nalive, id))
			continue;
		const struct kaas_broker_info *b = NULL;
		for (size_t i = 0; i < n; i++)
			if (list[i].id == id)
				b = &list[i];
		if (b && b->stopped) {
			kaas_info("cluster: broker %d stopped (a clean shutdown)", (int)id);
			kaas_agent_note(c, "broker %d stopped (a clean shutdown)", (int)id);
		} else {
			kaas_warn("cluster: broker %d is dead: no heartbeat for the liveness timeout (%u ms)%s",
				  (int)id, (unsigned)c->cfg->liveness_ms,
				  b ? "" : "; its document is gone");
			kaas_agent_note(c, "broker %d is dead: no heartbeat for %u ms", (int)id,
					(unsigned)c->cfg->liveness_ms);
		}
	}
	for (size_t k = 0; k < nalive; k++)
		if (alive[k] != c->cfg->broker_id && !id_in(c->alive, c->nalive, alive[k])) {
			kaas_info("cluster: broker %d is alive", (int)alive[k]);
			kaas_agent_note(c, "broker %d is alive", (int)alive[k]);
		}
}

static int act_as_controller(struct kaas_agent *c, const int32_t *alive, size_t nalive,
			     const int32_t *restarted, size_t nrestarted,
			     const struct kaas_broker_info *brokers, size_t nbrokers)
{
	struct kaas_assignment cur = { 0 };
	int current = 0;
	int rc = kaas_assignment_read(c->vol, &cur, &current);
	/* The base of the plan is the last good assignment, never an empty one
	 * standing in for a damaged, missing or overwritten document: planning
	 * from nothing would hand every slot its first epoch again. */
	const char *why = NULL;
	if (rc == -EBADMSG)
		why = "is corrupt";
	else if (rc == -ENOENT && (c->have_written || c->have_view))
		why = "is missing";
	else if (rc == 0 && c->have_written && c->written.controller_epoch == c->ctrl_epoch &&
		 cur.controller_epoch < c->ctrl_epoch)
		why = "was overwritten by an older controller's";
	else if (rc < 0 && rc != -ENOENT)
		return rc;
	if (why) {
		char detail[256];
		snprintf(detail, sizeof detail, "%s", rc < 0 ? kaas_sub_errdetail() : "stale");
		kaas_assignment_free(&cur);
		rc = last_good(c, &cur);
		if (rc < 0)
			return rc;
		kaas_error("cluster: assignment.json %s (%s): planning from the last good assignment "
			   "(version %llu, %zu slots) and writing it again", why, detail,
			   (unsigned long long)cur.version, cur.n);
	}
	struct kaas_slot_want *want = NULL;
	size_t nwant = 0;
	struct kaas_topic **list = NULL;
	int nlist = 0;
	rc = wanted_slots(c, &cur, &want, &nwant, &list, &nlist);
	struct kaas_assignment next = { 0 };
	int changed = 0;
	if (rc == 0)
		rc = kaas_assignment_plan(&cur, want, nwant, alive, nalive, c->ctrl_epoch, 1, &next,
					  &changed);
	for (int i = 0; list && i < nlist; i++)
		kaas_topic_put(list[i]);
	free(list);
	free(want);
	if (rc == 0) {
		/* A restarted broker gets its slots back with a new epoch. */
		for (size_t i = 0; i < next.n; i++)
			for (size_t k = 0; k < nrestarted; k++)
				if (next.e[i].leader == restarted[k]) {
					next.e[i].leader_epoch++;
					if (!changed)
						next.version++;
					changed = 1;
				}
		/* A leader that lost its epoch gets a new one. */
		if (raise_lost(&next, brokers, nbrokers) > 0) {
			if (!changed)
				next.version++;
			changed = 1;
		}
		if (changed || why || cur.controller_epoch != c->ctrl_epoch) {
			if (!changed)
				next.version = cur.version + 1;
			/* Every epoch handed out is claimed first: never twice. */
			rc = kaas_assignment_claim_epochs(c->vol, &cur, &next, c->ctrl_epoch);
			if (rc > 0)
				kaas_warn("cluster: %d leader epoch(s) were handed out before; raised above them", rc);
			if (rc >= 0)
				rc = kaas_assignment_write(c->vol, &next);
			if (rc == 0) {
				kaas_info("cluster: assignment version %llu written (controller epoch %llu, %zu slots)",
					  (unsigned long long)next.version,
					  (unsigned long long)c->ctrl_epoch, next.n);
				kaas_assignment_free(&c->written);
				c->have_written = kaas_assignment_copy(&c->written, &next) == 0;
			}
		}
	}
	kaas_assignment_free(&next);
	kaas_assignment_free(&cur);
	return rc;
}

static int mine_in(const struct kaas_assignment *a, int32_t me)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].leader == me)
			return 1;
	return 0;
}

/* Read the assignment into the view; returns 1 if the view changed. */
static int refresh_view(struct kaas_agent *c, int wrote)
{
	struct kaas_assignment a = { 0 };
	int current = 0;
	int rc = kaas_assignment_read(c->vol, &a, &current);
	if (rc == -EBADMSG) {
		/* Keep serving the last good view; the controller rewrites it. */
		kaas_warn("cluster: assignment.json is corrupt (%s); keeping the last good view",
			  kaas_sub_errdetail());
		return 0;
	}
	if (rc < 0 || !current) {
		kaas_assignment_free(&a);
		return rc == -ENOENT ? 0 : rc;
	}
	int32_t me = c->cfg->broker_id;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	int changed = !c->have_view || c->view.version != a.version ||
		      c->view.controller_epoch != a.controller_epoch;
	if (!c->have_view) {
		c->first_version = a.version;
		c->first_had_mine = mine_in(&a, me);
	}
	if (!c->trust_self &&
	    (wrote || !c->first_had_mine || a.version != c->first_version ||
	     kaas_mono_ms() - c->start_ms >= 2ull * c->cfg->liveness_ms))
		c->trust_self = changed = 1;
	if (changed) {
		kaas_assignment_free(&c->view);
		c->view = a;
		c->have_view = 1;
		memset(&a, 0, sizeof(a));
	}
	kaas_unlock(&c->mu);
	kaas_assignment_free(&a);
	return changed;
}

/* One round: heartbeat, observe, elect, plan (as controller), serve.  0
 * when all of it succeeded, else -errno.  *hb_ms is set, before the
 * heartbeat document is written, to the monotonic time the lease of a
 * successful round counts from (see last_ok_ms in agent_internal.h). */
static int round_once(struct kaas_agent *c, uint64_t *hb_ms)
{
	uint64_t now = kaas_mono_ms();
	int32_t me = c->cfg->broker_id;
	uint64_t latest = 0;
	int rc = kaas_controller_latest(c->vol, &latest);
	int have_latest = rc == 0;
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (c->ctrl_epoch && latest > c->ctrl_epoch) {
		kaas_warn("cluster: controller epoch %llu claimed elsewhere; standing down from %llu",
			  (unsigned long long)latest, (unsigned long long)c->ctrl_epoch);
		kaas_agent_note(c, "broker %d stood down as controller (epoch %llu claimed elsewhere)",
				(int)me, (unsigned long long)latest);
		c->ctrl_epoch = 0;
	}
	if (latest != c->latest_seen) {
		c->latest_seen = latest;
		c->latest_since_ms = now;
	}
	/* 1. Heartbeat, unless another process with our id overwrote our
	 * document (it started while we looked dead: paused, partitioned):
	 * then this one is fenced for good. */
	if (__atomic_load_n(&c->superseded, __ATOMIC_ACQUIRE))
		return -EADDRINUSE;
	if (c->published) {
		struct kaas_broker_info cur;
		/* (an unreadable document is checked again next round) */
		if (kaas_broker_read(c->vol, me, &cur) == 0 && cur.incarnation != c->me.incarnation) {
			__atomic_store_n(&c->superseded, 1, __ATOMIC_RELEASE);
			kaas_error("cluster: broker id %d was taken over by another process (incarnation %016llx, advertising %s:%d); "
				   "this one (incarnation %016llx) is fenced: it leads nothing and refuses produce until restarted",
				   (int)me, (unsigned long long)cur.incarnation, cur.host, (int)cur.port,
				   (unsigned long long)c->me.incarnation);
			return -EADDRINUSE;
		}
	}
	c->me.counter++;
	c->me.controller_epoch = c->ctrl_epoch;
	lost_refresh(c);
	/* The lease counts from here, before the write: the others may see
	 * this heartbeat as soon as it is written, however long the rest of
	 * the round takes. */
	*hb_ms = kaas_mono_ms();
	rc = kaas_broker_publish(c->vol, &c->me);
	if (rc < 0)
		return rc;
	c->published = 1;
	/* 2. Observe. */
	struct kaas_broker_info *list = NULL;
	size_t n = 0;
	rc = kaas_broker_list(c->vol, &list, &n, NULL);
	if (rc < 0)
		return rc;
	now = kaas_mono_ms();
	if (kaas_liveness_observe(&c->lv, list, n, now) < 0) {
		free(list);
		return -ENOMEM;
	}
	int32_t *alive = calloc(n + 1, sizeof(*alive));
	int32_t *restarted = calloc(n + 1, sizeof(*restarted));
	size_t nalive = alive ? kaas_liveness_alive_ids(&c->lv, now, alive, n) : 0;
	size_t nrestarted = 0;
	for (size_t i = 0; restarted && i < n; i++)
		if (note_incarnation(c, list[i].id, list[i].incarnation) && list[i].id != me)
			restarted[nrestarted++] = list[i].id;
	kaas_agent_metrics_round(list, n, alive, nalive, latest);
	int32_t holder = -1;
	for (size_t i = 0; have_latest && i < n; i++)
		if (list[i].controller_epoch == latest && !list[i].stopped &&
		    kaas_liveness_alive(&c->lv, list[i].id, now) &&
		    !(list[i].id == me && list[i].incarnation != c->me.incarnation))
			holder = list[i].id;
	/* 3. Controller election. */
	if (!c->ctrl_epoch && should_claim(c, have_latest, latest, holder, list, n, now)) {
		uint64_t won = 0;
		rc = kaas_controller_claim_after(c->vol, have_latest ? latest : 0, &won);
		if (rc == 0) {
			c->ctrl_epoch = won;
			holder = me;
			kaas_info("cluster: controller with epoch %llu", (unsigned long long)won);
			kaas_agent_note(c, "broker %d became controller (epoch %llu)", (int)me,
					(unsigned long long)won);
			/* Our own slots may be our previous life's: new epochs. */
			kaas_lock(&c->mu, KAAS_RANK_AGENT);
			int trusted = c->trust_self;
			kaas_unlock(&c->mu);
			if (!trusted && restarted)
				restarted[nrestarted++] = me;
			c->me.controller_epoch = won;
			(void)kaas_broker_publish(c->vol, &c->me);
		} else if (rc != -EEXIST) {
			kaas_warn("cluster: controller claim failed: %s", kaas_strerror(rc));
		}
	}
	int wrote = 0;
	if (c->ctrl_epoch && alive) {
		holder = me;
		rc = act_as_controller(c, alive, nalive, restarted, nrestarted, list, n);
		if (rc == KAAS_EFENCED) {
			kaas_warn("cluster: assignment write fenced by a newer controller; standing down");
			c->ctrl_epoch = 0;
		} else if (rc < 0) {
			kaas_warn("cluster: writing the assignment failed: %s", kaas_strerror(rc));
		} else {
			wrote = 1;
		}
	}
	if (c->rounds_observed++ && alive)
		log_liveness_changes(c, alive, nalive, list, n);
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	free(c->brokers);
	c->brokers = list;
	c->nbrokers = n;
	free(c->alive);
	c->alive = alive;
	c->nalive = alive ? nalive : 0;
	c->controller = holder;
	kaas_unlock(&c->mu);
	free(restarted);
	/* 4. Serve what the assignment says. */
	rc = refresh_view(c, wrote);
	if (rc < 0)
		return rc;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	uint64_t ver = c->have_view ? c->view.version + 1 : 0;
	kaas_unlock(&c->mu);
	/* Named step: joined and observed, partitions not opened yet (tests
	 * hold a broker here to see /readyz answer 503). */
	kaas_step("cluster.round.before-serve");
	rc = kaas_topics_reconcile(c->topics);
	if (rc < 0)
		return rc;
	int left = kaas_topics_reconcile_left(c->topics);
	__atomic_store_n(&c->served, 1, __ATOMIC_RELEASE);
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	if (left)
		c->kicked = 1; /* partitions still to open: the next round at once */
	c->served_version = ver;
	kaas_unlock(&c->mu);
	return 0;
}

/* While rounds keep failing, the agent says so again this often. */
#define AGENT_FAILING_REPEAT_MS 30000

static void *agent_main(void *arg)
{
	struct kaas_agent *c = arg;
	kaas_thread_name("kaas-agent");
	int failing = 0;
	uint64_t failing_since = 0, failing_told = 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	while (!c->stop) {
		kaas_unlock(&c->mu);
		uint64_t t0 = kaas_mono_ms(), hb = t0;
		int rc = round_once(c, &hb);
		uint64_t took = kaas_mono_ms() - t0;
		if (took > c->cfg->liveness_ms / 2)
			kaas_warn("cluster: a round took %llu ms (over half the liveness timeout: "
				  "this broker was fenced meanwhile)", (unsigned long long)took);
		if (rc == 0) {
			/* From the heartbeat write, not from now: a round slow after
			 * it must not stretch the lease past what the heartbeat proves. */
			__atomic_store_n(&c->last_ok_ms, hb, __ATOMIC_RELEASE);
			if (failing)
				kaas_info("cluster: heartbeat renewed again");
			failing = 0;
		} else if (!failing++) {
			kaas_warn("cluster: round failed: %s (%s)", kaas_strerror(rc), kaas_sub_errdetail());
			failing_since = failing_told = kaas_mono_ms();
		} else if (kaas_mono_ms() - failing_told >= AGENT_FAILING_REPEAT_MS) {
			/* Keep saying why this broker serves nothing (issue 33):
			 * one line at the first failure was all a reader got. */
			failing_told = kaas_mono_ms();
			kaas_warn("cluster: rounds failing for %llu s (%d in a row), the last: %s (%s); "
				  "no heartbeat, so this broker leads nothing",
				  (unsigned long long)((failing_told - failing_since) / 1000), failing,
				  kaas_strerror(rc), kaas_sub_errdetail());
		}
		kaas_lock(&c->mu, KAAS_RANK_AGENT);
		c->rounds++;
		pthread_cond_broadcast(&c->cv);
		if (c->stop)
			break;
		if (!c->kicked) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += (long)c->cfg->heartbeat_ms * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			while (!c->stop && !c->kicked &&
			       pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
				;
		}
		c->kicked = 0;
	}
	kaas_unlock(&c->mu);
	return NULL;
}

/* Before a deleted topic's directory is renamed aside: wait (bounded by
 * the liveness timeout) until the current assignment no longer has its
 * partitions, then two heartbeats more for their leaders to apply it (a
 * leader that misses that is fenced by then or closes at its next round;
 * what it still writes goes to the renamed-aside files). */
static void wait_unassigned(void *arg, const char *name)
{
	struct kaas_agent *c = arg;
	uint64_t end = kaas_mono_ms() + c->cfg->liveness_ms;
	int32_t b;
	uint32_t e;
	kaas_agent_kick(c);
	while (kaas_mono_ms() < end && kaas_agent_leader(c, name, 0, &b, &e) == 0) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
	uint64_t ms = 2ull * c->cfg->heartbeat_ms;
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Start refused: rc (a substrate error, its detail set) named, and why it
 * stops kaasd when it is a volume this process may not write (a volume
 * that will not become writable by waiting: before issue 33 kaasd started
 * anyway and served nothing, silently).  Returns rc. */
static int refuse_unwritable(const struct kaas_agent *c, int rc)
{
	if (rc == -EACCES || rc == -EPERM || rc == -EROFS)
		kaas_error("cluster: cannot write the cluster directory: %s (%s); kaasd writes its "
			   "heartbeat (brokers/%d.json) and the cluster's documents there, so it needs "
			   "the volume mounted read-write and writable by this user (uid %ld); "
			   "refusing to start", kaas_strerror(rc), kaas_sub_errdetail(), (int)c->me.id,
			   (long)getuid());
	else
		kaas_error("cluster: cannot prepare the cluster directory: %s (%s)",
			   kaas_strerror(rc), kaas_sub_errdetail());
	return rc;
}

int kaas_agent_start(struct kaas_agent *c, struct kaas_topics *topics)
{
	c->topics = topics;
	kaas_topics_set_before_remove(topics, wait_unassigned, c);
	c->me.id = c->cfg->broker_id;
	kaas_config_advertised(c->cfg, &c->me);
	c->start_ms = c->latest_since_ms = kaas_mono_ms();
	/* What our id's previous life announced, before we overwrite it. */
	struct kaas_broker_info prev;
	if (kaas_broker_read(c->vol, c->me.id, &prev) == 0 && prev.incarnation != c->me.incarnation)
		c->prev_life_epoch = prev.controller_epoch;
	int rc = kaas_sub_mkdirs(c->vol, KAAS_BROKERS_DIR, 0755);
	if (rc >= 0)
		rc = kaas_sub_mkdirs(c->vol, KAAS_CONTROLLER_DIR, 0755);
	if (rc < 0)
		return refuse_unwritable(c, rc);
	/* Two rounds: claim and write, then apply what was written. */
	int ok = 0;
	for (int i = 0; i < 2; i++) {
		uint64_t hb = kaas_mono_ms();
		rc = round_once(c, &hb);
		if (rc == 0)
			__atomic_store_n(&c->last_ok_ms, hb, __ATOMIC_RELEASE);
		else
			kaas_warn("cluster: first round failed: %s (%s)", kaas_strerror(rc),
				  kaas_sub_errdetail());
		ok |= rc == 0;
	}
	if (!ok && (rc == -EACCES || rc == -EPERM || rc == -EROFS))
		return refuse_unwritable(c, rc);
	rc = pthread_create(&c->thread, NULL, agent_main, c);
	if (rc != 0)
		return -rc;
	c->started = 1;
	__atomic_store_n(&c->joined, 1, __ATOMIC_RELEASE);
	kaas_info("cluster: broker %d (incarnation %016llx) joined; controller %d", c->me.id,
		  (unsigned long long)c->me.incarnation, kaas_agent_controller(c));
	return 0;
}

void kaas_agent_stop(struct kaas_agent *c)
{
	if (!c)
		return;
	if (c->started) {
		kaas_lock(&c->mu, KAAS_RANK_AGENT);
		c->stop = 1;
		pthread_cond_broadcast(&c->cv);
		kaas_unlock(&c->mu);
		pthread_join(c->thread, NULL);
		/* A clean stop: a process with our id may start at once. */
		if (c->published && !__atomic_load_n(&c->superseded, __ATOMIC_ACQUIRE)) {
			c->me.stopped = 1;
			(void)kaas_broker_publish(c->vol, &c->me);
		}
	}
	kaas_assignment_free(&c->view);
	kaas_assignment_free(&c->written);
	kaas_liveness_free(&c->lv);
	free(c->brokers);
	free(c->alive);
	free(c->incs);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
