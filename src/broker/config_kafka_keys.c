/* config_kafka_keys.c — Kafka broker keys kaas accepts without a meaning
 * of its own (see config_kafka_keys.h). */
#include "broker/config_kafka_keys.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char NO_REPLICATION[] =
	"kaas does not replicate: each partition has one copy, on the shared volume";
static const char NO_QUORUM[] =
	"kaas has no controller quorum: brokers elect a controller through the volume";
static const char NO_ZOOKEEPER[] = "kaas uses no ZooKeeper";
static const char OWN_THREADS[] =
	"kaas sizes its threads itself (--log-io-threads, --produce-threads)";
static const char ONE_DATA_DIR[] = "kaas keeps one data directory and no per-directory pools";
static const char SOCKET_BUFFERS[] = "kaas leaves socket buffers to the kernel's defaults";

static const struct {
	const char *key, *why;
} ignored[] = {
	{ "default.replication.factor", NO_REPLICATION },
	{ "offsets.topic.replication.factor", NO_REPLICATION },
	{ "transaction.state.log.replication.factor", NO_REPLICATION },
	{ "transaction.state.log.min.isr", NO_REPLICATION },
	{ "share.coordinator.state.topic.replication.factor", NO_REPLICATION },
	{ "share.coordinator.state.topic.min.isr", NO_REPLICATION },
	{ "num.replica.fetchers", NO_REPLICATION },
	{ "replica.lag.time.max.ms", NO_REPLICATION },
	{ "replica.fetch.max.bytes", NO_REPLICATION },
	{ "replica.socket.timeout.ms", NO_REPLICATION },
	{ "auto.leader.rebalance.enable", NO_REPLICATION },
	{ "offsets.topic.num.partitions",
	  "kaas keeps group offsets in group documents, not in a topic" },
	{ "transaction.state.log.num.partitions",
	  "kaas keeps transaction state in documents, not in a topic" },
	{ "process.roles", NO_QUORUM },
	{ "controller.quorum.voters", NO_QUORUM },
	{ "controller.quorum.bootstrap.servers", NO_QUORUM },
	{ "controller.listener.names", NO_QUORUM },
	{ "inter.broker.listener.name", "kaas brokers do not talk to each other" },
	{ "zookeeper.connect", NO_ZOOKEEPER },
	{ "zookeeper.connection.timeout.ms", NO_ZOOKEEPER },
	{ "zookeeper.session.timeout.ms", NO_ZOOKEEPER },
	{ "num.network.threads", OWN_THREADS },
	{ "num.io.threads", OWN_THREADS },
	{ "background.threads", OWN_THREADS },
	{ "num.recovery.threads.per.data.dir", ONE_DATA_DIR },
	{ "log.cleaner.threads", OWN_THREADS },
	{ "socket.send.buffer.bytes", SOCKET_BUFFERS },
	{ "socket.receive.buffer.bytes", SOCKET_BUFFERS },
	{ "log.retention.check.interval.ms", "kaas's retention sweep runs on its own schedule" },
	{ "group.coordinator.rebalance.protocols",
	  "kaas serves the classic group protocol" },
};

const char *kaas_config_ignored_kafka_key(const char *key)
{
	assert(key);
	for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		if (strcmp(key, ignored[i].key) == 0)
			return ignored[i].why;
	return NULL;
}

int kaas_config_is_log_dirs(const char *key)
{
	assert(key);
	return strcmp(key, "log.dirs") == 0 || strcmp(key, "log.dir") == 0;
}

int kaas_config_log_dirs_value(const char *key, const char *value)
{
	assert(kaas_config_is_log_dirs(key) && value);
	if (!*value || strchr(value, ',')) {
		fprintf(stderr,
			"kaasd: %s = '%s': kaas keeps a broker's data in one directory (on the "
			"shared volume); give exactly one (or use --data)\n",
			key, value);
		return -EINVAL;
	}
	return 0;
}
