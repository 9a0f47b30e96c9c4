/* assignment.c — controller claims, the assignment document, placement. */
#include "cluster/assignment.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "contract/doc.h"
#include "contract/epoch_fence.h"
#include "cluster/partition_entry.h"
#include "util/fnv.h"
#include "util/lock_rank.h"
#include "util/parallel.h"
#include "util/step.h"
#include "util/status.h"

#define DOC_KIND "assignment"
#define DOC_VERSION 1

/* How many slot epochs kaas_assignment_claim_epochs claims at once. */
#define CLAIM_THREADS 16

int kaas_controller_latest(struct kaas_substrate *cluster, uint64_t *epoch)
{
	int rc = kaas_claim_latest(cluster, KAAS_CONTROLLER_DIR, "epoch", epoch);
	return rc;
}

int kaas_controller_claim_next(struct kaas_substrate *cluster, uint64_t *won)
{
	int rc = kaas_sub_mkdirs(cluster, KAAS_CONTROLLER_DIR, 0755);
	if (rc < 0)
		return rc;
	uint64_t latest = 0;
	rc = kaas_controller_latest(cluster, &latest);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	rc = kaas_claim_exact(cluster, KAAS_CONTROLLER_DIR, "epoch", latest + 1, NULL);
	if (rc == 0)
		*won = latest + 1;
	return rc;
}

int kaas_controller_claim_after(struct kaas_substrate *cluster, uint64_t seen, uint64_t *won)
{
	int rc = kaas_sub_mkdirs(cluster, KAAS_CONTROLLER_DIR, 0755);
	if (rc < 0)
		return rc;
	rc = kaas_claim_exact(cluster, KAAS_CONTROLLER_DIR, "epoch", seen + 1, NULL);
	if (rc == 0)
		*won = seen + 1;
	return rc;
}

static cJSON *to_json(const struct kaas_assignment *a)
{
	cJSON *o = cJSON_CreateObject();
	kaas_json_add_u64(o, "controller_epoch", a->controller_epoch);
	kaas_json_add_u64(o, "version", a->version);
	cJSON *arr = cJSON_AddArrayToObject(o, "slots");
	for (size_t i = 0; i < a->n; i++) {
		cJSON *s = kaas_partition_entry_add(arr, a->e[i].topic, a->e[i].partition);
		kaas_json_add_i64(s, "leader", a->e[i].leader);
		kaas_json_add_u64(s, "leader_epoch", a->e[i].leader_epoch);
	}
	return o;
}

int kaas_assignment_write(struct kaas_substrate *cluster, const struct kaas_assignment *a)
{
	uint64_t latest;
	int rc = kaas_controller_latest(cluster, &latest);
	if (rc == 0 && latest > a->controller_epoch)
		return kaas_sub_fail(KAAS_EFENCED, "assignment: fenced: controller epoch %" PRIu64 " < claim %" PRIu64,
				     a->controller_epoch, latest);
	kaas_step("controller.before-assignment-rename");
	cJSON *o = to_json(a);
	rc = kaas_doc_write(cluster, KAAS_ASSIGNMENT_PATH, DOC_KIND, DOC_VERSION, o);
	cJSON_Delete(o);
	if (rc < 0)
		return rc;
	rc = kaas_controller_latest(cluster, &latest);
	if (rc == 0 && latest > a->controller_epoch)
		return kaas_sub_fail(KAAS_EFENCED, "assignment: fenced after write: claim %" PRIu64, latest);
	return 0;
}

