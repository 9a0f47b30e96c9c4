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
	char name[256];
	size_t n = (size_t)tlen < sizeof name - 1 ? (size_t)tlen : sizeof name - 1;
	memcpy(name, topic, n);
	name[n] = '\0';
	const char *labels[] = { name };
	kaas_metric_add(kaas_metric_series(produce ? &produce_bytes : &fetch_bytes, labels), (uint64_t)bytes);
	kaas_metric_add(kaas_metric_series(produce ? &produce_records : &fetch_records, labels), records);
}
