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
	int16_t error_code;       /* metrics: the first non-zero partition error of a
	                             Produce or Fetch response (kafka/req_metrics.h) */
};

/* A handler on the loop thread: must call kaas_req_finish now or later. */
typedef void (*kaas_loop_handler)(struct kaas_req *req);
/* A handler run on the work queue (may block on the volume): returns the
 * status; the server finishes the request on the loop afterwards. */
typedef int (*kaas_pool_handler)(struct kaas_req *req);

/* Handlers (src/kafka/api_*.c). */
int kaas_api_versions(struct kaas_req *req);       /* memory only */
int kaas_api_metadata(struct kaas_req *req);       /* pool: may create topics */
void kaas_api_produce(struct kaas_req *req);       /* loop */
void kaas_api_fetch(struct kaas_req *req);         /* loop (+ work queue reads) */
int kaas_api_list_offsets(struct kaas_req *req);   /* pool */
int kaas_api_find_coordinator(struct kaas_req *req);
int kaas_api_create_topics(struct kaas_req *req);  /* pool */
int kaas_api_delete_topics(struct kaas_req *req);  /* pool */
int kaas_api_create_partitions(struct kaas_req *req); /* pool */
int kaas_api_describe_configs(struct kaas_req *req); /* pool (api_configs.c) */
int kaas_api_alter_configs(struct kaas_req *req);    /* pool: writes topic documents */
int kaas_api_incremental_alter_configs(struct kaas_req *req); /* pool */
int kaas_api_init_producer_id(struct kaas_req *req); /* pool: may claim a block */
/* Groups (loop; src/kafka/api_group_*.c over the coordinator in src/broker/groups/). */
void kaas_api_join_group(struct kaas_req *req);
void kaas_api_sync_group(struct kaas_req *req);
void kaas_api_heartbeat(struct kaas_req *req);
void kaas_api_leave_group(struct kaas_req *req);
void kaas_api_offset_commit(struct kaas_req *req);
void kaas_api_offset_fetch(struct kaas_req *req);
void kaas_api_describe_groups(struct kaas_req *req);
void kaas_api_list_groups(struct kaas_req *req);
void kaas_api_delete_groups(struct kaas_req *req);  /* api_group_delete.c */
void kaas_api_offset_delete(struct kaas_req *req);

/* ------------------------------------------------------------ the seam
 * Implemented by the server (src/server); stubbed by programs without one. */

/* Finish a request (loop thread only).  Its response is sent once every
 * earlier request of the connection has been sent. */
void kaas_req_finish(struct kaas_req *req, int status);

/* The peer's "ip:port" of a request's connection ("" if none). */
const char *kaas_conn_peer(const struct kaas_conn *c);

/* Work on the broker's pool: kaas_pool_queue, declared in broker/broker.h
 * (the services queue work too); the server implements it. */

/* A completion handed from another thread (the log's sync thread, the
 * produce worker) to the loop. */
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

/* Unsupported versions: ApiVersions answers UNSUPPORTED_VERSION in its v0
 * format (KIP-511); for every other API the server closes the connection,
 * as Apache Kafka does, since no response of an unknown version can be
 * encoded. */

#endif
