/*
 * config.h — kaasd settings: defaults, then a config file, then the
 * environment, then the command line (later wins).
 *
 * Config file: lines "key = value" ('#' comments), keys as the long
 * options: data, cluster-dir, listen, advertise, broker-id, log-level,
 * auto-create-topics (true/false), num-partitions, message-max-bytes,
 * max-request-bytes, zero-copy-min-bytes, heartbeat-ms,
 * liveness-timeout-ms, coordinator-slots, group-initial-rebalance-delay-ms
 * (also spelt as Kafka's group.initial.rebalance.delay.ms), http-listen
 * (HOST:PORT of /metrics, /healthz, /readyz; off when unset),
 * metrics-per-partition (true/false), log-io-threads, max-open-files
 * (kaas_log_io_configure), produce-threads (broker/lanes.h), fetch-session-slots (also spelt as Kafka's
 * max.incremental.fetch.session.cache.slots), fetch-readahead-bytes; Kafka's
 * names num.partitions, auto.create.topics.enable, socket.request.max.bytes,
 * broker.id/node.id for the options they match; and the broker defaults of
 * topic settings by Kafka's broker names (log.retention.ms/minutes/hours,
 * log.retention.bytes, log.segment.bytes, log.roll.ms/hours,
 * message.max.bytes, ...: broker/topic_config.h).  Environment:
 * KAAS_CLUSTER_DIR.  Listeners and TLS take Kafka's keys (listeners,
 * advertised.listeners, listener.security.protocol.map, ssl.*): see
 * "Listeners and TLS" below and config_listeners.c.
 */
#ifndef KAAS_BROKER_CONFIG_H
#define KAAS_BROKER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/membership.h"
#include "util/kvlist.h"

/* ------------------------------------------- listeners and TLS (issue 17)
 * `listeners = NAME://host:port,...` (names are upper-cased; an empty host
 * or 0.0.0.0 binds every interface), `advertised.listeners` (same form,
 * names a subset; a listener without one advertises its bind address, a
 * wildcard as 127.0.0.1), `listener.security.protocol.map = NAME:PROTO,...`
 * (default: the four protocol names map to themselves), ssl.keystore.type
 * (PEM only), ssl.keystore.location (one PEM file: private key and
 * certificate chain, leaf first), ssl.truststore.location (PEM CAs that
 * sign client certificates), ssl.truststore.type (PEM only),
 * ssl.client.auth = none|requested|required, and kaas's own
 * ssl.handshake.timeout.ms (default 10000).  Without `listeners`, --listen
 * and --advertise make one PLAINTEXT listener called PLAINTEXT; both at
 * once are refused.
 *
 * SASL listeners (SASL_PLAINTEXT, SASL_SSL; kafka/sasl.h):
 * sasl.enabled.mechanisms = PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 (a subset;
 * default SCRAM-SHA-256,SCRAM-SHA-512) and connections.max.reauth.ms
 * (KIP-368: a SASL session ends that long after its authentication unless
 * the client re-authenticates; 0, the default, is no limit). */
#define KAAS_SASL_PLAIN 1u
#define KAAS_SASL_SCRAM_SHA_256 2u
#define KAAS_SASL_SCRAM_SHA_512 4u
enum kaas_sec_protocol {
	KAAS_SEC_PLAINTEXT,
	KAAS_SEC_SSL,
	KAAS_SEC_SASL_PLAINTEXT,
	KAAS_SEC_SASL_SSL,
};

enum kaas_ssl_client_auth {
	KAAS_SSL_AUTH_NONE,
	KAAS_SSL_AUTH_REQUESTED,  /* a certificate, if sent, must verify */
	KAAS_SSL_AUTH_REQUIRED,   /* no certificate: the handshake fails */
};

struct kaas_listener_cfg {
	char name[KAAS_LISTENER_NAME_MAX];
	char host[64];            /* bind address */
	int port;                 /* 0: ephemeral (the server fills it in) */
	char adv_host[256];
	int adv_port;             /* 0: the bound port */
	enum kaas_sec_protocol protocol;
};

#define KAAS_MAX_IP_OVERRIDES 64
struct kaas_security_cfg {
	char *listeners, *advertised, *protocol_map; /* the raw values, or NULL */
	int listen_set;           /* --listen or --advertise was given */
	int n;                    /* listeners resolved, >= 1 */
	struct kaas_listener_cfg l[KAAS_MAX_LISTENERS];
	char *keystore_location;
	char *truststore_location;
	enum kaas_ssl_client_auth client_auth;
	uint32_t handshake_timeout_ms;
	unsigned sasl_mechanisms;  /* KAAS_SASL_* bits (0 until resolved: the default) */
	uint32_t reauth_ms;        /* connections.max.reauth.ms (0: none) */
	/* TLS (server/tls.c): the raw lists, NULL for the defaults. */
	char *cipher_suites;       /* ssl.cipher.suites (IANA or OpenSSL names;
	                              default: forward-secret AEAD suites only) */
	int tls_min, tls_max;      /* ssl.enabled.protocols (default TLSv1.2,TLSv1.3):
	                              12 or 13 */
	/* Connection limits (server/limits.c; docs/BROKER.md, Security). */
	uint32_t max_connections;  /* max.connections (default 2147483647) */
	uint32_t max_connections_per_ip; /* max.connections.per.ip (same default) */
	int n_ip_overrides;        /* max.connections.per.ip.overrides: "addr:n,..." */
	struct kaas_ip_limit {
		char addr[64];
		uint32_t n;
	} ip_overrides[KAAS_MAX_IP_OVERRIDES];
	int64_t idle_ms;           /* connections.max.idle.ms (600000; < 0: never) */
	uint32_t sasl_max_receive; /* sasl.server.max.receive.size (524288): a frame
	                              larger than this before SASL authentication
	                              closes the connection */
	uint32_t sasl_timeout_ms;  /* sasl.authentication.timeout.ms (10000): a SASL
	                              listener's connection not authenticated this long
	                              after accept is closed */
	uint32_t failed_auth_delay_ms; /* connection.failed.authentication.delay.ms (100) */
	unsigned limits_set;       /* which of the above were given (KAAS_LIM_*) */
};
#define KAAS_LIM_MAX_CONN 1u
#define KAAS_LIM_MAX_PER_IP 2u
#define KAAS_LIM_IDLE 4u
#define KAAS_LIM_SASL_RECV 8u
#define KAAS_LIM_SASL_TIMEOUT 16u
#define KAAS_LIM_AUTH_DELAY 32u
#define KAAS_LIM_PROTOCOLS 64u

