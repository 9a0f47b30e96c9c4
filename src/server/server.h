/*
 * server.h — kaasd's server: the event loop, the listener and the
 * connections around one broker's services (broker/broker.h).
 *
 * The server implements the request seam of kafka/request.h
 * (kaas_req_finish, kaas_pool_queue, kaas_broker_complete, the parked
 * fetches) for the API handlers of src/kafka.
 */
#ifndef KAAS_SERVER_SERVER_H
#define KAAS_SERVER_SERVER_H

#include "broker/broker.h"

/* Start the broker's services (cluster agent, topics, groups, producer
 * ids, produce lanes), listen on cfg.listen_host:listen_port (port 0: an
 * ephemeral one, then advertised) and serve on b->loop until SIGTERM or
 * SIGINT; then finish in-flight requests, close every connection and stop
 * the services.  b->loop must be set; b->topics stays open (the caller
 * closes it).  Returns 0 after a clean stop, -EADDRINUSE or -EINVAL when
 * the listener could not start, or the -errno/status of a service that
 * could not start.  One server per process. */
int kaas_server_run(struct kaas_broker *b);

/* Remember SIGINT and SIGTERM from now on, before the server's own
 * handlers exist (call first thing in main, before start-up's volume work):
 * kaas_server_run then stops cleanly as soon as start-up is done, instead
 * of the signal's default killing the broker half started.  A second
 * signal before then takes the default action (start-up may be stuck on a
 * volume that does not answer). */
void kaas_early_signals_catch(void);

/* The signal kaas_early_signals_catch saw (and forget it), or 0. */
int kaas_early_signal_taken(void);

#endif
