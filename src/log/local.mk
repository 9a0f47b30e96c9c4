# src/log (layer 4): the partition log engine (issue 3).
noinst_LIBRARIES += libkaas_log.a
libkaas_log_a_SOURCES = src/log/log.h src/log/log_internal.h src/log/batch.c src/log/segment.c \
	src/log/producer.c src/log/manifest.c src/log/log_open.c src/log/log_recover.c \
	src/log/log_state.c src/log/log_write.c src/log/log_pool.c src/log/log_files.c \
	src/log/log_read.c src/log/log_retention.c src/log/log_metrics.c \
	src/log/log_txn.c src/log/log_clean.h src/log/log_clean.c src/log/log_clean_map.c
# Read-only inspection for tools (kaasctl).
libkaas_log_a_SOURCES += src/log/log_inspect.h src/log/log_inspect.c
# What the admin APIs ask of a log (issue 15): epoch end offsets, sizes, producers.
libkaas_log_a_SOURCES += src/log/log_describe.c
