# src/broker: the broker — config, logging, topics registry, the network loop, kaasd.
libkaas_a_SOURCES += src/broker/logging.h src/broker/logging.c src/broker/config.h \
	src/broker/config.c src/broker/topics.h src/broker/broker.h \
	src/broker/server.c src/broker/worker.h src/broker/worker.c src/broker/cluster.h \
	src/broker/cluster.c src/broker/sweep.h src/broker/sweep.c
libkaas_a_SOURCES += src/broker/topics/internal.h src/broker/topics/registry.c \
	src/broker/topics/partitions.c src/broker/topics/removal.c src/broker/topics/admin.c \
	src/broker/topics/reconcile.c src/broker/topics/load.c
bin_PROGRAMS += kaasd
kaasd_SOURCES = src/broker/main.c
kaasd_LDADD = $(KAAS_LIBS)
libkaas_a_SOURCES += src/broker/groups/groups.h src/broker/groups/internal.h \
	src/broker/groups/coordinator.c src/broker/groups/rebalance.c \
	src/broker/groups/membership.c src/broker/groups/offsets.c src/broker/groups/queries.c \
	src/broker/idempotence.h src/broker/idempotence.c
