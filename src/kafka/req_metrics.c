/* req_metrics.c — Produce and Fetch outcomes as metrics (req_metrics.h). */
#include "kafka/req_metrics.h"

#include <string.h>

#include "util/metrics.h"

static struct kaas_metric produce_bytes = KAAS_COUNTER("kaas_produce_bytes_total",
	"Record-set bytes appended by Produce, by topic.", "topic");
static struct kaas_metric produce_records = KAAS_COUNTER("kaas_produce_records_total",
	"Records appended by Produce, by topic.", "topic");
static struct kaas_metric fetch_bytes = KAAS_COUNTER("kaas_fetch_bytes_total",
	"Record-set bytes returned by Fetch, by topic.", "topic");
static struct kaas_metric fetch_records = KAAS_COUNTER("kaas_fetch_records_total",
	"Records returned by Fetch (whole batches), by topic.", "topic");

/* RecordBatch v2: batchLength at 8, recordsCount at 57, 61 header bytes. */
#define BATCH_HEADER 61

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint64_t kaas_records_count(const uint8_t *p, int64_t len)
{
	uint64_t n = 0;
	int64_t off = 0;
	while (p && len - off >= BATCH_HEADER) {
		int64_t size = 12 + (int64_t)be32(p + off + 8);
		if (size < BATCH_HEADER || size > len - off)
			break;
		n += be32(p + off + 57);
		off += size;
	}
	return n;
}

/* The four per-topic series of one topic, cached per thread (the series
 * lookup takes the family's mutex and formats the label set). */
struct topic_series {
	char name[256];
	struct kaas_metric_series *s[4]; /* produce bytes, records; fetch bytes, records */
};
#define TOPIC_CACHE 8
static __thread struct topic_series topic_cache[TOPIC_CACHE];

static struct kaas_metric_series **topic_series(const uint8_t *topic, int32_t tlen)
{
	char name[256];
	size_t n = (size_t)tlen < sizeof name - 1 ? (size_t)tlen : sizeof name - 1;
	memcpy(name, topic, n);
	name[n] = '\0';
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	struct topic_series *c = &topic_cache[h % TOPIC_CACHE];
	if (!c->s[0] || strcmp(c->name, name) != 0) {
		const char *labels[] = { name };
		memcpy(c->name, name, n + 1);
		c->s[0] = kaas_metric_series(&produce_bytes, labels);
		c->s[1] = kaas_metric_series(&produce_records, labels);
		c->s[2] = kaas_metric_series(&fetch_bytes, labels);
		c->s[3] = kaas_metric_series(&fetch_records, labels);
	}
	return c->s;
}

void kaas_req_metric_part(struct kaas_req *req, int produce, const uint8_t *topic, int32_t tlen,
			  int16_t err, int64_t bytes, uint64_t records)
{
	if (!kaas_metrics_enabled())
		return;
	if (err) {
		if (!req->error_code)
			req->error_code = err;
		return;
	}
	if (bytes <= 0 || tlen < 0)
		return;
	struct kaas_metric_series **s = topic_series(topic, tlen) + (produce ? 0 : 2);
	kaas_metric_add(s[0], (uint64_t)bytes);
	kaas_metric_add(s[1], records);
}
