bin_PROGRAMS += kaasctl
kaasctl_SOURCES = src/tools/kaasctl.c src/tools/kaasctl.h src/tools/kaasctl_common.c \
	src/tools/kaasctl_status.c src/tools/kaasctl_groups.c src/tools/kaasctl_dump.c \
	src/tools/kaasctl_records.c src/tools/kaasctl_records.h src/tools/kaasctl_verify.c \
	src/tools/kaasctl_verify.h src/tools/kaasctl_verify_part.c \
	src/tools/kaasctl_verify_docs.c src/tools/kaasctl_verify_modes.c src/tools/kaasctl_trash.c \
	src/tools/kaasctl_describe.c src/tools/kaasctl_describe.h src/tools/kaasctl_user.c \
	src/tools/kaasctl_acl.c
# Broker commands through the Kafka protocol (issue 39): topic, group, cluster, txn.
kaasctl_SOURCES += src/tools/kaasctl_client.h src/tools/kaasctl_client.c \
	src/tools/kaasctl_client_config.c src/tools/kaasctl_client_sasl.c \
	src/tools/kaasctl_client_tls.c \
	src/tools/kaasctl_admin.h src/tools/kaasctl_admin.c \
	src/tools/kaasctl_admin_errors.c src/tools/kaasctl_admin_meta.c \
	src/tools/kaasctl_admin_topic.c src/tools/kaasctl_admin_group.h \
	src/tools/kaasctl_admin_group.c src/tools/kaasctl_admin_reset.c \
	src/tools/kaasctl_admin_cluster.c src/tools/kaasctl_admin_txn.c \
	src/tools/kaasctl_admin_user.c src/tools/kaasctl_admin_acl.c
kaasctl_LDADD = libkaas_check.a $(KAAS_LIBS) $(KAAS_EXT_LIBS)
