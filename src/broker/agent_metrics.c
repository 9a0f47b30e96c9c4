/* agent_metrics.c — the cluster agent's round, as metrics: the newest
 * controller epoch seen and the liveness of every listed broker. */
#include "broker/agent_internal.h"

#include <stdio.h>

#include "cluster/membership.h"
#include "util/metrics.h"

static struct kaas_metric controller_epoch = KAAS_GAUGE("kaas_controller_epoch",
	"The newest controller epoch claimed in the cluster, as this broker saw it.", NULL);
static struct kaas_metric peer_alive = KAAS_GAUGE("kaas_peer_alive",
	"1 when the broker's heartbeat counter moved within the liveness timeout, else 0.", "broker");

void kaas_agent_metrics_round(const struct kaas_broker_info *list, size_t n, const int32_t *alive,
			      size_t nalive, uint64_t epoch)
{
	if (!kaas_metrics_enabled())
		return;
	kaas_metric_set(kaas_metric_series(&controller_epoch, NULL), (double)epoch);
	for (size_t i = 0; i < n; i++) {
		int up = 0;
		for (size_t j = 0; alive && j < nalive; j++)
			up |= alive[j] == list[i].id;
		char id[16];
		snprintf(id, sizeof id, "%d", (int)list[i].id);
		const char *labels[] = { id };
		kaas_metric_set(kaas_metric_series(&peer_alive, labels), up);
	}
}