int kaas_assignment_read(struct kaas_substrate *cluster, struct kaas_assignment *a, int *current)
{
	memset(a, 0, sizeof *a);
	cJSON *o;
	int rc = kaas_doc_read(cluster, KAAS_ASSIGNMENT_PATH, DOC_KIND, DOC_VERSION, &o, NULL);
	if (rc < 0)
		return rc;
	const cJSON *slots = cJSON_GetObjectItemCaseSensitive(o, "slots");
	if (kaas_json_get_u64(o, "controller_epoch", &a->controller_epoch) < 0 ||
	    kaas_json_get_u64(o, "version", &a->version) < 0 || !cJSON_IsArray(slots)) {
		cJSON_Delete(o);
		return kaas_sub_fail(EBADMSG, KAAS_ASSIGNMENT_PATH ": malformed");
	}
	size_t n = (size_t)cJSON_GetArraySize(slots);
	a->e = calloc(n ? n : 1, sizeof *a->e);
	if (!a->e) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	const cJSON *s;
	cJSON_ArrayForEach(s, slots)
	{
		const char *topic;
		int32_t p;
		int64_t l;
		uint64_t ep;
		if (kaas_partition_entry_get(s, &topic, &p) < 0 || strlen(topic) >= sizeof a->e[0].topic ||
		    kaas_json_get_i64(s, "leader", &l) < 0 || kaas_json_get_u64(s, "leader_epoch", &ep) < 0 ||
		    l < -1 || l > INT32_MAX || ep > UINT32_MAX) {
			cJSON_Delete(o);
			kaas_assignment_free(a);
			return kaas_sub_fail(EBADMSG, KAAS_ASSIGNMENT_PATH ": malformed slot");
		}
		struct kaas_assign_entry *e = &a->e[a->n++];
		snprintf(e->topic, sizeof e->topic, "%s", topic);
		e->partition = p;
		e->leader = (int32_t)l;
		e->leader_epoch = (uint32_t)ep;
	}
	cJSON_Delete(o);
	(void)kaas_assignment_index(a); /* without it: found in linear time */
	if (current) {
		uint64_t latest;
		rc = kaas_controller_latest(cluster, &latest);
		*current = !(rc == 0 && latest > a->controller_epoch);
	}
	return 0;
}

/* FNV-1a over the topic name and the partition number. */
static uint32_t slot_hash(const char *topic, int32_t partition)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *c = (const unsigned char *)topic; *c; c++)
		h = (h ^ *c) * 16777619u;
	uint32_t p = (uint32_t)partition;
	for (int i = 0; i < 4; i++, p >>= 8)
		h = (h ^ (p & 0xff)) * 16777619u;
	return h;
}

static void index_drop(struct kaas_assignment *a)
{
	free(a->ix);
	a->ix = NULL;
	a->ixcap = a->ixn = 0;
}

int kaas_assignment_index(struct kaas_assignment *a)
{
	index_drop(a);
	if (a->n == 0 || a->n > UINT32_MAX / 2)
		return 0;
	size_t cap = 16;
	while (cap < 2 * a->n)
		cap *= 2;
	a->ix = calloc(cap, sizeof *a->ix);
	if (!a->ix)
		return -ENOMEM;
	a->ixcap = cap;
	for (size_t i = 0; i < a->n; i++) {
		size_t b = slot_hash(a->e[i].topic, a->e[i].partition) & (cap - 1);
		while (a->ix[b])
			b = (b + 1) & (cap - 1);
		a->ix[b] = (uint32_t)(i + 1);
	}
	a->ixn = a->n;
	return 0;
}

const struct kaas_assign_entry *kaas_assignment_find(const struct kaas_assignment *a,
						     const char *topic, int32_t partition)
{
	if (a->ix && a->ixn == a->n) {
		/* The first of equal keys, as the linear search finds it. */
		const struct kaas_assign_entry *best = NULL;
		for (size_t b = slot_hash(topic, partition) & (a->ixcap - 1); a->ix[b];
		     b = (b + 1) & (a->ixcap - 1)) {
			const struct kaas_assign_entry *e = &a->e[a->ix[b] - 1];
			if (e->partition == partition && !strcmp(e->topic, topic) && (!best || e < best))
				best = e;
		}
		return best;
	}
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].partition == partition && !strcmp(a->e[i].topic, topic))
			return &a->e[i];
	return NULL;
}

