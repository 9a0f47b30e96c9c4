/* config_kafka_keys.h — Kafka's server.properties keys that kaasd accepts
 * although they have no meaning of their own in kaas (layer 5, broker).
 *
 * A Kafka broker's server.properties should start kaasd: the keys kaas
 * implements are taken by config.c under their Kafka names; the keys this
 * file lists are about what kaas does not have (replication, a controller
 * quorum, ZooKeeper, thread pools sized by hand) and are accepted, noted
 * once on stderr as ignored with the reason, never fatal.  `log.dirs` and
 * `log.dir` name the data directory (kaas keeps a broker's data in one
 * place; several directories are refused with a message saying so). */
#ifndef KAAS_BROKER_CONFIG_KAFKA_KEYS_H
#define KAAS_BROKER_CONFIG_KAFKA_KEYS_H

/* Why kaas ignores Kafka broker key `key`, or NULL when it is not such a
 * key.  The string is static. */
const char *kaas_config_ignored_kafka_key(const char *key);

/* 1 if `key` is log.dirs or log.dir (Kafka's data directories), else 0. */
int kaas_config_is_log_dirs(const char *key);

/* The single directory of a log.dirs value: 0 and the value itself, or
 * -EINVAL when it lists more than one directory or none (a message naming
 * the key and the value is printed). */
int kaas_config_log_dirs_value(const char *key, const char *value);

#endif
