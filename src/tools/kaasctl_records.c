/* kaasctl_records.c — one stored RecordBatch v2 as a JSON object for
 * `kaasctl dump-log`: its header fields, and every record (decompressed if
 * needed) with offset, timestamp, key, value and headers as escaped text. */
#include "tools/kaasctl_records.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "contract/doc.h"
#include "kafka/batch.h"
#include "kafka/codec.h"
#include "log/log.h"

static const char *const codecs[] = { "none", "gzip", "snappy", "lz4", "zstd" };

/* Add key: escaped text of s (null when s.len < 0); 0 or -ENOMEM. */
static int add_bytes(cJSON *o, const char *key, struct kaas_kslice s)
{
	if (s.len < 0)
		return cJSON_AddNullToObject(o, key) ? 0 : -ENOMEM;
	char *e = kctl_escape(s.p, (size_t)s.len);
	cJSON *v = e ? cJSON_AddStringToObject(o, key, e) : NULL;
	free(e);
	return v ? 0 : -ENOMEM;
}

static struct kaas_kslice varbytes(struct kaas_kr *r)
{
	int32_t n = kaas_kr_varint(r);
	if (n < 0)
		return (struct kaas_kslice){ NULL, -1 };
	return kaas_kr_raw(r, (size_t)n);
}

/* A control record's key: version (int16), type (0 ABORT, 1 COMMIT). */
static const char *control_type(struct kaas_kslice key)
{
	if (key.len < 4)
		return "UNKNOWN";
	int type = (key.p[2] << 8) | key.p[3];
	return type == 0 ? "ABORT" : type == 1 ? "COMMIT" : "UNKNOWN";
}

static cJSON *record_json(struct kaas_kr *rec, const struct kaas_batch_header *h, int control,
			  int log_append_time)
{
	cJSON *o = cJSON_CreateObject();
	(void)kaas_kr_i8(rec); /* attributes: unused */
	int64_t ts = h->base_timestamp + kaas_kr_varlong(rec);
	int64_t off = h->base_offset + kaas_kr_varint(rec);
	struct kaas_kslice key = varbytes(rec);
	struct kaas_kslice val = varbytes(rec);
	int32_t nh = kaas_kr_varint(rec);
	kaas_json_add_i64(o, "offset", off);
	kaas_json_add_i64(o, "timestamp", log_append_time ? h->max_timestamp : ts);
	add_bytes(o, "key", key);
	add_bytes(o, "value", val);
	if (control)
		cJSON_AddStringToObject(o, "control", control_type(key));
	cJSON *hs = cJSON_AddArrayToObject(o, "headers");
	for (int32_t i = 0; i < nh && kaas_kr_ok(rec); i++) {
		cJSON *hd = cJSON_CreateObject();
		cJSON_AddItemToArray(hs, hd);
		add_bytes(hd, "key", varbytes(rec));
		add_bytes(hd, "value", varbytes(rec));
	}
	if (!kaas_kr_ok(rec) || nh < 0)
		cJSON_AddStringToObject(o, "error", "malformed record");
	return o;
}

/* The records of the batch into arr, those at offsets >= from. */
static int records_json(cJSON *arr, const unsigned char *b, size_t len,
			const struct kaas_batch_header *h, int64_t from, const char **why)
{
	const uint8_t *recs = b + KAAS_BATCH_HEADER_LEN;
	size_t rlen = len - KAAS_BATCH_HEADER_LEN;
	uint8_t *raw = NULL;
	int codec = h->attributes & 0x7;
	if (codec) {
		int rc = kaas_batch_decompress(codec, recs, rlen, KAAS_BATCH_MAX_INFLATED, &raw,
					       &rlen);
		if (rc < 0) {
			*why = "the payload does not decompress";
			return rc;
		}
		recs = raw;
	}
	struct kaas_kr r;
	kaas_kr_init(&r, recs, rlen);
	int control = (h->attributes & 0x20) != 0;
	int lat = (h->attributes & KAAS_BATCH_ATTR_LOG_APPEND_TIME) != 0;
	for (int32_t i = 0; i < h->record_count && kaas_kr_ok(&r); i++) {
		int32_t n = kaas_kr_varint(&r);
		if (n < 0 || (size_t)n > kaas_kr_left(&r)) {
			*why = "a record's length runs past the batch";
			break;
		}
		struct kaas_kr rec;
		kaas_kr_init(&rec, r.p, (size_t)n);
		r.p += n;
		cJSON *o = record_json(&rec, h, control, lat);
		cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset");
		if (cJSON_IsNumber(off) && off->valuedouble < (double)from)
			cJSON_Delete(o);
		else
			cJSON_AddItemToArray(arr, o);
	}
	free(raw);
	return 0;
}

cJSON *kctl_batch_json(const unsigned char *b, size_t len, uint64_t pos, int64_t from)
{
	struct kaas_batch_header h;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (kaas_batch_parse_header(b, len, &h) < 0) {
		cJSON_AddStringToObject(o, "error", "malformed batch header");
		return o;
	}
	kaas_json_add_i64(o, "base_offset", h.base_offset);
	kaas_json_add_i64(o, "last_offset", h.base_offset + h.last_offset_delta);
	kaas_json_add_u64(o, "position", pos);
	kaas_json_add_u64(o, "size", len);
	cJSON_AddNumberToObject(o, "partition_leader_epoch", h.leader_epoch);
	cJSON_AddNumberToObject(o, "record_count", h.record_count);
	int codec = h.attributes & 0x7;
	cJSON_AddStringToObject(o, "compression", codec < 5 ? codecs[codec] : "unknown");
	cJSON_AddStringToObject(o, "timestamp_type",
				h.attributes & KAAS_BATCH_ATTR_LOG_APPEND_TIME ? "LogAppendTime"
									 : "CreateTime");
	kaas_json_add_i64(o, "base_timestamp", h.base_timestamp);
	kaas_json_add_i64(o, "max_timestamp", h.max_timestamp);
	kaas_json_add_i64(o, "producer_id", h.producer_id);
	cJSON_AddNumberToObject(o, "producer_epoch", h.producer_epoch);
	cJSON_AddNumberToObject(o, "base_sequence", h.base_sequence);
	cJSON_AddBoolToObject(o, "transactional", (h.attributes & 0x10) != 0);
	cJSON_AddBoolToObject(o, "control", (h.attributes & 0x20) != 0);
	int crc_ok = kaas_batch_crc_ok(b, len);
	cJSON_AddBoolToObject(o, "crc_ok", crc_ok);
	cJSON *recs = cJSON_AddArrayToObject(o, "records");
	const char *why = NULL;
	if (crc_ok)
		records_json(recs, b, len, &h, from, &why);
	else
		why = "CRC32C mismatch: records not decoded";
	if (why)
		cJSON_AddStringToObject(o, "error", why);
	return o;
}
