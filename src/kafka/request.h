/*
 * request.h — one Kafka request in flight, between the server
 * (src/server) and the API handlers (src/kafka/api_*.c), and the seam
 * between them: what a handler may ask of the server.
 *
 * The server reads a frame, parses its header into `hdr`, points `r` at the
 * body and calls the API's handler.  A handler writes the response BODY
 * into `w` (the server adds the size and the response header) and finishes
 * the request with kaas_req_finish — at once, or later on the loop thread
 * (Produce waiting for an fsync, Fetch waiting for data).  Responses leave
 * each connection in request order whatever order requests finish in.
 *
 * The seam (end of this file) is implemented by src/server; a program that
 * drives handlers without a server (the fuzzer, a unit test) defines its
 * own stand-ins for those few functions.  Nothing else of the server is
 * visible here.
 */
#ifndef KAAS_KAFKA_REQUEST_H
#define KAAS_KAFKA_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "kafka/codec.h"
#include "kafka/header.h"
#include "log/log.h"
#include "util/fifo.h"

struct kaas_broker;
struct kaas_conn;

/* How a handler finishes a request. */
enum kaas_req_status {
	KAAS_REQ_RESPOND = 0,   /* send the response in w */
	KAAS_REQ_NO_RESPONSE = 1, /* send nothing (Produce acks=0) */
	KAAS_REQ_CLOSE = -1,    /* malformed: close the connection */
	KAAS_REQ_RESPOND_CLOSE = 2, /* send the response in w, then close the
	                               connection (a failed SASL exchange) */
};

/* Zero-copy pieces of a response: the bytes of `slice` go on the wire
 * right after w.buf[0..at) (and before the next piece's bytes). */
struct kaas_zc_part {
	size_t at;
	struct kaas_log_slice *slice;
};

struct kaas_req {
	struct kaas_req *next;    /* the connection's queue, in arrival order */
	struct kaas_conn *conn;
	struct kaas_broker *broker;
	struct kaas_req_header hdr;
	uint8_t *frame;           /* the whole request (owned) */
	size_t frame_len;
	struct kaas_kr r;         /* the body */
	struct kaas_kw w;         /* the response body */
	int done;                 /* finished: status valid */
	int status;               /* enum kaas_req_status */
	void *ctx;                /* handler state */
	void (*ctx_free)(void *ctx);
	struct kaas_zc_part *zc;  /* zero-copy pieces (Fetch), or NULL */
	int nzc;
	size_t zc_bytes;          /* bytes of all pieces */
	uint64_t start_ms;
	uint64_t start_ns;        /* metrics: dispatch time (0 while metrics are off) */
	int raw;                  /* a raw SASL token after SaslHandshake v0: no
	                             request header; answered [int32 size][bytes],
	                             without a response header (api_sasl.c) */
	int16_t error_code;       /* metrics: the first non-zero partition error of a
	                             Produce or Fetch response (kafka/req_metrics.h) */
	uint32_t throttle_ms;     /* the throttle time its response carries
	                             (kafka/throttle.h): the server stops reading
	                             the connection this long once it is sent */
};

/* A handler on the loop thread: must call kaas_req_finish now or later. */
typedef void kaas_loop_fn(struct kaas_req *req);
typedef kaas_loop_fn *kaas_loop_handler;
/* A handler run on the work queue (may block on the volume): returns the
 * status; the server finishes the request on the loop afterwards. */
typedef int kaas_pool_fn(struct kaas_req *req);
typedef kaas_pool_fn *kaas_pool_handler;

/* Handlers (src/kafka/api_*.c), by where they run.  Loop: Produce and Fetch
 * (their appends and reads go to the partitions' produce lanes and the work queue),
 * and the group APIs (api_group_*.c over the coordinator in
 * src/broker/groups/), whose state is the loop's. */
kaas_loop_fn kaas_api_produce, kaas_api_fetch, kaas_api_join_group, kaas_api_sync_group,
	kaas_api_heartbeat, kaas_api_leave_group, kaas_api_offset_commit, kaas_api_offset_fetch,
	kaas_api_describe_groups, kaas_api_list_groups, kaas_api_delete_groups,
	kaas_api_offset_delete;
/* Transactions (txn-coord): TxnOffsetCommit goes through the group
 * coordinator on the loop; the others wait on the coordinator's volume. */
kaas_loop_fn kaas_api_txn_offset_commit;
kaas_pool_fn kaas_api_add_partitions_to_txn, kaas_api_add_offsets_to_txn, kaas_api_end_txn,
	kaas_api_describe_transactions, kaas_api_list_transactions;
