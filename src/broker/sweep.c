/* sweep.c — sweep dead writers' temps and private names by incarnation. */
#include "broker/sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/agent.h"
#include "cluster/group_store.h"
#include "cluster/membership.h"
#include "contract/contract.h"

#define SWEEP_MAX_BROKERS 1024

int kaas_sweeper_live(void *arg, uint64_t inc, const char *name)
{
	struct kaas_sweeper *sw = arg;
	(void)name;
	if (inc && inc == kaas_incarnation())
		return 1;
	for (size_t i = 0; inc && i < sw->nlive; i++)
		if (sw->live[i] == inc)
			return 1;
	for (size_t i = 0; i < sw->nseen; i++)
		if (sw->seen[i].inc == inc) {
			sw->seen[i].seen = 1;
			return sw->now_ms - sw->seen[i].first_ms < sw->grace_ms;
		}
	if (sw->nseen == sw->capseen) {
		size_t cap = sw->capseen ? 2 * sw->capseen : 16;
		void *v = realloc(sw->seen, cap * sizeof *sw->seen);
		if (!v)
			return 1; /* keep it: decide at a later pass */
		sw->seen = v;
		sw->capseen = cap;
	}
	sw->seen[sw->nseen++] = (struct kaas_sweep_seen){ .inc = inc, .first_ms = sw->now_ms, .seen = 1 };
	return sw->grace_ms != 0; /* first sight: live for grace_ms */
}

struct pass {
	struct kaas_sweeper *sw;
	int removed;
	int err;
};

static void sweep_dir(struct pass *p, struct kaas_substrate *sub, const char *dir)
{
	int rc = kaas_sweep_stale(sub, dir, kaas_sweeper_live, p->sw);
	if (rc > 0)
		p->removed += rc;
	else if (rc < 0 && rc != -ENOENT && !p->err)
		p->err = rc;
}

/* Sweep every subdirectory of `dir` (not starting with '.'), minus `skip`. */
static void sweep_subdirs(struct pass *p, struct kaas_substrate *sub, const char *dir, const char *skip)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(sub, dir, &l);
	if (rc < 0) {
		if (rc != -ENOENT && !p->err)
			p->err = rc;
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (l.types[i] != KAAS_FT_DIR || l.names[i][0] == '.' ||
		    (skip && strcmp(l.names[i], skip) == 0))
			continue;
		char *d = kaas_path_join(dir, l.names[i]);
		if (!d) {
			p->err = p->err ? p->err : -ENOMEM;
			break;
		}
		sweep_dir(p, sub, d);
		free(d);
	}
	kaas_dirlist_free(&l);
}

/* The data volume's cluster directory, when the cluster volume is inside it
 * (<data>/__cluster): not a topic. */
#define DATA_CLUSTER_DIR "__cluster"

int kaas_sweeper_pass(struct kaas_sweeper *sw, struct kaas_agent *agent,
		      struct kaas_substrate *cluster, struct kaas_substrate *data, uint64_t now_ms)
{
	sw->now_ms = now_ms;
	sw->nlive = 0;
	if (agent) {
		struct kaas_broker_info *b = malloc(SWEEP_MAX_BROKERS * sizeof *b);
		uint64_t *live = b ? realloc(sw->live, SWEEP_MAX_BROKERS * sizeof *live) : NULL;
		if (!live) {
			free(b);
			return -ENOMEM;
		}
		sw->live = live;
		size_t n = kaas_agent_brokers(agent, b, SWEEP_MAX_BROKERS);
		for (size_t i = 0; i < n; i++)
			sw->live[sw->nlive++] = b[i].incarnation;
		free(b);
	}
	for (size_t i = 0; i < sw->nseen; i++)
		sw->seen[i].seen = 0;

	struct pass p = { .sw = sw };
	static const char *const cluster_dirs[] = { "", KAAS_BROKERS_DIR, "topics", "controller",
						    "producer-ids", "leader-epochs", KAAS_GROUPS_DIR,
						    "acls", "quotas",
						    /* transactions (txn-coord) */
						    "txn-markers", "txns" };
	for (size_t i = 0; i < sizeof cluster_dirs / sizeof *cluster_dirs; i++)
		sweep_dir(&p, cluster, cluster_dirs[i]);
	sweep_subdirs(&p, cluster, KAAS_GROUPS_DIR, NULL);
	sweep_subdirs(&p, cluster, "txns", NULL); /* txn-coord: txns/<enc>/ */
	sweep_subdirs(&p, cluster, "credentials", NULL); /* SASL: credentials/<mech>/ */
	if (data)
		sweep_subdirs(&p, data, "", DATA_CLUSTER_DIR);

	/* Forget incarnations no longer seen anywhere: the table stays small. */
	size_t k = 0;
	for (size_t i = 0; i < sw->nseen; i++)
		if (sw->seen[i].seen)
			sw->seen[k++] = sw->seen[i];
	sw->nseen = k;
	return p.err ? p.err : p.removed;
}

void kaas_sweeper_free(struct kaas_sweeper *sw)
{
	free(sw->seen);
	free(sw->live);
	sw->seen = NULL;
	sw->live = NULL;
	sw->nseen = sw->capseen = sw->nlive = 0;
}
