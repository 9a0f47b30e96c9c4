# tests/kafka: the Kafka wire protocol and kaasd with real clients.
check_PROGRAMS += tests/kafka/test_codec tests/kafka/rdkafka_client tests/kafka/rawclient
check_PROGRAMS += tests/kafka/test_fetch_session
tests_kafka_test_fetch_session_SOURCES = tests/kafka/test_fetch_session.c
tests_kafka_test_fetch_session_CFLAGS = $(TEST_CFLAGS)
tests_kafka_test_fetch_session_LDADD = $(TEST_LIBS)
tests_kafka_test_codec_SOURCES = tests/kafka/test_codec.c
tests_kafka_test_codec_CFLAGS = $(TEST_CFLAGS)
tests_kafka_test_codec_LDADD = $(TEST_LIBS)
tests_kafka_rdkafka_client_SOURCES = tests/kafka/rdkafka_client.c
tests_kafka_rdkafka_client_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_kafka_rdkafka_client_LDADD = $(RDKAFKA_LIBS)
tests_kafka_rawclient_SOURCES = tests/kafka/rawclient.c tests/kafka/rawclient.h \
	tests/kafka/rawclient_fetch_bounds.c tests/kafka/rawclient_time_offsets.c \
	tests/kafka/rawclient_old_versions.c tests/kafka/rawclient_txn.c \
	tests/kafka/rawclient_isolation.c
tests_kafka_rawclient_LDADD = $(TEST_LIBS) -lpthread

TESTS += tests/kafka/test_fetch_session
TESTS += tests/kafka/test_codec tests/kafka/kcat_roundtrip.sh tests/kafka/restart.sh \
	tests/kafka/rdkafka_client.sh tests/kafka/bad_input.sh \
	tests/kafka/config_topics.sh tests/kafka/full_volume.sh tests/kafka/fetch_max_bytes.sh \
	tests/kafka/list_offsets_time.sh tests/kafka/estale_produce.sh tests/kafka/sweep_temps.sh \
	tests/kafka/old_versions.sh tests/kafka/api_versions_wire.sh tests/kafka/api_versions_readme.sh \
	tests/kafka/rdkafka_flexible.sh tests/kafka/txn_lso.sh tests/kafka/produce_isolation.sh tests/kafka/fetch_sessions.sh \
	tests/kafka/large_frames.sh tests/kafka/server_properties.sh tests/kafka/early_stop.sh
# A client library pinned to old versions: a compatibility check, in the
# normal suite (the sanitizer suite decodes every version with
# api_versions_wire.sh).
if !SANITIZERS
TESTS += tests/kafka/kafka_python_versions.sh
# The admin clients of kafka-python and confluent-kafka (issue 15).
TESTS += tests/kafka/admin_clients.sh
endif
# A lost reply on a fence claim's exclusive create (issue 33, defect 6): one
# broker on fault+, and two on faultfs with the controller on the other.
TESTS += tests/kafka/fence_lost_reply.sh tests/multibroker/lost_epoch.sh
EXTRA_DIST += tests/kafka/fence_lost_reply.sh tests/multibroker/lost_epoch.sh
EXTRA_DIST += tests/kafka/txn_lso.sh tests/kafka/produce_isolation.sh
EXTRA_DIST += tests/kafka/fetch_sessions.sh tests/kafka/fetch_sessions.py
EXTRA_DIST += tests/kafka/large_frames.sh tests/kafka/large_frames.py tests/kafka/server_properties.sh tests/kafka/early_stop.sh
EXTRA_DIST += tests/kafka/kaasd-lib.sh tests/kafka/kcat_roundtrip.sh tests/kafka/restart.sh \
	tests/kafka/rdkafka_client.sh tests/kafka/bad_input.sh \
	tests/kafka/config_topics.sh tests/kafka/full_volume.sh tests/kafka/fetch_max_bytes.sh \
	tests/kafka/list_offsets_time.sh tests/kafka/estale_produce.sh tests/kafka/sweep_temps.sh \
	tests/kafka/old_versions.sh tests/kafka/api_versions_wire.sh tests/kafka/api_versions_readme.sh \
	tests/kafka/kafka_python_versions.sh tests/kafka/rdkafka_flexible.sh tests/kafka/api_versions_wire.py tests/kafka/kafka_schema.py \
	tests/kafka/kafka_messages.py tests/kafka/kafka_python_versions.py
EXTRA_DIST += tests/kafka/admin_clients.sh tests/kafka/admin_clients.py \
	tests/kafka/api_admin_wire.py

# The request-decoder fuzz target: replayed over its seed corpus in make
# check; tests/kafka/fuzz.sh [SECONDS] builds and runs the libFuzzer binary (clang).
check_PROGRAMS += tests/kafka/fuzz_replay
tests_kafka_fuzz_replay_SOURCES = tests/kafka/fuzz_request.c
tests_kafka_fuzz_replay_CPPFLAGS = $(AM_CPPFLAGS) -DKAAS_FUZZ_REPLAY -I$(top_srcdir)/tests/support
tests_kafka_fuzz_replay_LDADD = $(TEST_LIBS)
TESTS += tests/kafka/fuzz_replay.sh
EXTRA_DIST += tests/kafka/fuzz_replay.sh tests/kafka/fuzz.sh tests/kafka/fuzz-corpus
