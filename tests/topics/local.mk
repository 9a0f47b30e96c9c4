# The topic lifecycle (src/broker/topics/) against racing brokers and
# stale views: two registries over one directory.
TOPICS_TESTS = tests/topics/test_topics_lifecycle
check_PROGRAMS += $(TOPICS_TESTS)
TESTS += $(TOPICS_TESTS)
tests_topics_test_topics_lifecycle_SOURCES = tests/topics/test_topics_lifecycle.c
# Topic configs through an admin client (kafka-python) and raw requests.
TESTS += tests/topics/topic_configs.sh
EXTRA_DIST += tests/topics/topic_configs.sh tests/topics/topic_configs.py
