/*
 * config_wire.h — topic configs as the admin APIs answer them outside
 * DescribeConfigs (api_configs.c).
 */
#ifndef KAAS_KAFKA_CONFIG_WIRE_H
#define KAAS_KAFKA_CONFIG_WIRE_H

struct kaas_kvlist;
struct kaas_kw;

/* CreateTopics v5+: the created topic's configs, every topic key with its
 * value and source given its overrides `topic` and the broker defaults:
 * [name, value, read_only, config_source, is_sensitive, tags]. */
void kaas_wire_created_configs(struct kaas_kw *w, int flex, const struct kaas_kvlist *defaults,
			       const struct kaas_kvlist *topic);

#endif
