# tests/security: listeners and TLS (issue 17) with kcat, openssl and python3.
check_PROGRAMS += tests/security/test_broker_listeners
tests_security_test_broker_listeners_SOURCES = tests/security/test_broker_listeners.c
tests_security_test_broker_listeners_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/security/test_authz
tests_security_test_authz_SOURCES = tests/security/test_authz.c
tests_security_test_authz_LDADD = $(TEST_LIBS)
SECURITY_TESTS = tests/security/config_errors.sh tests/security/tls_roundtrip.sh \
	tests/security/acl_matrix.sh \
	tests/security/tls_client_auth.sh tests/security/tls_plaintext_client.sh \
	tests/security/listeners_two.sh tests/security/listeners_brokers.sh tests/security/tls_reload.sh \
	tests/security/tls_half_open.sh
# SASL (issue 17): the exchange byte by byte in both suites; the client
# tests (kcat, confluent-kafka) in the normal suite only.
SECURITY_TESTS += tests/security/sasl_wire.sh
if !SANITIZERS
SECURITY_TESTS += tests/security/sasl_kcat.sh tests/security/sasl_confluent.sh \
	tests/security/sasl_kafka_python.sh
endif
# Issue 35: the hostile-load suite (hostile.py: each attack and its bound),
# TLS suites and resumption, the secrets' modes; in both suites (the
# ceilings leave room for the sanitizer build on a loaded 2-core machine).
SECURITY_TESTS += tests/security/hostile_plain_stall.sh tests/security/hostile_prelogin_memory.sh \
	tests/security/hostile_idle_trickle.sh tests/security/hostile_conn_flood.sh \
	tests/security/hostile_auth_delay.sh tests/security/hostile_log_flood.sh \
	tests/security/tls_suites_resume.sh tests/security/secret_modes.sh
# Client quotas (issue 35): the APIs, a producer held to its rate beside
# an unquota'd one and a throttled consumer muted (about 20 s), and a quota
# followed by a second broker; in both suites.
SECURITY_TESTS += tests/security/quota_wire.sh tests/security/quota_rate.sh \
	tests/security/quota_follow.sh
# ... and kafka-configs (Kafka's jars from the peer-kafka cache; skipped
# without them), in the normal suite only (a JVM per call).
if !SANITIZERS
SECURITY_TESTS += tests/security/quota_kafka_configs.sh
endif
TESTS += tests/security/test_broker_listeners tests/security/test_authz $(SECURITY_TESTS)
EXTRA_DIST += tests/security/tls-lib.sh $(SECURITY_TESTS) tests/security/sasl_wire.py \
	tests/security/sasl_confluent.py tests/security/sasl_kcat.sh tests/security/sasl_confluent.sh \
	tests/security/acl_matrix.py tests/security/sasl_kafka_python.sh tests/security/sasl_kafka_python.py \
	tests/security/hostile.py tests/security/quotas.py tests/security/quota_kafka_configs.sh
