/*
 * http_metrics.c — the server's side of the metrics (util/metrics.h):
 * requests counted and timed when they finish (loop thread), the broker's
 * state rendered once a second on the loop into a text slot the endpoint
 * thread appends to every scrape (partitions led / recovering / offline,
 * high watermarks, consumer lag, producer ids), and the volume's free
 * space, read by housekeeping on the work pool.  The endpoint thread
 * itself (http.c) never touches the registry of topics or groups.
 */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/groups/groups.h"
#include "broker/topics.h"
#include "kafka/protocol.h"
#include "server/http_status.h"
#include "util/logger.h"
#include "util/metrics.h"

#define SNAPSHOT_MS 1000
#define SLOT_BROKER 0

static struct kaas_metric requests = KAAS_COUNTER("kaas_requests_total",
	"Kafka requests finished, by API and error (the first non-zero partition error code of a "
	"Produce or Fetch response, \"close\" when the connection was closed, else 0).",
	"api", "error");
static struct kaas_metric request_seconds = KAAS_HISTOGRAM("kaas_request_duration_seconds",
	"Time from dispatch to the finished response, by API.", KAAS_METRIC_SECONDS,
	kaas_metric_latency_bounds, KAAS_METRIC_LATENCY_NBOUNDS, "api");
static struct kaas_metric volume_free = KAAS_GAUGE("kaas_volume_free_bytes",
	"Bytes available to kaas on the data volume (statfs through the substrate).", NULL);

static const char *api_name(int16_t key, char *buf, size_t size)
{
	switch (key) {
	case KAAS_API_PRODUCE: return "Produce";
	case KAAS_API_FETCH: return "Fetch";
	case KAAS_API_LIST_OFFSETS: return "ListOffsets";
	case KAAS_API_METADATA: return "Metadata";
	case KAAS_API_OFFSET_COMMIT: return "OffsetCommit";
	case KAAS_API_OFFSET_FETCH: return "OffsetFetch";
	case KAAS_API_FIND_COORDINATOR: return "FindCoordinator";
	case KAAS_API_JOIN_GROUP: return "JoinGroup";
	case KAAS_API_HEARTBEAT: return "Heartbeat";
	case KAAS_API_LEAVE_GROUP: return "LeaveGroup";
	case KAAS_API_SYNC_GROUP: return "SyncGroup";
	case KAAS_API_DESCRIBE_GROUPS: return "DescribeGroups";
	case KAAS_API_LIST_GROUPS: return "ListGroups";
	case KAAS_API_API_VERSIONS: return "ApiVersions";
	case KAAS_API_CREATE_TOPICS: return "CreateTopics";
	case KAAS_API_DELETE_TOPICS: return "DeleteTopics";
	case KAAS_API_INIT_PRODUCER_ID: return "InitProducerId";
	case KAAS_API_DESCRIBE_CONFIGS: return "DescribeConfigs";
	case KAAS_API_CREATE_PARTITIONS: return "CreatePartitions";
	default:
		snprintf(buf, size, "%d", (int)key);
		return buf;
	}
}

/* Series of the common case (no error) and the latency, per API key,
 * cached: the loop thread is their only user. */
#define CACHED_KEYS 64
static struct kaas_metric_series *ok_series[CACHED_KEYS], *seconds_series[CACHED_KEYS];

void kaas_server_metrics_request(struct kaas_req *req, int status)
{
	if (!req->start_ns || !kaas_metrics_enabled())
		return;
	int16_t key = req->hdr.api_key;
	int cached = key >= 0 && key < CACHED_KEYS;
	int ok = status != KAAS_REQ_CLOSE && !req->error_code;
	/* The common case: a known API without error, both series cached
	 * (no name, no lookup). */
	struct kaas_metric_series *count = cached && ok ? ok_series[key] : NULL;
	struct kaas_metric_series *sec = cached ? seconds_series[key] : NULL;
	if (!count || !sec) {
		char kb[16], eb[16];
		const char *api = api_name(key, kb, sizeof kb);
		if (!count) {
			if (status == KAAS_REQ_CLOSE)
				snprintf(eb, sizeof eb, "close");
			else
				snprintf(eb, sizeof eb, "%d", (int)req->error_code);
			const char *labels[] = { api, eb };
			count = kaas_metric_series(&requests, labels);
			if (cached && ok)
				ok_series[key] = count;
		}
		if (!sec) {
			const char *labels[] = { api };
			sec = kaas_metric_series(&request_seconds, labels);
			if (cached)
				seconds_series[key] = sec;
		}
	}
	kaas_metric_add(count, 1);
	kaas_metric_observe(sec, kaas_metrics_now_ns() - req->start_ns);
}

void kaas_server_metrics_volume(struct kaas_broker *b)
{
	struct kaas_statfs st;
	if (!kaas_metrics_enabled() || kaas_sub_statfs(b->data, "", &st) < 0)
		return;
	kaas_metric_set(kaas_metric_series(&volume_free, NULL), (double)st.free_bytes);
}

/* ------------------------------------------- the loop's state snapshot */

struct snap {
	struct kaas_broker *b;
	struct kaas_mbuf hwm, lag;
	long led, recovering, offline;
	uint64_t pids;
};

