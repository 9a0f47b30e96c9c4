/* log_metrics.c — what the partition logs tell the metrics registry
 * (util/metrics.h): group-commit sizes and fsync latencies (the sync
 * thread), tail recoveries in progress, and producer ids per log. */
#include "log/log_internal.h"

#include "util/metrics.h"
#include "util/lock_rank.h"

static struct kaas_metric fsync_seconds = KAAS_HISTOGRAM("kaas_log_fsync_duration_seconds",
	"Latency of a group commit's segment fsync.", KAAS_METRIC_SECONDS,
	kaas_metric_latency_bounds, KAAS_METRIC_LATENCY_NBOUNDS, NULL);
static struct kaas_metric commit_records = KAAS_HISTOGRAM("kaas_log_group_commit_records",
	"Records made durable by one group commit (one fsync).", KAAS_METRIC_UNITS,
	kaas_metric_count_bounds, KAAS_METRIC_COUNT_NBOUNDS, NULL);
static int recovering;

uint64_t kaas_logi_metrics_start(void)
{
	return kaas_metrics_enabled() ? kaas_metrics_now_ns() : 0;
}

void kaas_logi_metrics_commit(const struct round *r, uint64_t t0, int rc)
{
	if (!t0 || rc < 0)
		return;
	kaas_metric_observe(kaas_metric_series(&fsync_seconds, NULL), kaas_metrics_now_ns() - t0);
	uint64_t records = 0;
	for (const struct pending *p = r->list; p; p = p->next)
		records += (uint64_t)p->count;
	kaas_metric_observe(kaas_metric_series(&commit_records, NULL), records);
}

void kaas_logi_metrics_recovering(int delta)
{
	__atomic_add_fetch(&recovering, delta, __ATOMIC_RELAXED);
}

int kaas_log_recovering_count(void)
{
	return __atomic_load_n(&recovering, __ATOMIC_RELAXED);
}

size_t kaas_log_producer_count(struct kaas_log *log)
{
	kaas_lock(&log->mu, KAAS_RANK_LOG_MU);
	size_t n = log->ps.count;
	kaas_unlock(&log->mu);
	return n;
}
