/* http.c — the /metrics, /healthz and /readyz endpoint (http.h). */
#include "server/http.h"
#include "server/http_status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "broker/agent.h"
#include "util/logger.h"
#include "util/metrics.h"
#include "util/lock_rank.h"

struct kaas_http {
	struct MHD_Daemon *d;
	pthread_mutex_t mu;       /* agent: held only while reading its atomics */
	struct kaas_agent *agent;
};

static int is_ready(struct kaas_http *h, double *round_age_s)
{
	kaas_lock(&h->mu, KAAS_RANK_LEAF);
	int ready = kaas_agent_ready(h->agent);
	int64_t age = h->agent ? kaas_agent_round_age_ms(h->agent) : -1;
	kaas_unlock(&h->mu);
	*round_age_s = age < 0 ? -1 : (double)age / 1000.0;
	return ready;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	enum MHD_Result rc = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result metrics_page(struct kaas_http *h, struct MHD_Connection *conn)
{
	struct kaas_mbuf b = { 0 };
	double age;
	int ready = is_ready(h, &age);
	kaas_metrics_render(&b);
	kaas_metrics_render_slots(&b);
	kaas_mbuf_family(&b, "kaas_ready", "gauge", "1 while /readyz answers 200, else 0.");
	kaas_mbuf_printf(&b, "kaas_ready %d\n", ready);
	if (age >= 0) {
		kaas_mbuf_family(&b, "kaas_cluster_round_age_seconds", "gauge",
				 "Seconds since the lease of the cluster agent's last successful round began.");
		kaas_mbuf_printf(&b, "kaas_cluster_round_age_seconds %.3f\n", age);
	}
	if (b.oom) {
		kaas_mbuf_free(&b);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "out of memory\n", 14,
			     MHD_RESPMEM_PERSISTENT);
	}
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len,
		     MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct kaas_http *h = cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET only\n", 9,
			     MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics") == 0)
		return metrics_page(h, conn);
	if (strcmp(url, "/") == 0 || strcmp(url, "/status.json") == 0) {
		int json = url[1] != 0;
		size_t len = 0;
		unsigned code = 0;
		char *body = kaas_http_status_render(json, &len, &code); /* http_status.h */
		if (!body)
			return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "out of memory\n",
				     14, MHD_RESPMEM_PERSISTENT);
		return reply(conn, code, code != MHD_HTTP_OK ? "text/plain; charset=utf-8" :
			     json ? "application/json" : "text/html; charset=utf-8", body, len,
			     MHD_RESPMEM_MUST_FREE);
	}
	if (strcmp(url, "/healthz") == 0)
		return reply(conn, MHD_HTTP_OK, "text/plain", "ok\n", 3, MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/readyz") == 0) {
		double age;
		if (is_ready(h, &age))
			return reply(conn, MHD_HTTP_OK, "text/plain", "ready\n", 6, MHD_RESPMEM_PERSISTENT);
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "not ready\n", 10,
			     MHD_RESPMEM_PERSISTENT);
	}
	return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", 10, MHD_RESPMEM_PERSISTENT);
}

int kaas_http_start(const char *host, int port, struct kaas_http **out)
{
	*out = NULL;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	/* Its own thread, polling with epoll (MHD_USE_AUTO picks it on Linux),
	 * never select(): a broker with thousands of partitions holds ~1,000
	 * segment handles and its client sockets, and select() refuses every
	 * connection whose descriptor is FD_SETSIZE (1024) or more
	 * (tests/metrics/many_fds.sh). */
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
	}
	struct kaas_http *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->mu, NULL);
	h->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!h->d) {
		pthread_mutex_destroy(&h->mu);
		free(h);
		return -EADDRINUSE;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	kaas_info("http: /, /status.json, /metrics, /healthz, /readyz on %s:%d", host,
		  info ? (int)info->port : port);
	*out = h;
	return 0;
}

void kaas_http_set_agent(struct kaas_http *h, struct kaas_agent *agent)
{
	if (!h)
		return;
	kaas_lock(&h->mu, KAAS_RANK_LEAF);
	h->agent = agent;
	kaas_unlock(&h->mu);
}

void kaas_http_stop(struct kaas_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->mu);
	free(h);
}
