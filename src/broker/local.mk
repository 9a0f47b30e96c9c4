# src/broker: the broker — config, logging, topics registry, the network loop, kaasd.
libkaas_a_SOURCES += src/util/logger.h src/util/logger.c src/broker/config.h \
	src/broker/config.c src/broker/topics.h src/broker/topics.c src/broker/broker.h \
	src/broker/server.c src/broker/worker.h src/broker/worker.c src/broker/agent.h \
	src/broker/agent.c src/broker/sweep.h src/broker/sweep.c
bin_PROGRAMS += kaasd
kaasd_SOURCES = src/broker/main.c
kaasd_LDADD = $(KAAS_LIBS)
libkaas_a_SOURCES += src/broker/groups.h src/broker/groups.c src/broker/group_offsets.c \
	src/broker/idempotence.h src/broker/idempotence.c
