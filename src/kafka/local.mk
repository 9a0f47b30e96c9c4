# src/kafka (layer 6): the Kafka wire protocol — codec, record-batch validation,
# API handlers, the status map; the request seam the server implements.
noinst_LIBRARIES += libkaas_kafka.a
libkaas_kafka_a_SOURCES = src/kafka/codec.h src/kafka/codec.c src/kafka/protocol.h \
	src/kafka/header.h src/kafka/header.c src/kafka/api_table.c \
	src/kafka/wire_topics.h src/kafka/wire_topics.c src/kafka/batch.h src/kafka/batch.c \
	src/kafka/decompress.c src/kafka/recompress.c src/kafka/batch_time.c src/kafka/request.h src/kafka/api_versions.c \
	src/kafka/api_metadata.c src/kafka/api_produce.c src/kafka/api_fetch.c \
	src/kafka/api_list_offsets.c src/kafka/api_admin.c \
	src/kafka/fetch_session.h src/kafka/fetch_session.c \
	src/kafka/status_map.h src/kafka/status_map.c
libkaas_kafka_a_SOURCES += src/kafka/api_group_admin.c src/kafka/api_init_producer_id.c \
	src/kafka/group_wire.h src/kafka/group_wire.c src/kafka/api_group_membership.c \
	src/kafka/api_group_offsets.c
libkaas_kafka_a_SOURCES += src/kafka/api_configs.c
libkaas_kafka_a_SOURCES += src/kafka/api_group_delete.c
# Transactions (issue 16, the coordinator side).
libkaas_kafka_a_SOURCES += src/kafka/txn_wire.h src/kafka/api_txn.c src/kafka/api_txn_admin.c \
	src/kafka/api_txn_offsets.c src/kafka/txn_markers_api.h src/kafka/api_write_txn_markers.c
# Connection security (issue 17): the per-connection state and the authorizer hook.
libkaas_kafka_a_SOURCES += src/kafka/security.h src/kafka/security.c
# SASL authentication and SCRAM credentials (issue 17).
libkaas_kafka_a_SOURCES += src/kafka/sasl.h src/kafka/sasl.c src/kafka/api_sasl.c \
	src/kafka/api_scram_users.c
libkaas_kafka_a_SOURCES += src/kafka/authz.h src/kafka/authz.c src/kafka/authz_table.c \
	src/kafka/api_acls.c
# Produce and Fetch outcomes as metrics (issue 18).
libkaas_kafka_a_SOURCES += src/kafka/req_metrics.h src/kafka/req_metrics.c
# Client quotas (issue 35): their APIs and the throttle of a request.
libkaas_kafka_a_SOURCES += src/kafka/api_client_quotas.c src/kafka/throttle.h src/kafka/throttle.c
# issue 15: the admin APIs (DescribeCluster, DescribeLogDirs, DeleteRecords,
# OffsetForLeaderEpoch, DescribeProducers, DescribeTopicPartitions).
libkaas_kafka_a_SOURCES += src/kafka/wire_cluster.h src/kafka/wire_cluster.c src/kafka/config_wire.h \
	src/kafka/api_cluster.c src/kafka/api_partition_admin.c src/kafka/api_describe_topics.c
