/* api_list_offsets.c — ListOffsets 0..9: earliest (-2), latest (-1), the
 * largest timestamp (-3, KIP-734, v7+), the earliest local offset (-4,
 * KIP-405, v8+: the log start, kaas has no remote tier), the last tiered
 * offset (-5, KIP-1005, v9+: none, -1), by timestamp; v6+ flexible.  A
 * special timestamp older than its version is UNSUPPORTED_VERSION on the
 * partition, as in Kafka.
 * A fenced broker (kaas_agent_fenced) answers NOT_LEADER_OR_FOLLOWER.
 *
 * By timestamp, the answer is the earliest record at or above the log start
 * whose timestamp is >= the target, with that record's timestamp and its
 * batch's leader epoch.  The log's time index chooses the batch (the log
 * stores batches and does not parse records); the record is found here,
 * inside the batch (kaas_batch_time_scan: decompressing if needed, and a
 * LogAppendTime batch's records all carry its append time). */
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/agent.h"
#include "util/logger.h"
#include "kafka/batch.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/status.h"

#define TS_LATEST (-1)
#define TS_EARLIEST (-2)
#define TS_MAX_TIMESTAMP (-3)
#define TS_EARLIEST_LOCAL (-4)
#define TS_LATEST_TIERED (-5)

/* Is ts a special timestamp that version v does not know yet? */
static int ts_too_new(int64_t ts, int16_t v)
{
	return (ts == TS_MAX_TIMESTAMP && v < 7) || (ts == TS_EARLIEST_LOCAL && v < 8) ||
	       (ts == TS_LATEST_TIERED && v < 9);
}

/* Bytes read per step of the max-timestamp fallback scan. */
#define SCAN_BYTES (1u << 20)

/* The first record at or above `from` (and the log start) whose timestamp
 * is >= ts: 0 with *off, *ots, *epoch; -ENOENT (none); -EBADMSG (a stored
 * batch does not parse); -errno.  A batch whose maxTimestamp promises a
 * record it does not hold (a producer's wrong header) is passed over. */
static int record_for_time(struct kaas_log *log, int64_t ts, int64_t from, int64_t *off,
			   int64_t *ots, int32_t *epoch)
{
	for (;;) {
		int64_t at;
		int rc = kaas_log_offset_for_time_from(log, ts, from, &at, NULL);
		if (rc < 0)
			return rc;
		void *buf;
		size_t len;
		rc = kaas_log_read_copy(log, at, 1, &buf, &len, NULL); /* that one batch */
		if (rc == -ERANGE && at < kaas_log_start_offset(log))
			continue; /* the log start moved meanwhile */
		if (rc < 0)
			return rc;
		if (len == 0)
			return -ENOENT;
		struct kaas_batch_header h;
		struct kaas_batch_times bt;
		rc = kaas_batch_parse_header(buf, len, &h) < 0 || (size_t)h.batch_length + 12 != len
			     ? -EBADMSG
			     : kaas_batch_time_scan(buf, len, at, ts, &bt);
		free(buf);
		if (rc < 0)
			return rc;
		if (bt.ge_offset >= 0) {
			*off = bt.ge_offset;
			*ots = bt.ge_timestamp;
			*epoch = h.leader_epoch;
			return 0;
		}
		from = h.base_offset + h.last_offset_delta + 1;
	}
}

/* The largest timestamp among the records from the log start, by reading
 * every batch (for when the segments' maxima name a record below the log
 * start, after DeleteRecords): 0 with *max, -ENOENT (no record), -errno. */
static int scan_max_timestamp(struct kaas_log *log, int64_t *max)
{
	int64_t from = kaas_log_start_offset(log);
	int any = 0;
	for (;;) {
		void *buf;
		size_t len;
		int64_t first;
		int rc = kaas_log_read_copy(log, from, SCAN_BYTES, &buf, &len, &first);
		if (rc < 0)
			return rc;
		if (len == 0)
			return any ? 0 : -ENOENT;
		size_t pos = 0;
		while (rc == 0 && pos < len) {
			struct kaas_batch_header h;
			struct kaas_batch_times bt;
			if (kaas_batch_parse_header((uint8_t *)buf + pos, len - pos, &h) < 0 ||
			    (size_t)h.batch_length + 12 > len - pos) {
				rc = -EBADMSG;
				break;
			}
			size_t blen = (size_t)h.batch_length + 12;
			if (h.base_offset >= from) {
				bt.max_offset = h.base_offset;
				bt.max_timestamp = h.max_timestamp;
			} else {
				rc = kaas_batch_time_scan((uint8_t *)buf + pos, blen, from, INT64_MAX, &bt);
			}
			if (rc == 0 && bt.max_offset >= 0 && (!any || bt.max_timestamp > *max)) {
				*max = bt.max_timestamp;
				any = 1;
			}
			pos += blen;
			from = h.base_offset + h.last_offset_delta + 1;
		}
		free(buf);
		if (rc < 0)
			return rc;
	}
}

