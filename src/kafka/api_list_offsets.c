/* api_list_offsets.c — ListOffsets 0..5: earliest, latest, by timestamp.
 * A fenced broker (kaas_cluster_fenced) answers NOT_LEADER_OR_FOLLOWER. */
#include <stdlib.h>

#include "broker/broker.h"
#include "broker/cluster.h"
#include "kafka/protocol.h"
#include "kafka/request.h"

#define TS_LATEST (-1)
#define TS_EARLIEST (-2)

int kaas_api_list_offsets(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	struct kaas_kr *r = &req->r;
	struct kaas_kw *w = &req->w;
	int16_t v = req->hdr.api_version;
	(void)kaas_kr_i32(r); /* replica id */
	if (v >= 2)
		(void)kaas_kr_i8(r); /* isolation level */
	if (v >= 2)
		kaas_kw_i32(w, 0); /* throttle */
	int32_t nt = kaas_kr_array(r, 0, 6);
	if (!kaas_kr_ok(r) || nt < 0)
		return KAAS_REQ_CLOSE;
	kaas_kw_array(w, 0, nt);
	for (int32_t i = 0; i < nt; i++) {
		struct kaas_kslice name = kaas_kr_str(r, 0);
		int32_t np = kaas_kr_array(r, 0, 12);
		if (!kaas_kr_ok(r) || np < 0)
			return KAAS_REQ_CLOSE;
		struct kaas_topic *tp = NULL;
		int16_t terr = 0;
		if (!kaas_topic_name_valid((const char *)name.p, name.len))
			terr = KAAS_KERR_INVALID_TOPIC_EXCEPTION;
		else if (!(tp = kaas_topics_get(b->topics, (const char *)name.p, name.len)))
			terr = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
		kaas_kw_strn(w, 0, name.p, name.len);
		kaas_kw_array(w, 0, np);
		for (int32_t j = 0; j < np; j++) {
			int32_t idx = kaas_kr_i32(r);
			if (v >= 4)
				(void)kaas_kr_i32(r); /* current leader epoch */
			int64_t ts = kaas_kr_i64(r);
			if (v == 0)
				(void)kaas_kr_i32(r); /* max_num_offsets */
			if (!kaas_kr_ok(r)) {
				kaas_topic_put(tp);
				return KAAS_REQ_CLOSE;
			}
			int16_t err = terr;
			int64_t off = -1, ots = -1;
			struct kaas_log *log = NULL;
			if (!err && (idx < 0 || idx >= tp->npart))
				err = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
			else if (!err && kaas_cluster_fenced(b->agent))
				/* maybe no longer the leader: its offsets may be
				 * older than the new leader's (see api_fetch.c) */
				err = KAAS_KERR_NOT_LEADER_OR_FOLLOWER;
			else if (!err && !(log = tp->parts[idx].log))
				err = kaas_partition_not_led(&tp->parts[idx])
					      ? KAAS_KERR_NOT_LEADER_OR_FOLLOWER
					      : KAAS_KERR_KAFKA_STORAGE_ERROR;
			if (!err) {
				if (ts == TS_LATEST) {
					off = kaas_log_high_watermark(log);
				} else if (ts == TS_EARLIEST) {
					off = kaas_log_start_offset(log);
				} else {
					int rc = kaas_log_offset_for_time(log, ts, &off, &ots);
					if (rc == -ENOENT) {
						off = -1;
						ots = -1;
					} else if (rc < 0) {
						err = KAAS_KERR_KAFKA_STORAGE_ERROR;
					}
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
					kaas_kw_i32(w, log ? (int32_t)kaas_log_epoch(log) : -1);
			}
		}
		kaas_topic_put(tp);
	}
	return KAAS_REQ_RESPOND;
}
