/*
 * http_status_snap.h — the status page's snapshot (http_status.h): plain
 * copies of the broker's state, made on the loop (http_status.c) and read,
 * never changed, by the endpoint thread that formats them
 * (http_status_render.c).  Every string lives in the snapshot's arena and
 * is freed with it.
 */
#ifndef KAAS_SERVER_HTTP_STATUS_SNAP_H
#define KAAS_SERVER_HTTP_STATUS_SNAP_H

#include <stddef.h>
#include <stdint.h>

#include "broker/agent.h"

/* At most this many partitions are copied (the page says it was cut). */
#define KAAS_STATUS_MAX_PARTS 2000
#define KAAS_STATUS_MAX_BROKERS 256

enum st_part_state { ST_LED, ST_NOT_LED, ST_RECOVERING, ST_OFFLINE };

struct st_part {
	int32_t index;
	int32_t leader;               /* -1: none known */
	uint32_t epoch;               /* the assignment's leader epoch */
	enum st_part_state state;     /* as this broker sees it */
	int64_t start, hw, lso, size; /* led here only, else -1 */
	int open_txns;                /* producers with an open transaction here */
};

struct st_topic {
	const char *name;
	int32_t npart;                /* the topic's count */
	int32_t ncopied;              /* parts held (fewer when cut) */
	struct st_part *parts;
};

struct st_txn {                   /* an open transaction on a partition led here */
	const char *topic;
	int32_t partition;
	int64_t producer_id;
	int16_t epoch;
	int64_t first_offset;
};

struct st_member {
	const char *id, *instance_id, *client_id, *host;
	const char *assignment;       /* "topic: 0,1; other: 2", "" none */
};

struct st_commit {
	const char *topic;
	int32_t partition;
	int64_t offset;
	int64_t lag;                  /* -1: the partition is not led here */
};

struct st_group {
	const char *id, *state, *protocol_type, *protocol;
	int nmembers;
	struct st_member *members;
	int ncommits;
	struct st_commit *commits;
};

struct st_broker {
	int32_t id;
	const char *host;
	int32_t port;
	int alive, stopped;
	uint64_t incarnation;
};

struct st_arena;

struct kaas_status_snap {
	int refs;                     /* under the handover mutex */
	uint64_t taken_mono_ms;
	int64_t taken_unix_ms;
	int32_t self, controller;
	int ready, fenced;
	const char *cluster_id;
	int nbrokers;
	struct st_broker *brokers;
	int ntopics;
	struct st_topic *topics;
	int cut;                      /* partitions were left out */
	int ngroups;
	struct st_group *groups;
	int ntxns;
	struct st_txn *txns;
	int nevents;
	struct kaas_agent_event events[KAAS_AGENT_EVENTS];
	struct st_arena *arena;
	int oom;                      /* something could not be copied */
};

/* Format s as HTML (json 0) or JSON (http_status_render.c): a malloc'd,
 * NUL-terminated body and *len, or NULL when out of memory. */
char *kaas_status_format(const struct kaas_status_snap *s, int json, size_t *len);

#endif
