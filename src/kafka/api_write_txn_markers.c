/*
 * api_write_txn_markers.c — WriteTxnMarkers 0..1 (1 flexible), on the work
 * queue: a transaction marker appended on a partition this broker leads,
 * as a transaction coordinator has Kafka's partition leaders write them.
 *
 * kaas's own coordinators never send it (they append markers directly or
 * through request files on the volume, broker/txn/markers.c).  It is
 * served for the admin clients: Kafka's Admin.abortTransaction (KIP-664,
 * `kafka-transactions.sh abort`) sends an abort marker for the producer id,
 * producer epoch and coordinator epoch DescribeProducers answered to the
 * leader of a partition with a hanging transaction (a transactional batch
 * written after its transaction's marker, which nothing else will close).
 *
 * As Kafka: CLUSTER_ACTION on the cluster, or every partition is
 * CLUSTER_AUTHORIZATION_FAILED; a partition not led here is
 * NOT_LEADER_OR_FOLLOWER (unknown: UNKNOWN_TOPIC_OR_PARTITION); a producer
 * epoch below the producer's is INVALID_PRODUCER_EPOCH, a coordinator epoch
 * below the last marker's TRANSACTION_COORDINATOR_FENCED (nothing written,
 * kaas_log_append_marker).  The answer comes once the marker is durable.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "broker/broker.h"
#include "broker/topics.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/status_map.h"
#include "kafka/txn_markers_api.h"
#include "kafka/wire_cluster.h"
#include "log/log.h"
#include "util/logger.h"
#include "util/status.h"

/* The error of one marker on one partition (appended when 0). */
static int16_t write_one(struct kaas_req *req, struct kaas_kslice topic, int32_t partition,
			 int64_t pid, int16_t pepoch, int commit, int32_t coord_epoch)
{
	struct kaas_broker *b = req->broker;
	struct kaas_topic *tp = NULL;
	if (kaas_topic_name_valid((const char *)topic.p, topic.len))
		tp = kaas_topics_get(b->topics, (const char *)topic.p, topic.len);
	struct kaas_log *log = NULL;
	int16_t err = kaas_wire_partition_log(b, tp, partition, &log);
	if (err == KAAS_KERR_NONE && (pid < 0 || pepoch < 0))
		err = KAAS_KERR_INVALID_REQUEST;
	if (err == KAAS_KERR_NONE) {
		int64_t off = kaas_log_append_marker_sync(log, pid, pepoch, commit, coord_epoch);
		if (off == KAAS_ETXN_COORD_FENCED)
			err = KAAS_KERR_TRANSACTION_COORDINATOR_FENCED;
		else
			err = kaas_kafka_error(off < 0 ? (int)off : 0, KAAS_KERR_KAFKA_STORAGE_ERROR);
		kaas_info("WriteTxnMarkers: %s marker for producer %" PRId64 " epoch %d (coordinator "
			  "epoch %" PRId32 ") on %.*s/%" PRId32 ": %s%" PRId64, commit ? "commit" : "abort",
			  pid, (int)pepoch, coord_epoch, (int)topic.len, (const char *)topic.p, partition,
			  off >= 0 ? "offset " : "refused, status ", off);
	}
	kaas_topic_put(tp);
	return err;
}

int kaas_api_write_txn_markers(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	(void)v;
	/* Read it all once (a malformed request closes the connection), then
	 * again as it is answered. */
	struct kaas_kr again = *r;
	int32_t nm = kaas_kr_array(r, f, 8 + 2 + 1 + 1 + 4);
	for (int32_t i = 0; i < nm && kaas_kr_ok(r); i++) {
		(void)kaas_kr_i64(r);
		(void)kaas_kr_i16(r);
		(void)kaas_kr_i8(r);
		int32_t nt = kaas_kr_array(r, f, 2 + 1);
		for (int32_t j = 0; j < nt && kaas_kr_ok(r); j++) {
			(void)kaas_kr_str(r, f);
			int32_t np = kaas_kr_array(r, f, 4);
			for (int32_t k = 0; k < np && kaas_kr_ok(r); k++)
				(void)kaas_kr_i32(r);
			kaas_kr_tags(r, f);
			if (np < 0)
				return KAAS_REQ_CLOSE;
		}
		(void)kaas_kr_i32(r);
		kaas_kr_tags(r, f);
		if (nt < 0)
			return KAAS_REQ_CLOSE;
	}
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || nm < 0)
		return KAAS_REQ_CLOSE;
	int allowed = kaas_req_allowed_cluster(req, KAAS_OP_CLUSTER_ACTION);
	struct kaas_kr *a = &again;
	nm = kaas_kr_array(a, f, 8 + 2 + 1 + 1 + 4);
	kaas_kw_array(w, f, nm);
	for (int32_t i = 0; i < nm; i++) {
		int64_t pid = kaas_kr_i64(a);
		int16_t pepoch = kaas_kr_i16(a);
		int commit = kaas_kr_i8(a) != 0;
		/* The coordinator epoch follows the topics: read them first. */
		struct kaas_kr topics = *a;
		int32_t nt = kaas_kr_array(a, f, 2 + 1);
		for (int32_t j = 0; j < nt; j++) {
			(void)kaas_kr_str(a, f);
			int32_t np = kaas_kr_array(a, f, 4);
			for (int32_t k = 0; k < np; k++)
				(void)kaas_kr_i32(a);
			kaas_kr_tags(a, f);
		}
		int32_t coord_epoch = kaas_kr_i32(a);
		kaas_kr_tags(a, f);
		kaas_kw_i64(w, pid);
		nt = kaas_kr_array(&topics, f, 2 + 1);
		kaas_kw_array(w, f, nt);
		for (int32_t j = 0; j < nt; j++) {
			struct kaas_kslice name = kaas_kr_str(&topics, f);
			kaas_kw_strn(w, f, name.p, name.len);
			int32_t np = kaas_kr_array(&topics, f, 4);
			kaas_kw_array(w, f, np);
			for (int32_t k = 0; k < np; k++) {
				int32_t partition = kaas_kr_i32(&topics);
				kaas_kw_i32(w, partition);
				kaas_kw_i16(w, allowed ? write_one(req, name, partition, pid, pepoch,
								   commit, coord_epoch)
						       : KAAS_KERR_CLUSTER_AUTHORIZATION_FAILED);
				kaas_kw_tags(w, f);
			}
			kaas_kr_tags(&topics, f);
			kaas_kw_tags(w, f);
		}
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}