static void on_commit(void *arg, const char *group, const char *topic, int32_t partition,
		      int64_t offset)
{
	struct snap *sn = arg;
	struct kaas_topic *t = kaas_topics_get(sn->b->topics, topic, (int)strlen(topic));
	if (!t)
		return;
	/* only partitions led here: their high watermark is known */
	if (partition >= 0 && partition < t->npart && t->parts[partition].log && offset >= 0) {
		int64_t hw = kaas_log_high_watermark(t->parts[partition].log);
		kaas_mbuf_printf(&sn->lag, "kaas_group_lag{group=\"");
		kaas_mbuf_label_value(&sn->lag, group);
		kaas_mbuf_printf(&sn->lag, "\",topic=\"");
		kaas_mbuf_label_value(&sn->lag, topic);
		kaas_mbuf_printf(&sn->lag, "\",partition=\"%d\"} %lld\n", (int)partition,
				 (long long)(hw > offset ? hw - offset : 0));
	}
	kaas_topic_put(t);
}

static void snapshot(struct kaas_server *s)
{
	struct kaas_broker *b = s->b;
	struct snap sn = { .b = b };
	int per_part = b->cfg.metrics_per_partition;
	int n = 0;
	struct kaas_topic **v = kaas_topics_list(b->topics, &n);
	for (int i = 0; i < n; i++) {
		struct kaas_topic *t = v[i];
		for (int32_t p = 0; p < t->npart; p++) {
			struct kaas_partition *pa = &t->parts[p];
			if (kaas_partition_not_led(pa))
				continue;
			if (!pa->log) {
				sn.offline++;
				continue;
			}
			if (__atomic_load_n(&pa->failed, __ATOMIC_RELAXED) || kaas_log_status(pa->log) < 0) {
				sn.recovering++; /* housekeeping re-opens it (tail recovery) */
				continue;
			}
			sn.led++;
			sn.pids += kaas_log_producer_count(pa->log);
			if (per_part) {
				kaas_mbuf_printf(&sn.hwm, "kaas_partition_high_watermark{topic=\"");
				kaas_mbuf_label_value(&sn.hwm, t->name);
				kaas_mbuf_printf(&sn.hwm, "\",partition=\"%d\"} %lld\n", (int)p,
						 (long long)kaas_log_high_watermark(pa->log));
			}
		}
		kaas_topic_put(t);
	}
	free(v);
	if (per_part)
		kaas_groups_each_commit(b->groups, on_commit, &sn);
	sn.recovering += kaas_log_recovering_count();
	struct kaas_mbuf out = { 0 };
	kaas_mbuf_family(&out, "kaas_partitions_led", "gauge", "Partitions whose log is open and writable here.");
	kaas_mbuf_printf(&out, "kaas_partitions_led %ld\n", sn.led);
	kaas_mbuf_family(&out, "kaas_partitions_recovering", "gauge",
			 "Partitions led here under tail recovery or waiting to be re-opened after a failure.");
	kaas_mbuf_printf(&out, "kaas_partitions_recovering %ld\n", sn.recovering);
	kaas_mbuf_family(&out, "kaas_partitions_offline", "gauge",
			 "Partitions granted to this broker whose log could not be opened.");
	kaas_mbuf_printf(&out, "kaas_partitions_offline %ld\n", sn.offline);
	kaas_mbuf_family(&out, "kaas_producer_ids_in_use", "gauge",
			 "Producer ids with idempotence state, summed over the partitions led here.");
	kaas_mbuf_printf(&out, "kaas_producer_ids_in_use %llu\n", (unsigned long long)sn.pids);
	if (per_part) {
		kaas_mbuf_family(&out, "kaas_partition_high_watermark", "gauge",
				 "High watermark of each partition led here.");
		if (sn.hwm.p)
			kaas_mbuf_printf(&out, "%s", sn.hwm.p);
		kaas_mbuf_family(&out, "kaas_group_lag", "gauge",
				 "High watermark minus committed offset, for groups coordinated here, on partitions led here.");
		if (sn.lag.p)
			kaas_mbuf_printf(&out, "%s", sn.lag.p);
	}
	kaas_mbuf_free(&sn.hwm);
	kaas_mbuf_free(&sn.lag);
	if (out.oom) {
		kaas_mbuf_free(&out);
		return;
	}
	kaas_metrics_publish(SLOT_BROKER, out.p);
}

static void on_snapshot(uv_timer_t *t)
{
	snapshot(t->data);
}

void kaas_server_metrics_start(struct kaas_server *s)
{
	if (!kaas_metrics_enabled())
		return;
	/* Every API's no-error series from 0, so that a rate sees its first
	 * requests (a counter born at 2 shows no increase). */
	for (int16_t key = 0; key < CACHED_KEYS; key++) {
		char kb[16];
		const char *api = api_name(key, kb, sizeof kb);
		if (api == kb)
			continue;
		const char *labels[] = { api, "0" };
		ok_series[key] = kaas_metric_series(&requests, labels);
		seconds_series[key] = kaas_metric_series(&request_seconds, labels);
	}
	if (kaas_http_status_attach(s->loop, s->b) < 0) /* the status page's snapshots */
		kaas_warn("http: the status page is off (no async handle)");
	uv_timer_init(s->loop, &s->metrics_tick);
	s->metrics_tick.data = s;
	s->metrics_live = 1;
	snapshot(s);
	uv_timer_start(&s->metrics_tick, on_snapshot, SNAPSHOT_MS, SNAPSHOT_MS);
}

void kaas_server_metrics_stop(struct kaas_server *s)
{
	if (!s->metrics_live)
		return;
	s->metrics_live = 0;
	kaas_http_status_detach();
	uv_close((uv_handle_t *)&s->metrics_tick, NULL);
	kaas_metrics_publish(SLOT_BROKER, NULL);
}