/* Is `key` one of the listener/TLS keys?  Apply it: 0, -EINVAL (message
 * printed) or -ENOMEM. */
int kaas_config_security_key(const char *key);
struct kaas_config;
int kaas_config_security_apply(struct kaas_config *c, const char *key, const char *v);
/* After every source is read: build sec.l[] (and listen_host/port,
 * advertise_host/port = the first listener).  0 or -EINVAL (printed). */
int kaas_config_security_resolve(struct kaas_config *c);
void kaas_config_security_free(struct kaas_config *c);
/* Our advertised address(es) as a broker document has them. */
void kaas_config_advertised(const struct kaas_config *c, struct kaas_broker_info *me);
const char *kaas_sec_protocol_name(enum kaas_sec_protocol p);

/* The authorizer's settings (issue 17; broker/authorizer.h parses them). */
struct kaas_authz_cfg {
	int disabled;             /* authorizer.class.name set empty */
	int allow_if_no_acl_set;  /* allow.everyone.if.no.acl.found given */
	int allow_if_no_acl;
	char *super_users;        /* super.users: "User:a;User:b", or NULL */
};

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
	size_t fetch_readahead_bytes; /* a fetch that reads a segment range hints
	                              (kaas_log_slice_readahead) this many bytes
	                              after it (default 4 MiB; 0: no hint) */
	int32_t fetch_session_slots; /* KIP-227 fetch sessions kept at most
	                              (default 1000; 0: none; kafka/fetch_session.h) */
	size_t zero_copy_min_bytes; /* fetch responses with at least this many
	                              record bytes go from the segment files to
	                              the socket by sendfile (default 64 KiB;
	                              0: never) */
	uint32_t heartbeat_ms;  /* cluster: heartbeat interval (default 250) */
	uint32_t liveness_ms;   /* cluster: a broker whose heartbeat counter has
	                           not moved for this long is dead (default 3000) */
	int32_t coordinator_slots; /* group-coordinator slots (default 16) */
	int32_t transaction_max_timeout_ms; /* transaction.max.timeout.ms: the
	                              largest transaction timeout a producer may
	                              ask for (default 900000, as Kafka) */
	int txn_verify;         /* transaction.partition.verification.enable:
	                              a transactional batch that would open a
	                              transaction on a partition is checked
	                              with the coordinator's record first
	                              (KIP-890 part 1; default 1, as Kafka) */
	int32_t group_initial_rebalance_delay_ms; /* the first rebalance of an
	                              Empty group waits this long for more
	                              members (default 3000, as Kafka) */
	int64_t offsets_retention_ms; /* offsets.retention.minutes (Kafka's
	                              name; offsets-retention-ms in ms, for
	                              tests): the committed offsets of a group
	                              without members expire this long after
	                              their commit or the group emptied
	                              (default 7 days) */
	struct kaas_kvlist topic_defaults; /* broker defaults of topic settings
	                              by Kafka's broker names (log.retention.hours
	                              = 24, log.segment.bytes, message.max.bytes
	                              ...; broker/topic_config.h), checked */
	struct kaas_security_cfg sec; /* listeners and TLS (see above) */
	struct kaas_authz_cfg authz;  /* authorizer (broker/authorizer.h) */
	/* The metrics and health endpoint (server/http.c). */
	char http_host[64];     /* http-listen: "" = no endpoint (the default) */
	int http_port;
	int metrics_per_partition; /* per-partition series (default 1) */
	uint32_t log_io_threads;  /* log I/O pool size (0: 2 x cores, >= 2) */
	uint32_t max_open_files;  /* cached segment handles (0: 1000) */
	uint32_t produce_threads; /* produce lanes' pool (0: online CPUs, 2..16) */
	uint32_t quota_window_num; /* quota.window.num (0: 11; broker/quotas.h) */
	uint32_t quota_window_s;   /* quota.window.size.seconds (0: 1) */
};

/* Fill `c` from defaults, env, the --config file and argv.  Returns 0,
 * 1 when --help was printed (exit 0), or -EINVAL with a message on stderr
 * naming the bad option. */
int kaas_config_load(struct kaas_config *c, int argc, char **argv);
void kaas_config_free(struct kaas_config *c);

/* Read a whole local file (at most 1 MiB, NUL-terminated; free()) through
 * a POSIX substrate opened on its directory (kaas code outside backends/
 * never calls the OS file API): 0 or -errno. */
int kaas_read_local_file(const char *path, char **buf);

/* Replace the string *dst by a copy of v: 0, or -ENOMEM (*dst kept). */
int kaas_config_set_str(char **dst, const char *v);

/* Parse "HOST:PORT" (HOST may be empty => keep host): 0 or -EINVAL. */
int kaas_parse_hostport(const char *s, char *host, size_t hostsz, int *port);

#endif
