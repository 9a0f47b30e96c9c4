/* lag.c — the committed offsets of the groups this broker coordinates,
 * for the metrics endpoint's consumer-lag gauges (groups.h). */
#include "broker/groups/internal.h"

void kaas_groups_each_commit(struct kaas_groups *g, kaas_group_commit_cb cb, void *arg)
{
	if (!g)
		return;
	GROUPS_ON_LOOP(g);
	for (struct group *gr = g->list; gr; gr = gr->next) {
		/* offs is the work thread's while an operation runs on it */
		if (!gr->loaded || gr->op_running || !gr->epoch)
			continue;
		for (size_t i = 0; i < gr->offs.n; i++) {
			const struct kaas_committed *c = &gr->offs.items[i];
			cb(arg, gr->id, c->topic, c->partition, c->offset);
		}
	}
}
