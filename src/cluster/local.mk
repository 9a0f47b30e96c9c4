# src/cluster (layer 4, beside the log): the cluster's on-volume stores.
noinst_LIBRARIES += libkaas_stores.a
libkaas_stores_a_SOURCES = src/cluster/producer_ids.c src/cluster/producer_ids.h \
	src/cluster/group_store.c src/cluster/group_store.h src/cluster/topic_store.c \
	src/cluster/topic_store.h src/cluster/topic_doc_update.c
libkaas_stores_a_SOURCES += src/cluster/membership.c src/cluster/membership.h \
	src/cluster/assignment.c src/cluster/assignment.h src/cluster/partition_entry.h \
	src/cluster/acl_store.c src/cluster/acl_store.h
# Client quotas (issue 35).
libkaas_stores_a_SOURCES += src/cluster/quota_store.c src/cluster/quota_store.h
libkaas_stores_a_SOURCES += src/cluster/txn_store.c src/cluster/txn_store.h \
	src/cluster/txn_offsets_store.c
# SASL credentials (issue 17): SCRAM keys over libcrypto, their documents.
libkaas_stores_a_SOURCES += src/cluster/scram.c src/cluster/scram.h \
	src/cluster/credential_store.c src/cluster/credential_store.h
