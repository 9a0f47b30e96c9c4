/* config.c — kaasd settings (see config.h). */
#include "broker/config.h"
#include "broker/authorizer.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/config_kafka_keys.h"
#include "broker/quotas.h"
#include "broker/topic_config.h"
#include "util/logger.h"
#include "substrate/substrate.h"

int kaas_parse_hostport(const char *s, char *host, size_t hostsz, int *port)
{
	const char *colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	size_t hl = (size_t)(colon - s);
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || colon[1] == '\0' || p < 0 || p > 65535 || hl >= hostsz)
		return -EINVAL;
	if (hl) {
		memcpy(host, s, hl);
		host[hl] = '\0';
	}
	*port = (int)p;
	return 0;
}

static int parse_long(const char *v, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || end == v || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

int kaas_config_set_str(char **dst, const char *v)
{
	char *d = strdup(v);
	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

/* "true"/"1" or "false"/"0": 0 and *out, else -EINVAL. */
static int parse_bool(const char *v, int *out)
{
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int apply(struct kaas_config *c, const char *key, const char *v, int *adv_set);

/* A setting given by its Kafka broker name: the broker defaults of topic
 * settings (log.retention.hours, log.segment.bytes, ...; broker/
 * topic_config.h), the Kafka names of kaasd's own options, log.dirs (the
 * data directory) and the keys kaas accepts and ignores
 * (broker/config_kafka_keys.h).  1 taken, 0
 * not such a key, -EINVAL (message printed) or -ENOMEM. */
static int apply_kafka_name(struct kaas_config *c, const char *key, const char *v)
{
	static const struct {
		const char *kafka, *kaas;
	} alias[] = {
		{ "num.partitions", "num-partitions" },
		{ "auto.create.topics.enable", "auto-create-topics" },
		{ "socket.request.max.bytes", "max-request-bytes" },
		{ "broker.id", "broker-id" },
		{ "node.id", "broker-id" },
		{ "max.incremental.fetch.session.cache.slots", "fetch-session-slots" },
	};
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (strcmp(key, alias[i].kafka) == 0) {
			int adv_set = 0;
			int rc = apply(c, alias[i].kaas, v, &adv_set);
			return rc < 0 ? rc : 1;
		}
	if (kaas_config_is_log_dirs(key)) {
		if (kaas_config_log_dirs_value(key, v) < 0)
			return -EINVAL;
		int adv_set = 0;
		int rc = apply(c, "data", v, &adv_set);
		return rc < 0 ? rc : 1;
	}
	const char *why = kaas_config_ignored_kafka_key(key);
	if (why) {
		fprintf(stderr, "kaasd: ignoring %s = %s: %s\n", key, v, why);
		return 1;
	}
	char msg[KAAS_CONFIG_MSG];
	int rc = kaas_topic_config_broker_key(key, v, msg);
	if (rc == 0)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "kaasd: bad setting %s\n", msg);
		return -EINVAL;
	}
	if (strcmp(key, "message.max.bytes") == 0) {
		long x;
		if (parse_long(v, 64, 1L << 30, &x) < 0) {
			fprintf(stderr, "kaasd: bad value '%s' for %s\n", v, key);
			return -EINVAL;
		}
		c->message_max_bytes = (size_t)x;
	}
	return kaas_kvlist_set(&c->topic_defaults, key, v) < 0 ? -ENOMEM : 1;
}

/* Apply one setting; returns 0 or -EINVAL (message printed). */
static int apply(struct kaas_config *c, const char *key, const char *v, int *adv_set)
{
	long x;
	int rc = 0;
	if (strcmp(key, "data") == 0) {
		rc = kaas_config_set_str(&c->data_url, v);
	} else if (strcmp(key, "cluster-dir") == 0) {
		rc = kaas_config_set_str(&c->cluster_url, v);
	} else if (strcmp(key, "listen") == 0) {
		rc = kaas_parse_hostport(v, c->listen_host, sizeof(c->listen_host), &c->listen_port);
		c->sec.listen_set = 1;
	} else if (strcmp(key, "advertise") == 0) {
		rc = kaas_parse_hostport(v, c->advertise_host, sizeof(c->advertise_host),
					 &c->advertise_port);
		*adv_set = 1;
		c->sec.listen_set = 1;
	} else if (strcmp(key, "broker-id") == 0) {
		rc = parse_long(v, 0, INT32_MAX, &x);
		c->broker_id = (int32_t)x;
	} else if (strcmp(key, "log-level") == 0) {
		enum kaas_logger_level l;
		rc = kaas_logger_parse_level(v, &l);
		c->log_level = l;
	} else if (strcmp(key, "auto-create-topics") == 0) {
		rc = parse_bool(v, &c->auto_create);
	} else if (strcmp(key, "num-partitions") == 0) {
		rc = parse_long(v, 1, 100000, &x);
		c->num_partitions = (int32_t)x;
	} else if (strcmp(key, "message-max-bytes") == 0) {
		rc = parse_long(v, 64, 1L << 30, &x);
		c->message_max_bytes = (size_t)x;
		/* also the default of every topic's max.message.bytes */
		if (rc == 0 && kaas_kvlist_set(&c->topic_defaults, "message.max.bytes", v) < 0)
			rc = -ENOMEM;
	} else if (strcmp(key, "zero-copy-min-bytes") == 0) {
		rc = parse_long(v, 0, 1L << 30, &x);
		c->zero_copy_min_bytes = (size_t)x;
	} else if (strcmp(key, "heartbeat-ms") == 0) {
		rc = parse_long(v, 10, 60000, &x);
		c->heartbeat_ms = (uint32_t)x;
	} else if (strcmp(key, "liveness-timeout-ms") == 0) {
		rc = parse_long(v, 50, 600000, &x);
		c->liveness_ms = (uint32_t)x;
	} else if (strcmp(key, "coordinator-slots") == 0) {
		rc = parse_long(v, 1, 4096, &x);
		c->coordinator_slots = (int32_t)x;
	} else if (strcmp(key, "group-initial-rebalance-delay-ms") == 0 ||
		   strcmp(key, "group.initial.rebalance.delay.ms") == 0) {
		rc = parse_long(v, 0, 600000, &x);
		c->group_initial_rebalance_delay_ms = (int32_t)x;
	} else if (strcmp(key, "transaction-max-timeout-ms") == 0 ||
		   strcmp(key, "transaction.max.timeout.ms") == 0) {
		rc = parse_long(v, 1, INT32_MAX, &x);
		c->transaction_max_timeout_ms = (int32_t)x;
	} else if (strcmp(key, "transaction-partition-verification-enable") == 0 ||
		   strcmp(key, "transaction.partition.verification.enable") == 0) {
		rc = parse_bool(v, &c->txn_verify);
	} else if (strcmp(key, "offsets.retention.minutes") == 0) {
		rc = parse_long(v, 1, 1L << 30, &x);
		c->offsets_retention_ms = (int64_t)x * 60000;
	} else if (strcmp(key, "offsets-retention-ms") == 0) {
		rc = parse_long(v, 1, 1L << 40, &x);
		c->offsets_retention_ms = (int64_t)x;
	} else if (strcmp(key, "max-request-bytes") == 0) {
		rc = parse_long(v, 1024, 1L << 30, &x);
		c->max_request_bytes = (size_t)x;
	} else if (strcmp(key, "http-listen") == 0) {
		rc = kaas_parse_hostport(v, c->http_host, sizeof(c->http_host), &c->http_port);
		if (rc == 0 && !c->http_host[0])
			snprintf(c->http_host, sizeof(c->http_host), "0.0.0.0");
	} else if (strcmp(key, "metrics-per-partition") == 0) {
		rc = parse_bool(v, &c->metrics_per_partition);
	} else if (kaas_config_security_key(key)) {
		return kaas_config_security_apply(c, key, v);
	} else if (kaas_config_authz_key(key)) {
		return kaas_config_authz_apply(c, key, v);
	} else if (kaas_config_quota_key(key)) {
		return kaas_config_quota_apply(c, key, v);
	} else if ((rc = apply_kafka_name(c, key, v)) != 0) {
		return rc < 0 ? rc : 0;
	} else if (strcmp(key, "log-io-threads") == 0) { /* issue 19: the log I/O pool */
		rc = parse_long(v, 2, 1024, &x);
		c->log_io_threads = (uint32_t)x;
	} else if (strcmp(key, "produce-threads") == 0) { /* issue 19: the produce lanes */
		rc = parse_long(v, 1, 64, &x);
		c->produce_threads = (uint32_t)x;
	} else if (strcmp(key, "max-open-files") == 0) {
		rc = parse_long(v, 16, 1L << 20, &x);
		c->max_open_files = (uint32_t)x;
	} else if (strcmp(key, "fetch-readahead-bytes") == 0) {
		rc = parse_long(v, 0, 1L << 30, &x);
		c->fetch_readahead_bytes = (size_t)x;
	} else if (strcmp(key, "fetch-session-slots") == 0) { /* KIP-227 */
		rc = parse_long(v, 0, 1L << 20, &x);
		c->fetch_session_slots = (int32_t)x;
	} else {
		fprintf(stderr, "kaasd: unknown setting '%s'\n", key);
		return -EINVAL;
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		fprintf(stderr, "kaasd: bad value '%s' for %s\n", v, key);
		return -EINVAL;
	}
	return 0;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int kaas_read_local_file(const char *path, char **buf)
{
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	char *slash = strrchr(copy, '/');
	const char *dir = ".", *name = copy;
	if (slash == copy) {
		dir = "/";
		name = copy + 1;
	} else if (slash) {
		*slash = '\0';
		dir = copy;
		name = slash + 1;
	}
	struct kaas_substrate *sub = NULL;
	size_t len;
	int rc = kaas_substrate_open(dir, &sub);
	if (rc >= 0)
		rc = kaas_sub_read_all(sub, name, 1u << 20, buf, &len);
	kaas_substrate_close(sub);
	free(copy);
	return rc;
}

/* The config file: read once at start-up, before any volume is opened. */
static int load_file(struct kaas_config *c, const char *path, int *adv_set)
{
	char *text = NULL;
	int rc = kaas_read_local_file(path, &text);
	if (rc < 0) {
		fprintf(stderr, "kaasd: cannot read config file %s: %s\n", path, strerror(-rc));
		return -EINVAL;
	}
	int lineno = 0;
	rc = 0;
	char *save = NULL;
	for (char *line = text; rc == 0 && line && *line; line = save) {
		char *nl = strchr(line, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			fprintf(stderr, "kaasd: %s:%d: expected 'key = value'\n", path, lineno);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		rc = apply(c, trim(s), trim(eq + 1), adv_set);
		if (rc < 0)
			fprintf(stderr, "kaasd: in %s line %d\n", path, lineno);
	}
	free(text);
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kaasd --data URL [--cluster-dir URL] [--listen HOST:PORT]\n"
		"             [--advertise HOST:PORT] [--broker-id N] [--log-level L]\n"
		"             [--config FILE] [--auto-create-topics true|false]\n"
		"             [--num-partitions N] [--message-max-bytes N] [--max-request-bytes N]\n"
		"             [--zero-copy-min-bytes N] [--heartbeat-ms N]\n"
		"             [--liveness-timeout-ms N] [--coordinator-slots N]\n"
		"             [--group-initial-rebalance-delay-ms N]\n"
		"             [--http-listen HOST:PORT] [--metrics-per-partition true|false]\n"
		"             [--log-io-threads N] [--max-open-files N] [--produce-threads N]\n"
		"             [--fetch-session-slots N] [--fetch-readahead-bytes N]\n"
		"             [--transaction-partition-verification-enable true|false]\n"
		"defaults: --data ./kaas-data --listen 127.0.0.1:9092 --log-level info;\n"
		"the cluster directory defaults to $KAAS_CLUSTER_DIR, else <data>/__cluster.\n"
		"Listeners and TLS: Kafka's keys in --config FILE (listeners, advertised.listeners,\n"
		"listener.security.protocol.map, ssl.*; docs/BROKER.md).\n");
}

int kaas_config_load(struct kaas_config *c, int argc, char **argv)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->listen_host, "127.0.0.1");
	c->listen_port = 9092;
	c->log_level = KAAS_LOGGER_INFO;
	c->auto_create = 1;
	c->num_partitions = 1;
	c->message_max_bytes = (1u << 20) + 12;
	c->max_request_bytes = 100u << 20;
	c->zero_copy_min_bytes = 64u << 10;
	c->heartbeat_ms = 250;
	c->liveness_ms = 3000;
	c->coordinator_slots = 16;
	c->group_initial_rebalance_delay_ms = 3000;
	c->transaction_max_timeout_ms = 900000;
	c->txn_verify = 1;
	c->offsets_retention_ms = 7LL * 24 * 3600 * 1000;
	c->metrics_per_partition = 1;
	c->fetch_session_slots = 1000;
	c->fetch_readahead_bytes = 4u << 20;
	int adv_set = 0;
	const char *env = getenv("KAAS_CLUSTER_DIR");
	if (env && *env && kaas_config_set_str(&c->cluster_url, env) < 0)
		return -ENOMEM;

	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "cluster-dir", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "advertise", required_argument, NULL, 'a' },
		{ "broker-id", required_argument, NULL, 'b' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "config", required_argument, NULL, 'f' },
		{ "auto-create-topics", required_argument, NULL, 'A' },
		{ "num-partitions", required_argument, NULL, 'n' },
		{ "message-max-bytes", required_argument, NULL, 'm' },
		{ "max-request-bytes", required_argument, NULL, 'r' },
		{ "zero-copy-min-bytes", required_argument, NULL, 'z' },
		{ "heartbeat-ms", required_argument, NULL, 'H' },
		{ "liveness-timeout-ms", required_argument, NULL, 'T' },
		{ "coordinator-slots", required_argument, NULL, 'S' },
		{ "group-initial-rebalance-delay-ms", required_argument, NULL, 'G' },
		{ "http-listen", required_argument, NULL, 'W' },
		{ "metrics-per-partition", required_argument, NULL, 'P' },
		{ "log-io-threads", required_argument, NULL, 'I' },
		{ "max-open-files", required_argument, NULL, 'O' },
		{ "produce-threads", required_argument, NULL, 'Q' },
		{ "fetch-session-slots", required_argument, NULL, 'F' },
		{ "fetch-readahead-bytes", required_argument, NULL, 'R' },
		{ "transaction-partition-verification-enable", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* First pass: the config file, so the command line overrides it. */
	optind = 1;
	opterr = 0;
	int o;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if (o == 'f' && load_file(c, optarg, &adv_set) < 0)
			return -EINVAL;
	optind = 1;
	opterr = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *key = NULL;
		switch (o) {
		case 'd': key = "data"; break;
		case 'c': key = "cluster-dir"; break;
		case 'l': key = "listen"; break;
		case 'a': key = "advertise"; break;
		case 'b': key = "broker-id"; break;
		case 'L': key = "log-level"; break;
		case 'A': key = "auto-create-topics"; break;
		case 'n': key = "num-partitions"; break;
		case 'm': key = "message-max-bytes"; break;
		case 'r': key = "max-request-bytes"; break;
		case 'z': key = "zero-copy-min-bytes"; break;
		case 'H': key = "heartbeat-ms"; break;
		case 'T': key = "liveness-timeout-ms"; break;
		case 'S': key = "coordinator-slots"; break;
		case 'G': key = "group-initial-rebalance-delay-ms"; break;
		case 'W': key = "http-listen"; break;
		case 'P': key = "metrics-per-partition"; break;
		case 'I': key = "log-io-threads"; break;
		case 'O': key = "max-open-files"; break;
		case 'Q': key = "produce-threads"; break;
		case 'F': key = "fetch-session-slots"; break;
		case 'R': key = "fetch-readahead-bytes"; break;
		case 'V': key = "transaction-partition-verification-enable"; break;
		case 'f': continue;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -EINVAL;
		}
		if (apply(c, key, optarg, &adv_set) < 0)
			return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "kaasd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	if (c->heartbeat_ms * 2 > c->liveness_ms) {
		fprintf(stderr, "kaasd: --heartbeat-ms must be at most half of --liveness-timeout-ms\n");
		return -EINVAL;
	}
	if (!c->data_url && kaas_config_set_str(&c->data_url, "./kaas-data") < 0)
		return -ENOMEM;
	if (!adv_set) {
		c->advertise_port = c->listen_port;
		if (strcmp(c->listen_host, "0.0.0.0") == 0 || c->listen_host[0] == '\0' ||
		    strcmp(c->listen_host, "localhost") == 0)
			strcpy(c->advertise_host, "127.0.0.1");
		else
			snprintf(c->advertise_host, sizeof(c->advertise_host), "%s", c->listen_host);
	} else if (c->advertise_host[0] == '\0') {
		snprintf(c->advertise_host, sizeof(c->advertise_host), "%s", c->listen_host);
	}
	return kaas_config_security_resolve(c) < 0 ? -EINVAL : 0;
}

void kaas_config_free(struct kaas_config *c)
{
	free(c->data_url);
	free(c->cluster_url);
	c->data_url = c->cluster_url = NULL;
	kaas_kvlist_clear(&c->topic_defaults);
	kaas_config_security_free(c);
	kaas_config_authz_free(c);
}
