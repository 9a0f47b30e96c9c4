/*
 * http.h — kaasd's HTTP endpoint (libmicrohttpd, its own thread):
 *   GET /metrics  the metrics registry (util/metrics.h) in the Prometheus
 *                 text format, with the broker's scrape-time gauges
 *   GET /healthz  200 "ok" while the process serves
 *   GET /readyz   200 "ready" when kaas_agent_ready (joined, a round
 *                 reconciled, partitions opened, not fenced), else 503
 *   GET /, /status.json  the status page (server/http_status.h)
 * The endpoint thread never takes a broker lock: it reads the agent's
 * atomics and text the loop published (server/http_metrics.c).
 */
#ifndef KAAS_SERVER_HTTP_H
#define KAAS_SERVER_HTTP_H

struct kaas_agent;
struct kaas_http;

/* Listen on host:port (port 0: an ephemeral port, logged).  0 and *out,
 * or -errno (the address cannot be bound: logged). */
int kaas_http_start(const char *host, int port, struct kaas_http **out);

/* The agent readiness and round age come from (NULL: none yet, or no
 * longer: not ready).  Any thread; the agent must stay alive until it is
 * replaced (this waits for a request using the old one to finish). */
void kaas_http_set_agent(struct kaas_http *h, struct kaas_agent *agent);

/* Stop the thread and free (NULL is a no-op). */
void kaas_http_stop(struct kaas_http *h);

#endif
