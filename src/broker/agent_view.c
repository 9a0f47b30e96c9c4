/* agent_view.c — the cluster agent's accessors (see agent.h): memory only,
 * any thread, under the agent's mutex. */
#include "broker/agent.h"
#include "broker/agent_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "util/lock_rank.h"

int kaas_agent_lease(void *arg, const char *topic, int32_t partition, uint32_t *epoch)
{
	struct kaas_agent *c = arg;
	int yes = 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	if (c->have_view && c->trust_self && !__atomic_load_n(&c->superseded, __ATOMIC_ACQUIRE)) {
		const struct kaas_assign_entry *e = kaas_assignment_find(&c->view, topic, partition);
		if (e && e->leader == c->cfg->broker_id) {
			*epoch = e->leader_epoch;
			yes = 1;
		}
	}
	kaas_unlock(&c->mu);
	return yes;
}

int kaas_agent_fenced(const struct kaas_agent *c)
{
	if (!c)
		return 0;
	if (__atomic_load_n(&c->superseded, __ATOMIC_ACQUIRE))
		return 1;
	/* The lease counts from just before the last successful round's
	 * heartbeat write (last_ok_ms), not from the end of that round: the
	 * others judge us by the heartbeat, so half the liveness timeout after
	 * it we stop, however long the round took. */
	uint64_t ok = __atomic_load_n(&c->last_ok_ms, __ATOMIC_ACQUIRE);
	return kaas_mono_ms() - ok > c->cfg->liveness_ms / 2;
}

int kaas_agent_ready(const struct kaas_agent *c)
{
	return c && __atomic_load_n(&c->joined, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&c->served, __ATOMIC_ACQUIRE) && !kaas_agent_fenced(c);
}

int64_t kaas_agent_round_age_ms(const struct kaas_agent *c)
{
	uint64_t ok = __atomic_load_n(&c->last_ok_ms, __ATOMIC_ACQUIRE);
	return ok ? (int64_t)(kaas_mono_ms() - ok) : -1;
}

int kaas_agent_leader(struct kaas_agent *c, const char *topic, int32_t partition,
			int32_t *broker, uint32_t *epoch)
{
	int rc = -ENOENT;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	const struct kaas_assign_entry *e =
		c->have_view ? kaas_assignment_find(&c->view, topic, partition) : NULL;
	if (e && e->leader != KAAS_NO_LEADER) {
		*broker = e->leader;
		*epoch = e->leader_epoch;
		rc = 0;
	}
	kaas_unlock(&c->mu);
	return rc;
}

int32_t kaas_agent_controller(struct kaas_agent *c)
{
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	int32_t id = c->controller;
	kaas_unlock(&c->mu);
	return id;
}

static int in_list(const struct kaas_broker_info *v, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return 1;
	return 0;
}

size_t kaas_agent_brokers(struct kaas_agent *c, struct kaas_broker_info *out, size_t max)
{
	size_t n = 0;
	if (max == 0)
		return 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	out[n++] = c->me;
	for (size_t k = 0; k < c->nalive && n < max; k++)
		for (size_t i = 0; i < c->nbrokers; i++)
			if (c->brokers[i].id == c->alive[k] && !in_list(out, n, c->alive[k]))
				out[n++] = c->brokers[i];
	for (size_t k = 0; c->have_view && k < c->view.n && n < max; k++) {
		int32_t id = c->view.e[k].leader;
		if (id == KAAS_NO_LEADER || in_list(out, n, id))
			continue;
		for (size_t i = 0; i < c->nbrokers; i++)
			if (c->brokers[i].id == id) {
				out[n++] = c->brokers[i];
				break;
			}
	}
	kaas_unlock(&c->mu);
	return n;
}

size_t kaas_agent_members(struct kaas_agent *c, struct kaas_broker_info *out, int *alive,
			  size_t max)
{
	size_t n = 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	for (size_t i = 0; i < c->nbrokers && n < max; i++) {
		int32_t id = c->brokers[i].id;
		out[n] = c->brokers[i];
		alive[n] = id == c->cfg->broker_id;
		for (size_t k = 0; k < c->nalive && !alive[n]; k++)
			alive[n] = c->alive[k] == id;
		n++;
	}
	kaas_unlock(&c->mu);
	return n;
}

void kaas_agent_note(struct kaas_agent *c, const char *fmt, ...)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct kaas_agent_event e = { .unix_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.text, sizeof e.text, fmt, ap);
	va_end(ap);
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	c->events[c->nevents % KAAS_AGENT_EVENTS] = e;
	c->nevents++;
	kaas_unlock(&c->mu);
}

size_t kaas_agent_events(struct kaas_agent *c, struct kaas_agent_event *out, size_t max)
{
	size_t n = 0;
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	for (uint64_t k = c->nevents; k > 0 && n < max && n < KAAS_AGENT_EVENTS; k--)
		out[n++] = c->events[(k - 1) % KAAS_AGENT_EVENTS];
	kaas_unlock(&c->mu);
	return n;
}

int32_t kaas_coordinator_slot_of(const char *group, size_t len, int32_t slots)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)group[i];
		h *= 16777619u;
	}
	return (int32_t)(h % (uint32_t)slots);
}

int32_t kaas_agent_coordinator_slot(const struct kaas_agent *c, const char *group, size_t len)
{
	return kaas_coordinator_slot_of(group, len, c->cfg->coordinator_slots);
}

int kaas_agent_coordinator(struct kaas_agent *c, const char *group, size_t len,
			     int32_t *broker, uint32_t *epoch)
{
	return kaas_agent_leader(c, KAAS_COORDINATOR_TOPIC,
				   kaas_agent_coordinator_slot(c, group, len), broker, epoch);
}

void kaas_agent_kick(struct kaas_agent *c)
{
	kaas_lock(&c->mu, KAAS_RANK_AGENT);
	c->kicked = 1;
	pthread_cond_broadcast(&c->cv);
	kaas_unlock(&c->mu);
}

int kaas_agent_wait_assigned(struct kaas_agent *c, const char *topic, int timeout_ms)
{
	int32_t b;
	uint32_t e;
	uint64_t end = kaas_mono_ms() + (uint64_t)timeout_ms;
	for (;;) {
		kaas_lock(&c->mu, KAAS_RANK_AGENT);
		int served = c->have_view && c->served_version == c->view.version + 1;
		kaas_unlock(&c->mu);
		if (served && kaas_agent_leader(c, topic, 0, &b, &e) == 0)
			break;
		uint64_t now = kaas_mono_ms();
		if (now >= end)
			return 0;
		kaas_lock(&c->mu, KAAS_RANK_AGENT);
		c->kicked = 1;
		pthread_cond_broadcast(&c->cv);
		uint64_t r = c->rounds;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t wait = end - now < 100 ? end - now : 100;
		ts.tv_nsec += (long)(wait * 1000000);
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		while (c->rounds == r && !c->stop &&
		       pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
			;
		kaas_unlock(&c->mu);
	}
	return 1;
}

