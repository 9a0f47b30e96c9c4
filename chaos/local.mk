# chaos/: the clients and the checker of scripts/chaos (chaos runs: brokers
# on faultfs, an idempotent producer, a seeded nemesis, a checker).
noinst_PROGRAMS += chaos/chaos_client chaos/chaos_check chaos/chaos_txn
chaos_chaos_txn_SOURCES = chaos/chaos_txn.c
chaos_chaos_txn_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
chaos_chaos_txn_LDADD = $(RDKAFKA_LIBS)
chaos_chaos_client_SOURCES = chaos/chaos_client.c
chaos_chaos_client_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
chaos_chaos_client_LDADD = $(RDKAFKA_LIBS)
chaos_chaos_check_SOURCES = chaos/chaos_check.c chaos/chaos_check.h chaos/chaos_kv.c
chaos_chaos_check_LDADD =