void kaas_assignment_free(struct kaas_assignment *a)
{
	free(a->e);
	free(a->ix);
	memset(a, 0, sizeof *a);
}

int kaas_assignment_copy(struct kaas_assignment *dst, const struct kaas_assignment *src)
{
	*dst = *src;
	dst->ix = NULL;
	dst->ixcap = dst->ixn = 0;
	dst->e = calloc(src->n ? src->n : 1, sizeof *dst->e);
	if (!dst->e) {
		memset(dst, 0, sizeof *dst);
		return -ENOMEM;
	}
	if (src->n)
		memcpy(dst->e, src->e, src->n * sizeof *dst->e);
	(void)kaas_assignment_index(dst); /* without it: found in linear time */
	return 0;
}

/* ---- leader epochs handed out, claimed (contract/epoch_fence.h) ---- */

int kaas_slot_epoch_dir(const char *topic, int32_t partition, char *out, size_t size)
{
	int n = snprintf(out, size, KAAS_SLOT_EPOCHS_DIR "/%s/%" PRId32, topic, partition);
	if (n < 0 || (size_t)n >= size || !*topic || strchr(topic, '/') || !strcmp(topic, ".") ||
	    !strcmp(topic, ".."))
		return kaas_sub_fail(EINVAL, "slot epochs: no directory for topic '%s'", topic);
	return 0;
}

/* ---- to whom this process handed each slot epoch ----
 *
 * kaas_fence_claim says 0 for an epoch this process claimed before (its
 * held shortcut): "I claimed E", not "E is given to nobody else".  A plan
 * made from a stale base (the last good assignment after a write whose
 * rename landed but reported failure, issue 33 defect 7a) can hand the
 * same E to another leader; both would then lead at E.  So the leader each
 * claimed slot epoch went to is remembered, per (substrate handle, slot),
 * the last claim only, and an epoch held for another leader (or for none
 * remembered) is never handed again: the next free one is claimed.  Never
 * freed: one entry per slot this process ever claimed for. */
struct handed {
	struct handed *next;
	const struct kaas_substrate *sub;
	uint64_t epoch;
	int32_t leader;
	char dir[];
};
#define HANDED_BUCKETS 1024u
static pthread_mutex_t handed_mu = PTHREAD_MUTEX_INITIALIZER; /* leaf */
static struct handed *handed_tab[HANDED_BUCKETS];

static size_t handed_bucket(const struct kaas_substrate *sub, const char *dir)
{
	uint64_t h = kaas_fnv64(KAAS_FNV64_INIT, &sub, sizeof sub);
	return (size_t)(kaas_fnv64(h, dir, strlen(dir)) % HANDED_BUCKETS);
}

/* Did this process hand `epoch` of the slot fenced in `dir` to `leader`?
 * 1 or 0 (another leader, another epoch, or nothing remembered). */
static int handed_to(const struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     int32_t leader)
{
	int same = 0;
	kaas_lock(&handed_mu, KAAS_RANK_LEAF);
	for (struct handed *h = handed_tab[handed_bucket(sub, dir)]; h; h = h->next)
		if (h->sub == sub && strcmp(h->dir, dir) == 0) {
			same = h->epoch == epoch && h->leader == leader;
			break;
		}
	kaas_unlock(&handed_mu);
	return same;
}

/* Remember that `epoch` of the slot in `dir` went to `leader`: 0 or
 * -ENOMEM (then handed_to says 0 and the epoch is never handed again). */
static int handed_set(const struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		      int32_t leader)
{
	size_t n = strlen(dir) + 1;
	struct handed *fresh = malloc(sizeof *fresh + n);
	if (!fresh)
		return -ENOMEM;
	kaas_lock(&handed_mu, KAAS_RANK_LEAF);
	struct handed **b = &handed_tab[handed_bucket(sub, dir)], *h = *b;
	while (h && !(h->sub == sub && strcmp(h->dir, dir) == 0))
		h = h->next;
	if (!h) {
		h = fresh;
		fresh = NULL;
		h->sub = sub;
		memcpy(h->dir, dir, n);
		h->next = *b;
		*b = h;
	}
	h->epoch = epoch;
	h->leader = leader;
	kaas_unlock(&handed_mu);
	free(fresh);
	return 0;
}

