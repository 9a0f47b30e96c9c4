# src/broker (layer 5): the broker's services — config, topics registry, the
# cluster agent, the produce lanes, the sweep, groups, idempotence.
noinst_LIBRARIES += libkaas_broker.a
libkaas_broker_a_SOURCES = src/broker/config.h \
	src/broker/config.c src/broker/config_listeners.c \
	src/broker/config_kafka_keys.h src/broker/config_kafka_keys.c src/broker/topics.h src/broker/broker.h \
	src/broker/lanes.h src/broker/lanes.c src/broker/agent.h src/broker/agent_internal.h src/broker/agent_view.c \
	src/broker/agent.c src/broker/agent_metrics.c src/broker/sweep.h src/broker/sweep.c
libkaas_broker_a_SOURCES += src/broker/topics/internal.h src/broker/topics/registry.c \
	src/broker/topics/partitions.c src/broker/topics/removal.c src/broker/topics/admin.c \
	src/broker/topics/reconcile.c src/broker/topics/load.c src/broker/topics/config.c
libkaas_broker_a_SOURCES += src/broker/topic_config.h src/broker/topic_config.c
libkaas_broker_a_SOURCES += src/broker/groups/groups.h src/broker/groups/internal.h \
	src/broker/groups/coordinator.c src/broker/groups/rebalance.c \
	src/broker/groups/membership.c src/broker/groups/offsets.c src/broker/groups/queries.c src/broker/groups/lag.c \
	src/broker/groups/discover.c \
	src/broker/idempotence.h src/broker/idempotence.c \
	src/broker/authorizer.h src/broker/authorizer.c
libkaas_broker_a_SOURCES += src/broker/txn/txn.h src/broker/txn/internal.h \
	src/broker/txn/coordinator.c src/broker/txn/driver.c src/broker/txn/markers.c \
	src/broker/txn/verify.h src/broker/txn/verify.c \
	src/broker/groups/txn_offsets.c
# SASL credentials cache (issue 17).
libkaas_broker_a_SOURCES += src/broker/credentials.h src/broker/credentials.c
# Client quotas: their cache and the measured rates (issue 35).
libkaas_broker_a_SOURCES += src/broker/quotas.h src/broker/quotas.c
