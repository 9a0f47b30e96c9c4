# src/util (layer 1): crc32c, kaas statuses, pause points, the stderr logger,
# lock-ownership asserts, the metrics registry, a bounded parallel-for.
noinst_LIBRARIES += libkaas_util.a
libkaas_util_a_SOURCES = src/util/crc32c.c src/util/crc32c.h src/util/step.c src/util/step.h \
	src/util/status.c src/util/status.h src/util/logger.h src/util/logger.c \
	src/util/assert_held.c src/util/assert_held.h src/util/fifo.h \
	src/util/lock_rank.c src/util/lock_rank.h \
	src/util/kvlist.c src/util/kvlist.h src/util/grow.h src/util/fnv.h \
	src/util/thread_name.c src/util/thread_name.h \
	src/util/metrics.c src/util/metrics.h src/util/parallel.c src/util/parallel.h