/* One kaas_assignment_claim_epochs over many slots, for kaas_parallel_for. */
struct claim_job {
	struct kaas_substrate *cluster;
	const struct kaas_assignment *prev;
	struct kaas_assignment *next;
	const char *note;
	atomic_int raised;
	atomic_int failed;          /* set by the first failure: no new claims */
	int err;                    /* err and detail: written only by the
	                               thread that set failed, read after the
	                               join */
	char detail[256];
};

/* Claim next->e[i]'s epoch (or the next free one above it). */
static void claim_one(void *arg, size_t i)
{
	struct claim_job *j = arg;
	struct kaas_assign_entry *e = &j->next->e[i];
	if (e->leader == KAAS_NO_LEADER || atomic_load(&j->failed))
		return;
	const struct kaas_assign_entry *old = kaas_assignment_find(j->prev, e->topic, e->partition);
	if (old && old->leader == e->leader && old->leader_epoch == e->leader_epoch)
		return; /* handed out (and claimed) before */
	char dir[320];
	int rc = kaas_slot_epoch_dir(e->topic, e->partition, dir, sizeof dir);
	if (rc >= 0 && e->leader_epoch && kaas_fence_held(j->cluster, dir, e->leader_epoch) &&
	    !handed_to(j->cluster, dir, e->leader_epoch, e->leader))
		rc = KAAS_FENCE_SUPERSEDED; /* ours, but another leader's: never twice */
	else if (rc >= 0)
		rc = e->leader_epoch ? kaas_fence_claim(j->cluster, dir, e->leader_epoch, j->note, NULL)
				     : KAAS_FENCE_SUPERSEDED;
	if (rc == KAAS_FENCE_SUPERSEDED || rc == -EEXIST) {
		/* Someone (an older controller, a stale plan) already
		 * handed that epoch out: take the next one above all. */
		uint64_t won = 0;
		rc = kaas_fence_claim_next(j->cluster, dir, j->note, &won);
		if (rc == 0 && won > UINT32_MAX)
			rc = kaas_sub_fail(EOVERFLOW, "%s: leader epochs exhausted", dir);
		if (rc == 0) {
			e->leader_epoch = (uint32_t)won;
			atomic_fetch_add(&j->raised, 1);
		}
	}
	if (rc == 0)
		rc = handed_set(j->cluster, dir, e->leader_epoch, e->leader);
	if (rc < 0 && !atomic_exchange(&j->failed, 1)) {
		j->err = rc;
		snprintf(j->detail, sizeof j->detail, "%s", kaas_sub_errdetail());
	}
}

int kaas_assignment_claim_epochs(struct kaas_substrate *cluster, const struct kaas_assignment *prev,
				 struct kaas_assignment *next, uint64_t controller_epoch)
{
	char note[96];
	snprintf(note, sizeof note, "controller epoch %" PRIu64 "\n", controller_epoch);
	struct claim_job j = { .cluster = cluster, .prev = prev, .next = next, .note = note };
	atomic_init(&j.raised, 0);
	atomic_init(&j.failed, 0);
	/* The slots are independent (one fence directory each): claimed
	 * CLAIM_THREADS at a time, all before the caller writes `next`. */
	(void)kaas_parallel_for(next->n, CLAIM_THREADS, claim_one, &j);
	if (atomic_load(&j.failed))
		return kaas_sub_fail(j.err, "%s", j.detail);
	return atomic_load(&j.raised);
}

/* ---- placement ---- */

static int is_alive(int32_t id, const int32_t *alive, size_t nalive)
{
	for (size_t i = 0; i < nalive; i++)
		if (alive[i] == id)
			return 1;
	return 0;
}

