/*
 * config.h — kaasd settings: defaults, then a config file, then the
 * environment, then the command line (later wins).
 *
 * Config file: lines "key = value" ('#' comments), keys as the long
 * options: data, cluster-dir, listen, advertise, broker-id, log-level,
 * auto-create-topics (true/false), num-partitions, message-max-bytes,
 * max-request-bytes, zero-copy-min-bytes, heartbeat-ms,
 * liveness-timeout-ms, coordinator-slots, group-initial-rebalance-delay-ms
 * (also spelt as Kafka's group.initial.rebalance.delay.ms), log-io-threads,
 * max-open-files (kaas_log_io_configure).  Environment:
 * KAAS_CLUSTER_DIR.
 */
#ifndef KAAS_BROKER_CONFIG_H
#define KAAS_BROKER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct kaas_config {
	char *data_url;         /* default ./kaas-data */
	char *cluster_url;      /* default: <data>/__cluster */
	char listen_host[64];   /* default 127.0.0.1 */
	int listen_port;        /* default 9092 */
	char advertise_host[256]; /* default: the listen host, or 127.0.0.1 for a wildcard */
	int advertise_port;     /* default: the listen port */
	int32_t broker_id;      /* default 0 */
	int log_level;          /* enum kaas_logger_level */
	int auto_create;        /* default 1 */
	int32_t num_partitions; /* default partitions of auto-created topics: 1 */
	size_t message_max_bytes;  /* largest accepted batch: 1 MiB + 12 */
	size_t max_request_bytes;  /* largest accepted frame: 100 MiB */
	size_t zero_copy_min_bytes; /* fetch responses with at least this many
	                              record bytes go from the segment files to
	                              the socket by sendfile (default 64 KiB;
	                              0: never) */
	uint32_t heartbeat_ms;  /* cluster: heartbeat interval (default 250) */
	uint32_t liveness_ms;   /* cluster: a broker whose heartbeat counter has
	                           not moved for this long is dead (default 3000) */
	int32_t coordinator_slots; /* group-coordinator slots (default 16) */
	int32_t group_initial_rebalance_delay_ms; /* the first rebalance of an
	                              Empty group waits this long for more
	                              members (default 3000, as Kafka) */
	uint32_t log_io_threads;  /* log I/O pool size (0: 2 x cores, >= 2) */
	uint32_t max_open_files;  /* cached segment handles (0: 1000) */
};

/* Fill `c` from defaults, env, the --config file and argv.  Returns 0,
 * 1 when --help was printed (exit 0), or -EINVAL with a message on stderr
 * naming the bad option. */
int kaas_config_load(struct kaas_config *c, int argc, char **argv);
void kaas_config_free(struct kaas_config *c);

/* Parse "HOST:PORT" (HOST may be empty => keep host): 0 or -EINVAL. */
int kaas_parse_hostport(const char *s, char *host, size_t hostsz, int *port);

#endif
