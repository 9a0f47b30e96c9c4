# bench: the programs behind scripts/bench (issue 10), built by `make`.
#   kaas-disk-bench   the volume's own limits, through the substrate
#   kaas-kafka-bench  librdkafka produce/consume/end-to-end load
#   kaas-rebalance-bench  librdkafka consumer-group rebalance latency
noinst_PROGRAMS += bench/kaas-disk-bench bench/kaas-kafka-bench bench/kaas-rebalance-bench
bench_kaas_disk_bench_SOURCES = bench/disk_bench.c
bench_kaas_disk_bench_LDADD = $(KAAS_LIBS)
bench_kaas_kafka_bench_SOURCES = bench/kafka_bench.c
bench_kaas_kafka_bench_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
bench_kaas_kafka_bench_LDADD = $(RDKAFKA_LIBS) $(AX_PTHREAD_LIBS)
bench_kaas_rebalance_bench_SOURCES = bench/rebalance_bench.c
bench_kaas_rebalance_bench_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
bench_kaas_rebalance_bench_LDADD = $(RDKAFKA_LIBS) $(AX_PTHREAD_LIBS)