static size_t load_of(const struct kaas_assignment *a, int32_t id)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].leader == id)
			n++;
	return n;
}

/* The live broker with the least (most) load; ties to the lowest id.
 * loads[i] is alive[i]'s load in a (NULL: counted here). */
static int32_t pick(const struct kaas_assignment *a, const int32_t *alive, size_t nalive, int most,
		    const size_t *loads)
{
	int32_t best = KAAS_NO_LEADER;
	size_t best_load = 0;
	for (size_t i = 0; i < nalive; i++) {
		size_t l = loads ? loads[i] : load_of(a, alive[i]);
		if (best == KAAS_NO_LEADER || (most ? l > best_load : l < best_load) ||
		    (l == best_load && alive[i] < best)) {
			best = alive[i];
			best_load = l;
		}
	}
	return best;
}

int kaas_assignment_plan(const struct kaas_assignment *cur, const struct kaas_slot_want *want,
			 size_t nwant, const int32_t *alive, size_t nalive, uint64_t controller_epoch,
			 unsigned max_moves, struct kaas_assignment *next, int *changed)
{
	memset(next, 0, sizeof *next);
	*changed = 0;
	next->e = calloc(nwant ? nwant : 1, sizeof *next->e);
	if (!next->e)
		return -ENOMEM;
	next->controller_epoch = controller_epoch;
	/* 1. Carry over every wanted slot, keeping live leaders. */
	for (size_t i = 0; i < nwant; i++) {
		struct kaas_assign_entry *e = &next->e[next->n++];
		snprintf(e->topic, sizeof e->topic, "%s", want[i].topic);
		e->partition = want[i].partition;
		const struct kaas_assign_entry *old = kaas_assignment_find(cur, want[i].topic, want[i].partition);
		if (old) {
			e->leader = old->leader;
			e->leader_epoch = old->leader_epoch;
		} else {
			e->leader = KAAS_NO_LEADER;
			e->leader_epoch = 0;
			*changed = 1;
		}
	}
	if (cur->n != next->n)
		*changed = 1; /* some slot was dropped (or added) */
	/* 2. Slots without a live leader go to the least-loaded live broker
	 * (the loads counted once, then kept up to date: linear in the slots). */
	size_t *loads = calloc(nalive ? nalive : 1, sizeof *loads);
	if (!loads) {
		kaas_assignment_free(next);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nalive; k++)
		loads[k] = load_of(next, alive[k]);
	for (size_t i = 0; i < next->n; i++) {
		struct kaas_assign_entry *e = &next->e[i];
		if (e->leader != KAAS_NO_LEADER && is_alive(e->leader, alive, nalive))
			continue;
		int32_t to = pick(next, alive, nalive, 0, loads);
		for (size_t k = 0; to != KAAS_NO_LEADER && k < nalive; k++)
			if (alive[k] == to)
				loads[k]++;
		if (to == KAAS_NO_LEADER) {
			if (e->leader != KAAS_NO_LEADER) {
				e->leader = KAAS_NO_LEADER;
				*changed = 1;
			}
			continue;
		}
		e->leader = to;
		e->leader_epoch++;
		*changed = 1;
	}
	free(loads);
	/* 3. Gradual rebalance toward a returning or new broker. */
	for (unsigned m = 0; m < max_moves && nalive > 1; m++) {
		int32_t hi = pick(next, alive, nalive, 1, NULL), lo = pick(next, alive, nalive, 0, NULL);
		if (load_of(next, hi) <= load_of(next, lo) + 1)
			break;
		/* Move the hi broker's last slot (deterministic). */
		for (size_t i = next->n; i-- > 0;) {
			if (next->e[i].leader == hi) {
				next->e[i].leader = lo;
				next->e[i].leader_epoch++;
				*changed = 1;
				break;
			}
		}
	}
	next->version = cur->version + (*changed ? 1 : 0);
	(void)kaas_assignment_index(next); /* without it: found in linear time */
	return 0;
}
