/*
 * api_init_producer_id.c — InitProducerId 0–4 (2+ flexible) for idempotent
 * producers: a fresh producer id (never reissued, cluster/producer_ids.h)
 * at epoch 0 — also when a v3+ producer asks to bump the epoch of its id
 * (KIP-360), which a client takes as its new id and epoch.
 * Transactional ids are refused (no transactions).  Runs on the work queue
 * (a new id block is claimed on the cluster volume).
 */
#include "broker/broker.h"
#include "util/logger.h"
#include "cluster/producer_ids.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "util/status.h"
#include "broker/txn/txn.h"
#include "kafka/txn_wire.h"

#include <stdlib.h>
#include <string.h>

int kaas_api_init_producer_id(struct kaas_req *req)
{
	struct kaas_broker *b = req->broker;
	KAAS_REQ_IO(req);
	struct kaas_kslice txn = kaas_kr_nstr(r, f);
	int32_t timeout_ms = kaas_kr_i32(r);
	int64_t req_pid = -1;
	int16_t req_epoch = -1;
	if (req->hdr.api_version >= 3) {
		req_pid = kaas_kr_i64(r); /* idempotent: a new one is handed out */
		req_epoch = kaas_kr_i16(r);
	}
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	int64_t pid = -1;
	int16_t err = 0, epoch = 0;
	if (txn.len >= 0) {
		char *id = kaas_txn_id_dup(txn);
		err = KAAS_KERR_INVALID_REQUEST;
		if (id)
			err = kaas_txn_kerr(kaas_txns_init_producer(b->txns, id, timeout_ms, req_pid,
								    req_epoch, &pid, &epoch),
					    v, 4);
		free(id);
	} else {
		int rc = kaas_pid_next(b->pids, &pid);
		if (rc < 0) {
			kaas_warn("cannot hand out a producer id: %s (%s)", kaas_strerror(rc),
				  kaas_sub_errdetail());
			err = KAAS_KERR_COORDINATOR_NOT_AVAILABLE;
			pid = -1;
		}
	}
	kaas_kw_i32(w, 0);
	kaas_kw_i16(w, err);
	kaas_kw_i64(w, err ? -1 : pid);
	kaas_kw_i16(w, err ? -1 : epoch);
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}
