# bench: every benchmark (docs/PERFORMANCE.md).  scripts/bench runs bench.sh,
# the whole picture; log.sh, nfs.sh, faultfs.sh, kernel-nfs.sh and
# failover.sh measure one layer or one event.  Programs built by `make`:
#   kaas-disk-bench   the volume's own limits, through the substrate
#   kaas-kafka-bench  librdkafka produce/consume/end-to-end load
#   kaas-rebalance-bench  librdkafka consumer-group rebalance latency
#   kaas-txn-bench    librdkafka transactional vs idempotent produce
noinst_PROGRAMS += bench/kaas-disk-bench bench/kaas-kafka-bench bench/kaas-rebalance-bench \
	bench/kaas-txn-bench
bench_kaas_disk_bench_SOURCES = bench/disk_bench.c
bench_kaas_disk_bench_LDADD = $(KAAS_LIBS)
bench_kaas_kafka_bench_SOURCES = bench/kafka_bench.c bench/latency.c bench/latency.h
bench_kaas_kafka_bench_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
bench_kaas_kafka_bench_LDADD = $(RDKAFKA_LIBS) $(AX_PTHREAD_LIBS)
bench_kaas_rebalance_bench_SOURCES = bench/rebalance_bench.c
bench_kaas_rebalance_bench_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
bench_kaas_rebalance_bench_LDADD = $(RDKAFKA_LIBS) $(AX_PTHREAD_LIBS)
bench_kaas_txn_bench_SOURCES = bench/txn_bench.c bench/latency.c bench/latency.h
bench_kaas_txn_bench_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
bench_kaas_txn_bench_LDADD = $(RDKAFKA_LIBS)
# Built by `make check` (bench/log.sh and bench/nfs.sh make them on demand):
#   kaas-log-bench    the partition log: group commit, recovery
#   kaas-nfs-bench    write+COMMIT through the libnfs backend vs plain libnfs
check_PROGRAMS += bench/kaas-log-bench
bench_kaas_log_bench_SOURCES = bench/log_bench.c
bench_kaas_log_bench_LDADD = $(KAAS_LIBS)
#   kaas-clean-bench  the log cleaner: pass throughput, produce latency during it
check_PROGRAMS += bench/kaas-clean-bench
bench_kaas_clean_bench_SOURCES = bench/clean_bench.c
bench_kaas_clean_bench_LDADD = libkaaslogtest.a libkaastest.a $(KAAS_LIBS)
if WITH_NFS
check_PROGRAMS += bench/kaas-nfs-bench
bench_kaas_nfs_bench_SOURCES = bench/nfs_bench.c
bench_kaas_nfs_bench_LDADD = $(KAAS_LIBS)
endif
EXTRA_DIST += bench/bench.sh bench/log.sh bench/nfs.sh bench/faultfs.sh bench/kernel-nfs.sh \
	bench/failover.sh bench/scale.sh bench/clean.sh bench/txn.sh bench/readahead.sh
