# tests/peer: Apache Kafka beside kaas (issue 34).  Kafka is fetched from
# Maven Central by scripts/peer-kafka (cached outside the tree).  The normal
# suite only: a JVM beside the sanitizer build would add time, not coverage.
if !SANITIZERS
TESTS += tests/peer/differential.sh
endif
EXTRA_DIST += tests/peer/differential.sh tests/peer/differ.py tests/peer/peer-lib.sh