/* -3: the first record with the largest timestamp. */
static int record_max_timestamp(struct kaas_log *log, int64_t *off, int64_t *ots, int32_t *epoch)
{
	int64_t max;
	int rc = kaas_log_max_timestamp(log, &max);
	if (rc == 0)
		rc = record_for_time(log, max, 0, off, ots, epoch);
	if (rc == -ENOENT && kaas_log_high_watermark(log) > kaas_log_start_offset(log)) {
		/* That record lies below the log start: find the largest of
		 * the records left. */
		rc = scan_max_timestamp(log, &max);
		if (rc == 0)
			rc = record_for_time(log, max, 0, off, ots, epoch);
	}
	return rc;
}

int kaas_api_list_offsets(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	(void)kaas_kr_i32(r); /* replica id */
	int8_t isolation = 0;
	if (v >= 2)
		isolation = kaas_kr_i8(r); /* 1 read_committed: latest is the LSO */
	if (v >= 2)
		kaas_kw_i32(w, 0); /* throttle */
	int32_t nt = kaas_kr_array(r, f, 6);
	if (!kaas_kr_ok(r) || nt < 0)
		return KAAS_REQ_CLOSE;
	kaas_kw_array(w, f, nt);
	for (int32_t i = 0; i < nt; i++) {
		struct kaas_kslice name = kaas_kr_str(r, f);
		int32_t np = kaas_kr_array(r, f, 12);
		if (!kaas_kr_ok(r) || np < 0)
			return KAAS_REQ_CLOSE;
		struct kaas_topic *tp = NULL;
		int16_t terr = 0;
		if (!kaas_topic_name_valid((const char *)name.p, name.len))
			terr = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		else if (!(tp = kaas_topics_get(b->topics, (const char *)name.p, name.len)))
			terr = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
		kaas_kw_strn(w, f, name.p, name.len);
		kaas_kw_array(w, f, np);
		for (int32_t j = 0; j < np; j++) {
			int32_t idx = kaas_kr_i32(r);
			if (v >= 4)
				(void)kaas_kr_i32(r); /* current leader epoch */
			int64_t ts = kaas_kr_i64(r);
			if (v == 0)
				(void)kaas_kr_i32(r); /* max_num_offsets */
			kaas_kr_tags(r, f);
			if (!kaas_kr_ok(r)) {
				kaas_topic_put(tp);
				return KAAS_REQ_CLOSE;
			}
			int16_t err = terr;
			int64_t off = -1, ots = -1;
			struct kaas_log *log = NULL;
			if (!err && (idx < 0 || idx >= tp->npart))
				err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
			else if (!err && kaas_agent_fenced(b->agent))
				/* maybe no longer the leader: its offsets may be
				 * older than the new leader's (see api_fetch.c) */
				err = KAAS_KERR_NOT_LEADER_OR_FOLLOWER;
			else if (!err && !(log = tp->parts[idx].log))
				err = kaas_partition_not_led(&tp->parts[idx])
					      ? KAAS_KERR_NOT_LEADER_OR_FOLLOWER
					      : KAAS_KERR_KAFKA_STORAGE_ERROR;
			int32_t epoch = log ? (int32_t)kaas_log_epoch(log) : -1;
			if (!err && ts_too_new(ts, v))
				err = KAAS_KERR_UNSUPPORTED_VERSION;
			if (!err) {
				int rc = 0;
				if (ts == TS_LATEST)
					off = isolation == 1 ? kaas_log_last_stable_offset(log)
							     : kaas_log_high_watermark(log);
				else if (ts == TS_EARLIEST || ts == TS_EARLIEST_LOCAL)
					off = kaas_log_start_offset(log);
				else if (ts == TS_LATEST_TIERED)
					rc = -ENOENT; /* nothing is tiered: -1 */
				else if (ts == TS_MAX_TIMESTAMP)
					rc = record_max_timestamp(log, &off, &ots, &epoch);
				else
					rc = record_for_time(log, ts, 0, &off, &ots, &epoch);
				if (rc == -ENOENT) {
					off = ots = -1;
					epoch = -1;
				} else if (rc < 0) {
					kaas_error("list offsets %.*s/%d at time %lld: %s", name.len,
						   (const char *)name.p, idx, (long long)ts,
						   kaas_strerror(rc));
					err = KAAS_KERR_KAFKA_STORAGE_ERROR;
				}
			}
			kaas_kw_i32(w, idx);
			kaas_kw_i16(w, err);
			if (v == 0) {
				if (err || off < 0) {
					kaas_kw_array(w, 0, 0);
				} else {
					kaas_kw_array(w, 0, 1);
					kaas_kw_i64(w, off);
				}
			} else {
				kaas_kw_i64(w, err ? -1 : ots);
				kaas_kw_i64(w, err ? -1 : off);
				if (v >= 4)
					kaas_kw_i32(w, err ? -1 : epoch);
			}
			kaas_kw_tags(w, f);
		}
		kaas_kr_tags(r, f);
		kaas_kw_tags(w, f);
		kaas_topic_put(tp);
	}
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}
