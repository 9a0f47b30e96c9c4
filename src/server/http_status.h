/*
 * http_status.h — the status page of the HTTP endpoint (issue 39):
 *   GET /             an HTML page (inline CSS, no script, a meta refresh
 *                     every 5 s): brokers and liveness, controller, topics
 *                     with each partition's leader, epoch, offsets, size
 *                     and open transactions, groups with members,
 *                     assignments, committed offsets and lag, recent
 *                     membership and controller changes
 *   GET /status.json  the same data as JSON
 *
 * Cost: nothing is collected while nobody asks.  A request asks the loop
 * (a uv_async) for a snapshot; the loop copies the numbers and names into
 * plain memory (the same brief registry and log reads as the metrics
 * snapshot, at most once a second however many requests come) and hands
 * it over under a leaf mutex; the endpoint thread formats the page from
 * that copy, holding no broker lock.  A snapshot younger than a second is
 * served again as it is.
 *
 * Threads: attach and detach on the loop thread; render on any other
 * thread (the endpoint's).  One attached loop per process.
 */
#ifndef KAAS_SERVER_HTTP_STATUS_H
#define KAAS_SERVER_HTTP_STATUS_H

#include <stddef.h>

#include <uv.h>

struct kaas_broker;

/* Start serving snapshots of b from loop (loop thread; b outlives the
 * attachment).  0 or -errno (the async handle). */
int kaas_http_status_attach(uv_loop_t *loop, struct kaas_broker *b);

/* Stop (loop thread): no snapshot is taken afterwards, a waiting render
 * gives up at once and later ones answer 503. */
void kaas_http_status_detach(void);

/* The page (json 0: HTML, 1: JSON) as a malloc'd body of *len bytes and
 * *code, the HTTP status (200, or 503 with a short text body when no
 * snapshot could be had within 1 s).  NULL only when out of memory.
 * Endpoint thread: may wait up to 1 s for the loop's snapshot, 250 ms
 * when an older one exists (which is served when the loop is late). */
char *kaas_http_status_render(int json, size_t *len, unsigned *code);

#endif
