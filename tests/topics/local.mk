# The topic lifecycle (src/broker/topics/) against racing brokers and
# stale views: two registries over one directory.
TOPICS_TESTS = tests/topics/test_topics_lifecycle
check_PROGRAMS += $(TOPICS_TESTS)
TESTS += $(TOPICS_TESTS)
tests_topics_test_topics_lifecycle_SOURCES = tests/topics/test_topics_lifecycle.c
# The topic document's read-modify-write (issue 33): racing writers, a
# revision claimed and never written, a new incarnation; POSIX and fault+.
check_PROGRAMS += tests/topics/test_topic_doc_update
TESTS += tests/topics/test_topic_doc_update
tests_topics_test_topic_doc_update_SOURCES = tests/topics/test_topic_doc_update.c
# Topic configs through an admin client (kafka-python) and raw requests.
TESTS += tests/topics/topic_configs.sh
EXTRA_DIST += tests/topics/topic_configs.sh tests/topics/topic_configs.py
# A compacted topic end to end (issue 21): kafka-python and kcat only,
# over code the sanitizer suite covers in tests/log/test_log_clean.
# compact_tail.sh: a Fetch inside a cleaned gap that reaches the high
# watermark (an empty batch up to it).
if !SANITIZERS
TESTS += tests/topics/compact_e2e.sh
endif
TESTS += tests/topics/compact_tail.sh
EXTRA_DIST += tests/topics/compact_e2e.sh tests/topics/compact_e2e.py tests/topics/compact_tail.sh
# compression.type (issue 33): the broker recompresses batches of another
# codec; three producer codecs into six topic settings, read back whole.
TESTS += tests/topics/compression.sh
EXTRA_DIST += tests/topics/compression.sh
# DeleteTopics while the agent's round is about to reconcile (the named
# step topics.reconcile.before-admin-lock): answered within a few rounds.
TESTS += tests/topics/delete_during_reconcile.sh
EXTRA_DIST += tests/topics/delete_during_reconcile.sh
# compression.type's recompression (every codec into every codec), the
# list edit of APPEND/SUBTRACT and message.format.version (issue 33).
check_PROGRAMS += tests/topics/test_recompress
TESTS += tests/topics/test_recompress
tests_topics_test_recompress_SOURCES = tests/topics/test_recompress.c