/* Work queue: everything that may wait on the volume (Metadata may create a
 * topic, InitProducerId may claim a block of ids), and ApiVersions
 * (memory only). */
kaas_pool_fn kaas_api_versions, kaas_api_metadata, kaas_api_list_offsets,
	kaas_api_find_coordinator, kaas_api_create_topics, kaas_api_delete_topics,
	kaas_api_create_partitions, kaas_api_describe_configs, kaas_api_alter_configs,
	kaas_api_incremental_alter_configs, kaas_api_init_producer_id,
	kaas_api_sasl_handshake, kaas_api_sasl_authenticate,
	kaas_api_describe_user_scram_credentials, kaas_api_alter_user_scram_credentials;
/* issue 15: admin APIs (work queue) */
kaas_pool_fn kaas_api_describe_cluster, kaas_api_describe_log_dirs, kaas_api_delete_records,
	kaas_api_offset_for_leader_epoch, kaas_api_describe_producers,
	kaas_api_describe_topic_partitions;
/* The ACL APIs (api_acls.c, issue 17). */
kaas_pool_fn kaas_api_create_acls, kaas_api_describe_acls, kaas_api_delete_acls;
/* Client quotas (api_client_quotas.c, issue 35). */
kaas_pool_fn kaas_api_describe_client_quotas, kaas_api_alter_client_quotas;

/* What every handler starts from, keyed off the request's version: its
 * body reader r, response writer w, version v and f, whether v is a
 * flexible version — pass f as the `flex` of every codec call
 * (kafka/codec.h) and the one handler serves classic and flexible versions
 * alike; fields that exist from some version on are `if (v >= N)`.
 * Declares those four locals (unused ones are fine). */
#define KAAS_REQ_IO(req)                                                                    \
	struct kaas_kr *const r = &(req)->r;                                                \
	struct kaas_kw *const w = &(req)->w;                                                \
	const int16_t v = (req)->hdr.api_version;                                           \
	const int f = (req)->hdr.flex;                                                      \
	(void)r, (void)w, (void)v, (void)f

/* ------------------------------------------------------------ the seam
 * Implemented by the server (src/server); stubbed by programs without one. */

/* Finish a request (loop thread only).  Its response is sent once every
 * earlier request of the connection has been sent. */
void kaas_req_finish(struct kaas_req *req, int status);

/* The peer's "ip:port" of a request's connection ("" if none). */
const char *kaas_conn_peer(const struct kaas_conn *c);

/* Work on the broker's pool: kaas_pool_queue, declared in broker/broker.h
 * (the services queue work too); the server implements it. */

/* A completion handed from another thread (the log I/O pool, a
 * produce lane) to the loop. */
struct kaas_completion {
	struct kaas_fifo_link link;            /* in the loop's queue */
	void (*fn)(struct kaas_completion *c); /* runs on the loop thread */
};

/* Hand a completion to the loop (any thread): c->fn runs there soon. */
void kaas_broker_complete(struct kaas_broker *b, struct kaas_completion *c);

/* A parked fetch (long poll): woken on the loop when any partition log's
 * high watermark moved, and once more when the server starts stopping. */
struct kaas_fetch_waiter {
	struct kaas_fetch_waiter *prev, *next;
	void (*wake)(struct kaas_fetch_waiter *w); /* loop thread; the waiter is unparked */
};

/* Park / unpark a fetch waiter (loop thread).  Unparking one that is not
 * parked is a no-op. */
void kaas_broker_park(struct kaas_broker *b, struct kaas_fetch_waiter *w);
void kaas_broker_unpark(struct kaas_fetch_waiter *w);

/* Unsupported versions (kafka/api_table.c): ApiVersions answers
 * UNSUPPORTED_VERSION in its v0 format (KIP-511); Produce 0-2 and Fetch 0-3
 * are answered UNSUPPORTED_VERSION on every partition by their handlers;
 * for any other version outside the table the server closes the
 * connection, as Apache Kafka does, since no response of an unknown
 * version can be encoded. */

/* Handler state for req: size zeroed bytes in req->ctx, freed by ctx_free
 * with the request.  NULL when out of memory: the request is finished then
 * (its connection closed). */
static inline void *kaas_req_ctx_new(struct kaas_req *req, size_t size,
				     void (*ctx_free)(void *ctx))
{
	void *ctx = calloc(1, size);
	if (!ctx) {
		kaas_req_finish(req, KAAS_REQ_CLOSE);
		return NULL;
	}
	req->ctx = ctx;
	req->ctx_free = ctx_free;
	return ctx;
}

#endif
